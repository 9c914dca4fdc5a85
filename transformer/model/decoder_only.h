// The decoder-only Transformer (GPT: Radford et al., 2018, section 3.1):
//
//   "In our experiments, we use a multi-layer Transformer decoder for the language model, which is a
//    variant of the transformer. This model applies a multi-headed self-attention operation over
//    the input context tokens followed by position-wise feedforward layers to produce an output
//    distribution over target tokens:
//        h_0 = U W_e + W_p
//        h_l = transformer_block(h_{l-1})  for all l in [1, n]
//        P(u) = softmax(h_n W_e^T)"
//
// A block (DecoderOnlyBlock) is self-attention, then the feed-forward network, under the decoder's
// causal mask: no cross-attention, since there is no encoder to attend to. That is exactly the
// encoder's layer, so DecoderOnlyBlock is EncoderLayer by another name, as torch.nn.TransformerEncoder
// with a causal mask is GPT in PyTorch; the mask, not the block, makes it a decoder:
//
//   ids [B, T] -> embed * sqrt(d) + PE -> N decoder-only blocks (causal mask) -> [B, T, d]
//              -> output projection -> logits [B, T, V]
//
// The embedding is scaled by sqrt(d) as in the encoder-decoder unless config.scale_embedding is off
// (GPT-2 does not scale): the three architectures differ only in their masks, in cross-attention,
// and in what they are trained to do.
//
// Parameter names (the checkpoint's):
//   embed.weight [V, d]                            the token embedding (GPT's W_e)
//   positional_encoding.weight [max_len, d]        learned positions only (GPT's W_p)
//   decoder.layers.{i}.self_attn.* linear1.* linear2.* norm1.* norm2.*   (torch TransformerEncoderLayer's)
//   decoder.norm.*                                 pre-LN only (GPT-2's final ln_f)
//   generator.weight [V, d]                        untied only; no bias, as GPT-2's lm_head
// With tied embeddings (GPT's softmax(h_n W_e^T)) generator.weight is embed.weight, stored once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "autograd/variable.h"
#include "nn/init.h"
#include "nn/layers.h"
#include "nn/module.h"
#include "tensor/random.h"
#include "tensor/tensor.h"
#include "transformer/model/config.h"
#include "transformer/model/encoder.h"
#include "transformer/model/positional_encoding.h"
#include "transformer/model/vocab_projection.h"

namespace gradformer {

/// GPT's transformer_block: masked self-attention, then the feed-forward network, each in its
/// residual connection and LayerNorm. The encoder's layer under a causal mask: a name, not a copy.
using DecoderOnlyBlock = EncoderLayer;
/// The N blocks (decoder.layers.{i}) and, with pre-LN, the final LayerNorm (decoder.norm): the
/// encoder's stack, which DecoderOnly always runs under a causal mask.
using DecoderOnlyStack = Encoder;

/// A decoder-only configuration: one vocabulary of `vocab` tokens (src_vocab = tgt_vocab = vocab),
/// arch DecoderOnly; the rest as TransformerConfig::tutorial, pre-LN.
TransformerConfig decoder_only_config(int64_t vocab);
/// GPT-2 small (Radford et al., 2019, table 2, and the released model): V 50257, n_ctx 1024, d 768,
/// N 12, h 12, d_ff 3072, learned positions, pre-LN, GELU's tanh form, output tied to the embedding,
/// the embedding not scaled by sqrt(d), LayerNorm epsilon 1e-5.
TransformerConfig gpt2_small_config();

/// Llama's block on a decoder-only model of `vocab` tokens (Touvron et al., 2023): pre-LN with RMSNorm
/// (eps 1e-5), rotary positions, the SwiGLU feed-forward network, no biases, the embedding not scaled
/// by sqrt(d), no dropout; the sizes as decoder_only_config's until set.
TransformerConfig llama_config(int64_t vocab);
/// The configurations of the hub's small models built like Llama, as their config.json gives them:
///   smollm2-135m    V 49152, d 576, N 30, H 9, 3 key/value heads, d_ff 1536, theta 100000, tied
///   llama-3.2-1b    V 128256, d 2048, N 16, H 32, 8 key/value heads, d_ff 8192, theta 500000, llama3 scaling, tied
///   qwen2.5-0.5b    V 151936, d 896, N 24, H 14, 2 key/value heads, d_ff 4864, theta 1000000, q/k/v biases, tied
///   tinyllama-1.1b  V 32000, d 2048, N 22, H 32, 4 key/value heads, d_ff 5632, theta 10000, untied
/// ValueError naming the presets for another name.
TransformerConfig hub_preset_config(const std::string& name);
/// The names hub_preset_config knows, in the order above.
std::vector<std::string> hub_preset_names();

/// The number of parameters of a decoder-only model, from the formula:
///   embedding        V d
///   positions        max_len d                    (learned only)
///   per layer        attention 4 d^2 + 4 d  +  feed-forward 2 d d_ff + d_ff + d  +  2 LayerNorms 4 d
///                    (the paper's block; layer_parameter_count in config.h counts every setting)
///   final LayerNorm  2 d                          (pre-LN only)
///   output           V d                          (untied only; no bias)
int64_t decoder_only_parameter_count(const TransformerConfig& config);

/// One KVCache per layer: the keys and values of every position generated so far.
struct DecoderOnlyCache {
  std::vector<KVCache> layers;
  int64_t length = 0;
};

class DecoderOnly : public Module {
 public:
  /// Builds the model and initialises it from `seed` (Generator(seed, 0)); dropout draws from
  /// Generator(seed, 1). ValueError unless config.arch is DecoderOnly (and config validates).
  DecoderOnly(const TransformerConfig& config, uint64_t seed);
  /// Allocated but not drawn (see nn/init.h), for loading a checkpoint.
  DecoderOnly(const TransformerConfig& config, uint64_t seed, SkipInit);
  /// As EncoderDecoder::reset_parameters: matrices Xavier-uniform, learned positions N(0, 0.02),
  /// attention biases 0, feed-forward biases PyTorch's Linear default, LayerNorms 1 and 0.
  void reset_parameters(Generator& init_gen);

  /// ids [B, T] int64 -> [B, T, d]: dropout(embed(ids) * sqrt(d) + PE[start : start + T])
  Variable embed_tokens(const Tensor& ids, int64_t start = 0) const;
  /// ids [B, T] int64, mask [B, T, T] bool (causal_mask, or target_mask for padded batches)
  ///   -> logits [B, T, V]: position t's scores for token t + 1
  Variable forward(const Tensor& ids, const Tensor& mask) const;

  // ---- incremental decoding (generation) -----------------------------------------------------------
  DecoderOnlyCache start_cache() const;
  /// The next tokens ids [B, Tn] (positions cache.length, ...) -> logits [B, Tn, V], equal to the
  /// last Tn positions of forward() over the whole prefix with a causal mask; the cache grows by Tn.
  Variable forward_step(const Tensor& ids, DecoderOnlyCache& cache) const;

  const TransformerConfig& config() const { return config_; }
  const std::shared_ptr<Generator>& dropout_generator() const { return dropout_gen_; }

  std::shared_ptr<Embedding> embed;
  std::shared_ptr<PositionalEncoding> positional_encoding;
  std::shared_ptr<DecoderOnlyStack> decoder;           // N blocks, run under a causal mask
  std::shared_ptr<VocabProjection> output_projection;  // registered as "generator"

 private:
  void check_ids(const Tensor& ids) const;
  TransformerConfig config_;
  std::shared_ptr<Generator> dropout_gen_;
};

}  // namespace gradformer
