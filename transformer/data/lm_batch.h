// Data for a causal language model (the decoder-only model): sequences "<s> w_1 ... w_n </s>",
// the shift that makes inputs and targets of a batch, and where the training batches come from.
//
// GPT (Radford et al., 2018, section 3.1): "Given an unsupervised corpus of tokens U = {u_1, ..., u_n},
// we use a standard language modeling objective to maximize the following likelihood:
//   L_1(U) = sum_i log P(u_i | u_{i-k}, ..., u_{i-1}; Θ)"
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tensor/random.h"
#include "tensor/tensor.h"
#include "transformer/data/batch_stream.h"
#include "transformer/data/vocab.h"

namespace gradformer {

/// One sequence for the language model (a sentence's with <s> first and </s> last, a block of text's,
/// a conversation as its template writes it); the loss counts the prediction of tokens[i] where
/// scored[i] (a sentence: every token after <s>; a translation: the target's; a conversation: the
/// assistant's answers and their end-of-turn). scored[0] is never counted: nothing predicts it.
struct LmSequence {
  std::vector<int64_t> tokens;
  std::vector<bool> scored;  // as many as tokens
};

/// inputs [B, L-1] and targets [B, L-1] int64; targets are `pad` where nothing is scored.
struct LmBatch {
  Tensor inputs, targets;
  int64_t ntokens = 0;  // scored targets
  /// What padding and unscored targets hold: <pad> for this library's tokenizers, kNoToken for one
  /// whose every id is a token (GPT-2's, a hub one). Inputs are then padded with id 0, a real token,
  /// but after the sequence's end, where causal attention never lets a real position see it.
  int64_t pad = Vocab::pad;
};

/// The pad of a tokenizer whose every id is a token: no id at all.
inline constexpr int64_t kNoToken = -1;

/// The tokens with tokens[i] scored for every i >= first_scored (1: all but the first, as in plain text).
LmSequence scored_from(std::vector<int64_t> tokens, int64_t first_scored = 1);
/// "<s> words </s>", every token after <s> scored.
LmSequence sentence_sequence(const std::vector<int64_t>& words);
/// "<s> source <sep> target </s>", scored from the first target token on.
LmSequence translation_sequence(const std::vector<int64_t>& source, const std::vector<int64_t>& target, int64_t sep);

/// Pads sequences[indices] into tokens [B, L] and makes the shift of causal language modelling:
/// inputs = tokens[:, :-1], targets = tokens[:, 1:] (position t predicts token t + 1). `pad`:
/// LmBatch::pad (lm_pad says which a tokenizer takes): <pad> fills both; kNoToken fills the targets,
/// and the inputs with id 0.
LmBatch make_lm_batch(const std::vector<LmSequence>& sequences, const std::vector<int64_t>& indices,
                      int64_t pad = Vocab::pad);
/// The sequences in order, `size` to a batch (evaluation).
std::vector<LmBatch> lm_batches(const std::vector<LmSequence>& sequences, int64_t size, int64_t pad = Vocab::pad);

/// Where a language model's training batches come from, with a position a checkpoint keeps.
class LmStream : public Resumable {
 public:
  virtual LmBatch next() = 0;
};

/// toy-lm: batch_size fresh French sentences of the toy grammar per batch, drawn as the copy task draws.
class FreshToySentences : public LmStream {
 public:
  FreshToySentences(const Vocab& vocab, int64_t batch_size, uint64_t seed);
  LmBatch next() override;
  std::map<std::string, std::string> state() const override;
  void restore(const std::map<std::string, std::string>& state, const std::string& source) override;

 private:
  const Vocab& vocab_;
  int64_t batch_size_;
  Generator gen_;
};

/// Epochs over a list of sequences, each epoch shuffled (Fisher-Yates) by the generator.
class LmEpochs : public LmStream {
 public:
  /// `pad`: the batches' LmBatch::pad.
  LmEpochs(std::vector<LmSequence> sequences, int64_t batch_size, uint64_t seed, int64_t pad = Vocab::pad);
  int64_t batches_per_epoch() const;
  LmBatch next() override;
  std::map<std::string, std::string> state() const override;
  void restore(const std::map<std::string, std::string>& state, const std::string& source) override;

 private:
  void shuffle();
  std::vector<LmSequence> sequences_;
  int64_t batch_size_;
  int64_t pad_;
  Generator gen_;
  std::array<uint64_t, 2> epoch_start_{};  // the generator before this epoch's shuffle
  std::vector<int64_t> order_;
  int64_t epoch_ = 0, position_ = 0;
};

}  // namespace gradformer
