// The full encoder-decoder Transformer (Vaswani et al., 2017, figure 1 and section 3):
//
//   "Given z [the encoder's output], the decoder then generates an output sequence (y_1, ..., y_m)
//    of symbols one element at a time. At each step the model is auto-regressive, consuming the
//    previously generated symbols as additional input when generating the next."
//
//   src [B, S] -> src_embed * sqrt(d) + PE -> encoder -> memory [B, S, d]
//   tgt_in [B, T] -> tgt_embed * sqrt(d) + PE -> decoder(memory) -> [B, T, d] -> output_projection -> logits [B, T, V]
//
// The letters in shapes, here and in every file of the model (the paper's names where it has them):
//   B     batch size: sentences (pairs) in a batch
//   S     source positions (tokens in a source sentence, padding included)
//   T     target positions (tgt_in; Tq and Tk for an attention's queries and keys, Tn new positions
//         in incremental decoding)
//   H     attention heads (the paper's h)
//   d     d_model, the width of every embedding and every sub-layer's output
//   d_k   d / H, the width of one head's queries, keys and values (the paper's d_k = d_v)
//   d_ff  the feed-forward network's hidden width
//   V     vocabulary size (V_src, V_tgt when they differ)
//   N     encoder (and decoder) layers: TransformerConfig::layers, nothing else
// A product such as [B*T, d] is a tensor whose leading dimensions were folded into one.
//
// Parameter names (the Annotated Transformer's, with PyTorch's inside the layers): src_embed.weight,
// tgt_embed.weight, generator.weight, generator.bias, encoder.layers.{i}.*, decoder.layers.{i}.*,
// and encoder.norm.*, decoder.norm.* with pre-LN only. "generator" is the output projection's name
// in the Annotated Transformer and so in the checkpoint; in code it is `output_projection`, to keep
// it apart from the random Generator.
//
// Tied embeddings (section 3.4, "we share the same weight matrix between the two embedding layers
// and the pre-softmax linear transformation"), for a shared vocabulary: the one [V, d] matrix is a
// single parameter, listed once, as "src_embed.weight". tgt_embed.weight and generator.weight then
// do not appear in named_parameters(), state_dict() or the checkpoint (a tensor is stored once; the
// optimizer updates it once, with the sum of its three gradients); config().tie_embeddings tells a
// loader to tie them again (in PyTorch: model.tgt_embed.weight = model.generator.weight =
// model.src_embed.weight).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "autograd/variable.h"
#include "nn/init.h"
#include "nn/layers.h"
#include "nn/module.h"
#include "tensor/random.h"
#include "tensor/tensor.h"
#include "transformer/model/config.h"
#include "transformer/model/decoder.h"
#include "transformer/model/encoder.h"
#include "transformer/model/positional_encoding.h"
#include "transformer/model/vocab_projection.h"

namespace gradformer {

/// The number of parameters a model of this configuration has, from the formula:
///   embeddings   V_src d + V_tgt d            (V d once when tied)
///   output projection d V_tgt + V_tgt         (V_tgt only when tied: the bias)
///   attention    4 d^2 + 4 d                  (W^Q, W^K, W^V, W^O and their biases)
///   feed-forward 2 d d_ff + d_ff + d          (W_1, b_1, W_2, b_2)
///   LayerNorm    2 d                          (gain and bias)
///   encoder layer: attention + feed-forward + 2 LayerNorm;  decoder layer: 2 attention + feed-forward + 3 LayerNorm
///   N of each, plus 2 final LayerNorms with pre-LN;  learned positions add max_len d.
/// A decoder-only configuration is counted by decoder_only_parameter_count (decoder_only.h).
int64_t parameter_count(const TransformerConfig& config);

/// FLOPs (a multiply-add is 2) of the matrix products of one forward pass over a sentence pair of
/// src_len and tgt_len tokens. Softmax, LayerNorm, ReLU, dropout and the embedding lookups are
/// O(d) per token and left out. Training costs about 3x forward (backward is two products per product).
struct FlopCount {
  double encoder = 0, decoder = 0, output_projection = 0;
  int64_t src_len = 0, tgt_len = 0;
  double forward() const { return encoder + decoder + output_projection; }
  double forward_per_target_token() const { return forward() / static_cast<double>(tgt_len); }
  double training_per_target_token() const { return 3 * forward_per_target_token(); }
};
///   per encoder layer and source token: 8 d^2 (Q, K, V, O) + 4 S d (Q K^T and P V) + 4 d d_ff
///   per decoder layer and target token: 8 d^2 + 4 T d (self) + 4 d^2 + 4 S d (cross: Q, O; scores)
///                                        + 4 d d_ff;  and per source token 4 d^2 (the memory's K, V)
///   output projection per target token: 2 d V_tgt
FlopCount flop_count(const TransformerConfig& config, int64_t src_len, int64_t tgt_len);

class EncoderDecoder : public Module {
 public:
  /// Builds the model and initialises it from `seed` (reset_parameters with Generator(seed, 0)).
  /// ValueError unless config.arch is EncoderDecoder.
  /// Dropout draws from a second generator (dropout_generator(), Generator(seed, 1)), so its state
  /// can be saved and restored.
  EncoderDecoder(const TransformerConfig& config, uint64_t seed);
  /// Builds the model without drawing its parameters (see nn/init.h), for loading a checkpoint.
  EncoderDecoder(const TransformerConfig& config, uint64_t seed, SkipInit);

  /// The initialisation, in one pass, each parameter drawn once: every parameter of 2 or more
  /// dimensions Xavier-uniform (as the Annotated Transformer and the reference implementations),
  /// learned positions N(0, 0.02), LayerNorm gains 1 and biases 0, attention biases 0, the feed-forward and output
  /// biases PyTorch's Linear default U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
  void reset_parameters(Generator& init_gen);

  /// src: [B, S] int64 -> [B, S, d]:  dropout(src_embed(src) * sqrt(d) + PE)
  Variable embed_source(const Tensor& src) const;
  /// tgt: [B, T] int64 -> [B, T, d], positions start, start + 1, ...
  Variable embed_target(const Tensor& tgt, int64_t start = 0) const;

  /// src: [B, S] int64, src_mask: [B, 1, S] bool (or undefined) -> memory [B, S, d]
  Variable encode(const Tensor& src, const Tensor& src_mask) const;
  /// memory [B, S, d], src_mask [B, 1, S], tgt_in [B, T] int64, tgt_mask [B, T, T] bool -> [B, T, d]
  Variable decode(const Variable& memory, const Tensor& src_mask, const Tensor& tgt_in, const Tensor& tgt_mask) const;
  /// decoded [B, T, d] -> logits [B, T, V_tgt] (what cross_entropy takes)
  Variable logits(const Variable& decoded) const;
  /// decoded [B, T, d] -> log_softmax(logits) [B, T, V_tgt] (what decoding ranks tokens by)
  Variable log_probs(const Variable& decoded) const;
  /// logits(decode(encode(src, src_mask), src_mask, tgt_in, tgt_mask))  -> [B, T, V_tgt]
  Variable forward(const Tensor& src, const Tensor& tgt_in, const Tensor& src_mask, const Tensor& tgt_mask) const;

  // ---- incremental decoding ------------------------------------------------------------------------
  /// The per-layer cache with the memory's keys and values computed once.
  DecoderCache start_decoding(const Variable& memory) const;
  /// The next tokens tgt [B, Tn] int64 (positions cache.length, ...) -> decoded [B, Tn, d], equal to
  /// the last Tn positions of decode() over the whole prefix; the cache grows by Tn.
  Variable decode_step(const Tensor& tgt, const Tensor& src_mask, DecoderCache& cache) const;

  const TransformerConfig& config() const { return config_; }
  const std::shared_ptr<Generator>& dropout_generator() const { return dropout_gen_; }

  std::shared_ptr<Embedding> src_embed, tgt_embed;  // the same object when tied
  std::shared_ptr<PositionalEncoding> positional_encoding;
  std::shared_ptr<Encoder> encoder;
  std::shared_ptr<Decoder> decoder;
  std::shared_ptr<VocabProjection> output_projection;  // registered as "generator"

 private:
  void check_ids(const char* what, const Tensor& ids) const;
  TransformerConfig config_;
  std::shared_ptr<Generator> dropout_gen_;
};

}  // namespace gradformer
