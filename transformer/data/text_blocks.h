// A language model of one text file, as nanoGPT trains one: the file is one long stream of tokens,
// not a list of sentences. Its last tenth is held out for validation (a contiguous tail, as
// nanoGPT's train/val split); each training batch is batch_size blocks of context + 1 consecutive
// tokens taken at random places of the first nine tenths, and a block teaches every position
// at once:
//   block   = tokens[s, s + context]        (context + 1 tokens, s drawn uniformly)
//   inputs  = block[:-1]                    [B, context]
//   targets = block[1:]                     [B, context]   (position t predicts token t + 1)
// No <s> or </s> around a block: it is a window into running text, which goes on before and after.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tensor/random.h"
#include "transformer/data/lm_batch.h"
#include "transformer/data/tokenizer.h"

namespace gradformer {

/// The whole file as bytes. DataError "path: cannot open for reading: ..." for a missing file,
/// "path: the file is empty ..." for an empty one; with `utf8` (byte-pair encoding reads text, not
/// bytes), "path: not UTF-8 text: byte 0xHH at offset N ..." naming the first bad byte.
std::string read_text_file(const std::string& path, bool utf8);

/// Where the held-out tail begins: at 90% of the bytes (nanoGPT's split), moved forward to the
/// first byte of a UTF-8 character so that no character is cut in two. The split is made on the
/// bytes, before tokenizing, because a byte-pair encoding is learned on the training part alone.
size_t held_out_start(std::string_view text);

/// The two parts' tokens.
struct TextTokens {
  std::vector<int64_t> train, valid;
};
/// Encodes text[:held_out_start] and text[held_out_start:] with `tokenizer`. DataError naming
/// `source` and both counts when the training part has fewer than context + 1 tokens (one
/// training block) or the held-out tail fewer than 2 (one token read, one predicted).
TextTokens split_text(std::string_view text, const Tokenizer& tokenizer, int64_t context, const std::string& source);

/// Consecutive blocks over `tokens` for evaluation, `blocks_per_batch` to a batch (one batch's
/// logits are blocks x context x vocabulary numbers): block i is
/// tokens[i * context, i * context + context] (the last one shorter, padded), so blocks overlap by
/// one token and every token but the first is predicted exactly once, from the tokens before it in
/// its block. Deterministic: no randomness, the same numbers every time. ValueError for fewer than 2
/// tokens, a context or blocks_per_batch below 1. `pad`: LmBatch::pad, lm_pad(tokenizer).
std::vector<LmBatch> text_eval_batches(const std::vector<int64_t>& tokens, int64_t context,
                                       int64_t blocks_per_batch = 16, int64_t pad = Vocab::pad);

/// The pad of a tokenizer's batches (LmBatch::pad): <pad> when it has one in front of its tokens
/// (this library's), kNoToken when every id is a token (GPT-2's, a hub one).
int64_t lm_pad(const Tokenizer& tokenizer);

/// The bytes the predicted tokens (all but the first) stand for: the denominator of bits per byte.
int64_t predicted_bytes(const std::vector<int64_t>& tokens, const Tokenizer& tokenizer);

/// Text on one line, for a progress report: a line end shown as ⏎, a tab as \t, another control
/// character, and a byte that is not part of a valid UTF-8 character (half of one, cut by a
/// byte-level model), as \xHH; the result is always UTF-8.
std::string one_line(std::string_view text);

/// The training batches: batch_size random blocks of the training tokens, the starts drawn with
/// Generator(seed, 4). An epoch is the training tokens over batch_size x context (at least one batch).
class RandomTextBlocks : public LmStream {
 public:
  /// ValueError if the tokens are fewer than context + 1.
  RandomTextBlocks(std::vector<int64_t> tokens, int64_t context, int64_t batch_size, uint64_t seed);
  int64_t batches_per_epoch() const;
  int64_t batches_drawn() const { return drawn_; }
  LmBatch next() override;
  /// data.generator, data.batches (drawn so far) and data.train_tokens; restoring refuses a text
  /// of another length (CheckpointError: the file changed since the checkpoint).
  std::map<std::string, std::string> state() const override;
  void restore(const std::map<std::string, std::string>& state, const std::string& source) override;

 private:
  std::vector<int64_t> tokens_;
  int64_t context_, batch_size_;
  Generator gen_;
  int64_t drawn_ = 0;
};

}  // namespace gradformer
