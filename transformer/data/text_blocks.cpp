#include "transformer/data/text_blocks.h"

#include <algorithm>
#include <cstdio>

#include "tensor/support/profiler.h"
#include "tensor/support/saved_state.h"
#include "tensor/support/utf8.h"
#include "transformer/data/data_error.h"
#include "transformer/data/line_reader.h"

namespace gradformer {

std::string read_text_file(const std::string& path, bool utf8) {
  std::string text = read_whole_file(path);
  if (text.empty()) throw DataError(message(path, ": the file is empty: a language model needs text to learn from"));
  if (utf8) {
    if (const auto at = invalid_utf8_at(text)) {
      char byte[8];
      std::snprintf(byte, sizeof byte, "0x%02X", static_cast<unsigned>(static_cast<unsigned char>(text[*at])));
      throw DataError(message(path, ": not UTF-8 text: byte ", byte, " at offset ", *at,
                              " does not start a valid character; byte-pair encoding reads UTF-8 text (the bytes "
                              "tokenizer reads any file)"));
    }
  }
  return text;
}

size_t held_out_start(std::string_view text) {
  size_t cut = text.size() - text.size() / 10;  // the last tenth (rounded down) is held out
  // A continuation byte 10xxxxxx is inside a character: move to the next character's first byte.
  while (cut < text.size() && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) ++cut;
  return cut;
}

TextTokens split_text(std::string_view text, const Tokenizer& tokenizer, int64_t context, const std::string& source) {
  const size_t cut = held_out_start(text);
  TextTokens out{tokenizer.encode(text.substr(0, cut)), tokenizer.encode(text.substr(cut))};
  const auto train = static_cast<int64_t>(out.train.size()), valid = static_cast<int64_t>(out.valid.size());
  if (train < context + 1 || valid < 2) {
    // With n tokens in all, about 9n/10 train: one block of context + 1 needs n >= 10 (context + 1) / 9,
    // and the two parts together at least context + 1 + 2.
    const int64_t needed = std::max<int64_t>((10 * (context + 1) + 8) / 9, context + 3);
    throw DataError(message(source, ": too short for a language model with context ", context, ": the ",
                            tokenizer.kind_name(), " tokenizer makes ", train + valid, " tokens of it, ", train,
                            " in the training part (the first 90% of the bytes) and ", valid,
                            " in the held-out tail; one training block needs context + 1 = ", context + 1,
                            " tokens and the tail at least 2, so about ", needed,
                            " tokens in all: give a longer file or a smaller context"));
  }
  return out;
}

std::vector<LmBatch> text_eval_batches(const std::vector<int64_t>& tokens, int64_t context, int64_t blocks_per_batch,
                                       int64_t pad) {
  const auto n = static_cast<int64_t>(tokens.size());
  if (n < 2 || context < 1 || blocks_per_batch < 1)
    throw ValueError(message("text_eval_batches: needs 2 tokens or more, a context and blocks per batch of 1 or more; ",
                             "got ", n, " tokens, context ", context, ", ", blocks_per_batch, " blocks per batch"));
  std::vector<LmSequence> blocks;
  for (int64_t start = 0; start + 1 < n; start += context) {
    const int64_t end = std::min(n, start + context + 1);
    blocks.push_back(scored_from({tokens.begin() + start, tokens.begin() + end}));  // all but the first predicted
  }
  return lm_batches(blocks, blocks_per_batch, pad);
}

int64_t lm_pad(const Tokenizer& tokenizer) { return tokenizer.has_vocab() ? Vocab::pad : kNoToken; }

int64_t predicted_bytes(const std::vector<int64_t>& tokens, const Tokenizer& tokenizer) {
  int64_t bytes = 0;
  for (size_t i = 1; i < tokens.size(); ++i) bytes += tokenizer.byte_length(tokens[i]);
  return bytes;
}

std::string one_line(std::string_view text) {
  std::string out;
  auto escape = [&](unsigned char byte) {
    char escaped[8];
    std::snprintf(escaped, sizeof escaped, "\\x%02X", static_cast<unsigned>(byte));
    out += escaped;
  };
  for (size_t i = 0; i < text.size();) {
    const auto u = static_cast<unsigned char>(text[i]);
    if (u >= 0x80) {
      // A whole valid character as it is; a byte that starts none (half a character) escaped.
      const size_t length = u >= 0xF0 ? 4 : u >= 0xE0 ? 3 : 2;
      if (i + length <= text.size() && !invalid_utf8_at(text.substr(i, length))) {
        out += text.substr(i, length), i += length;
      } else {
        escape(u), ++i;
      }
      continue;
    }
    if (u == '\n')
      out += "⏎";
    else if (u == '\t')
      out += "\\t";
    else if (u < 0x20 || u == 0x7F)
      escape(u);
    else
      out += static_cast<char>(u);
    ++i;
  }
  return out;
}

RandomTextBlocks::RandomTextBlocks(std::vector<int64_t> tokens, int64_t context, int64_t batch_size, uint64_t seed)
    : tokens_(std::move(tokens)), context_(context), batch_size_(batch_size), gen_(seed, 4) {
  if (context < 1 || batch_size < 1 || static_cast<int64_t>(tokens_.size()) < context + 1)
    throw ValueError(message("RandomTextBlocks: ", tokens_.size(), " tokens, context ", context, ", batch size ",
                             batch_size, ": needs context and batch size of 1 or more and context + 1 tokens"));
}

int64_t RandomTextBlocks::batches_per_epoch() const {
  return std::max<int64_t>(1, static_cast<int64_t>(tokens_.size()) / (batch_size_ * context_));
}

LmBatch RandomTextBlocks::next() {
  const profiler::Scope event("text blocks", profiler::Phase::Data);
  const int64_t B = batch_size_, T = context_;
  std::vector<int64_t> inputs(static_cast<size_t>(B * T)), targets(inputs.size());
  for (int64_t b = 0; b < B; ++b) {
    // A block of T + 1 tokens starting anywhere it fits: s in [0, n - T - 1].
    const int64_t start = gen_.integer(0, static_cast<int64_t>(tokens_.size()) - T);
    const auto block = tokens_.begin() + start;
    std::copy(block, block + T, inputs.begin() + b * T);           // block[:-1]
    std::copy(block + 1, block + T + 1, targets.begin() + b * T);  // block[1:]
  }
  ++drawn_;
  return {from_vector(inputs, {B, T}), from_vector(targets, {B, T}), B * T};
}

std::map<std::string, std::string> RandomTextBlocks::state() const {
  return {{"data.generator", generator_state_text(gen_)},
          {"data.batches", std::to_string(drawn_)},
          {"data.train_tokens", std::to_string(tokens_.size())}};
}

void RandomTextBlocks::restore(const std::map<std::string, std::string>& state, const std::string& source) {
  const SavedState saved(state, source);
  const int64_t tokens = saved.integer("data.train_tokens");
  if (tokens != static_cast<int64_t>(tokens_.size()))
    throw CheckpointError(message(source, ": the run trained on ", tokens, " tokens, the text now has ", tokens_.size(),
                                  " in its training part: the file changed since the checkpoint"));
  restore_generator(gen_, saved.text("data.generator"), source);
  drawn_ = saved.integer("data.batches");
}

}  // namespace gradformer
