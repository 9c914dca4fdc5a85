// The decoder (Vaswani et al., 2017, section 3.1):
//
//   "In addition to the two sub-layers in each encoder layer, the decoder inserts a third sub-layer,
//    which performs multi-head attention over the output of the encoder stack. ... We also modify
//    the self-attention sub-layer in the decoder stack to prevent positions from attending to
//    subsequent positions. This masking, combined with fact that the output embeddings are offset
//    by one position, ensures that the predictions for position i can depend only on the known
//    outputs at positions less than i."
//
// Names follow torch.nn.TransformerDecoderLayer: self_attn.*, multihead_attn.* (cross-attention:
// queries from the decoder, keys and values from the encoder memory), linear1.*, linear2.*,
// norm1.*, norm2.*, norm3.*; the stack is layers.{i}.*, plus norm.* with pre-LN.
//
// Incremental decoding: DecoderCache keeps, per layer, the self-attention keys and values of the
// positions decoded so far and the memory's keys and values (computed once), so each new token
// costs one position's worth of work instead of the whole prefix again.
#pragma once

#include <memory>
#include <vector>

#include "autograd/variable.h"
#include "nn/init.h"
#include "nn/layers.h"
#include "nn/module.h"
#include "tensor/random.h"
#include "transformer/model/config.h"
#include "transformer/model/multihead_attention.h"
#include "transformer/model/rotary.h"

namespace gradformer {

/// Per layer: the decoder's own keys and values so far, and the encoder memory's.
struct LayerCache {
  KVCache self, memory;
};

class DecoderLayer : public Module {
 public:
  /// Initialised as PyTorch's TransformerDecoderLayer (reset_parameters).
  DecoderLayer(const LayerConfig& config, Generator& init_gen, std::shared_ptr<Generator> dropout_gen);
  /// The same, allocated but not initialised (see nn/init.h).
  /// With rotary positions, self-attention reads `rotary` (the stack's shared tables) or its own.
  DecoderLayer(const LayerConfig& config, SkipInit, std::shared_ptr<Generator> dropout_gen,
               std::shared_ptr<const RotaryTables> rotary = nullptr);
  /// Each attention as MultiheadAttention::reset_parameters, linear1 and linear2 a Linear's default,
  /// the LayerNorms 1 and 0.
  void reset_parameters(Generator& init_gen);
  /// x: [B, T, d], memory: [B, S, d], src_mask: [B, 1, S], tgt_mask: [B, T, T] (padding and causal)
  /// -> [B, T, d]. Post-LN:
  ///   x = norm1(x + dropout1(self_attn(x, tgt_mask)))
  ///   x = norm2(x + dropout2(multihead_attn(x, memory, src_mask)))
  ///   x = norm3(x + dropout3(ffn(x)))
  /// pre-LN: x = x + dropout_k(sublayer_k(norm_k(x))) for each of the three.
  Variable forward(const Variable& x, const Variable& memory, const Tensor& src_mask, const Tensor& tgt_mask) const;
  /// The same for new positions x [B, Tn, d] (usually Tn = 1) given the cache of earlier ones; the
  /// cache's memory keys and values must be filled (Decoder::start_cache does it).
  Variable forward_step(const Variable& x, const Tensor& src_mask, LayerCache& cache) const;

  std::shared_ptr<MultiheadAttention> self_attn, multihead_attn;
  std::shared_ptr<Linear> linear1, linear2, linear3;  // linear3: SwiGLU's up projection only
  std::shared_ptr<Norm> norm1, norm2, norm3;          // LayerNorm or RMSNorm
  std::shared_ptr<Dropout> dropout, dropout1, dropout2, dropout3;
  NormPlacement norm_placement;
  Activation activation;  // of the feed-forward network
  /// When true, forward keeps the attention weights [B, H, Tq, Tk] (for attention maps).
  bool keep_attention = false;
  mutable Tensor self_attention, cross_attention;

 private:
  template <class SelfAttention, class CrossAttention>
  Variable layer(const Variable& x, SelfAttention self, CrossAttention cross) const;
};

/// What incremental decoding keeps between steps.
struct DecoderCache {
  std::vector<LayerCache> layers;
  int64_t length = 0;  // positions decoded so far
};

/// N (num_layers) decoder layers, then (pre-LN only) a final LayerNorm "norm".
class Decoder : public Module {
 public:
  /// Each layer initialised as DecoderLayer::reset_parameters.
  Decoder(const LayerConfig& config, int64_t num_layers, Generator& init_gen, std::shared_ptr<Generator> dropout_gen);
  /// The same, allocated but not initialised (see nn/init.h).
  Decoder(const LayerConfig& config, int64_t num_layers, SkipInit, std::shared_ptr<Generator> dropout_gen);
  void reset_parameters(Generator& init_gen);
  /// x: [B, T, d], memory: [B, S, d], src_mask: [B, 1, S], tgt_mask: [B, T, T] -> [B, T, d]
  Variable forward(const Variable& x, const Variable& memory, const Tensor& src_mask, const Tensor& tgt_mask) const;
  /// A cache holding each layer's projection of memory [B, S, d] into keys and values.
  DecoderCache start_cache(const Variable& memory) const;
  /// x: [B, Tn, d] (the new positions' embeddings) -> [B, Tn, d]; cache.length grows by Tn.
  Variable forward_step(const Variable& x, const Tensor& src_mask, DecoderCache& cache) const;

  std::shared_ptr<ModuleList<DecoderLayer>> layers;
  std::shared_ptr<Norm> norm;  // null with post-LN
};

}  // namespace gradformer
