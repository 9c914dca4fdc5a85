// A GPT-2 in miniature for the tests of generation and tracing: GPT-2's architecture (decoder-only,
// pre-LN, learned positions, GELU's tanh form, no sqrt(d) on the embedding, output tied to it) at a
// tiny size, and a tokenizer in GPT-2's format (Tokenizer::gpt2: no specials in front): the 256
// bytes, a few merges, and <|endoftext|> as its last token, an ordinary token as in GPT-2's.
#pragma once

#include <string>
#include <vector>

#include "transformer/data/tokenizer.h"
#include "transformer/model/decoder_only.h"
#include "transformer/store/checkpoint.h"

namespace gradformer::tiny_gpt2 {

/// 256 bytes (id = byte value), then "th", "the", " the", "is", " is", then <|endoftext|>: 262 tokens.
inline Tokenizer tokenizer() {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.emplace_back(1, static_cast<char>(b));
  const std::vector<BytePairEncoding::Merge> merges{{"t", "h"}, {"th", "e"}, {" ", "the"}, {"i", "s"}, {" ", "is"}};
  for (const auto& [left, right] : merges) tokens.push_back(left + right);
  tokens.emplace_back("<|endoftext|>");
  return Tokenizer::gpt2(BytePairEncoding(tokens, merges));
}

/// GPT-2 small's recipe (gpt2_small_config) with its sizes cut down: d 16, 4 heads, 2 layers, d_ff 64,
/// a context of `context` tokens.
inline TransformerConfig config(int64_t vocab, int64_t context = 16) {
  TransformerConfig c = gpt2_small_config();
  c.src_vocab = c.tgt_vocab = vocab;
  c.d_model = 16, c.heads = 4, c.layers = 2, c.d_ff = 64, c.max_len = context, c.dropout = 0;
  return c;
}

/// Makes <|endoftext|> the most likely next token after any prefix: the final LayerNorm's output is
/// its bias b whatever the input (weight 0), and the tied output scores token v as b . wte[v]; with
/// wte[<|endoftext|>] = 10 b its score beats every other token's.
inline void always_end(DecoderOnly& model, int64_t end_of_text) {
  const auto& final_norm = dynamic_cast<const LayerNorm&>(*model.decoder->norm);  // GPT-2's ln_f
  Tensor gamma = final_norm.weight.value(), beta = final_norm.bias.value();
  gamma.fill_(0);
  float* row = model.embed->weight.value().data<float>() + end_of_text * beta.numel();
  for (int64_t i = 0; i < beta.numel(); ++i) {
    beta.data<float>()[i] = i % 2 == 0 ? 1.0f : -1.0f;
    row[i] = 10 * beta.data<float>()[i];
  }
}

/// Saves `model` with `tokens` as a decoder-only checkpoint: its one tokenizer, the target side.
inline void save(const std::string& path, const DecoderOnly& model, const Tokenizer& tokens) {
  CheckpointInfo info;
  info.config = model.config(), info.target_tokenizer = tokens;
  save_checkpoint(path, model, model.config(), /*optimizer_state=*/{}, info);
}

}  // namespace gradformer::tiny_gpt2
