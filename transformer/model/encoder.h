// The encoder (Vaswani et al., 2017, section 3.1):
//
//   "The encoder is composed of a stack of N = 6 identical layers. Each layer has two sub-layers.
//    The first is a multi-head self-attention mechanism, and the second is a simple, position-wise
//    fully connected feed-forward network. We employ a residual connection around each of the two
//    sub-layers, followed by layer normalization. That is, the output of each sub-layer is
//    LayerNorm(x + Sublayer(x))."
//
//   "We apply dropout to the output of each sub-layer, before it is added to the sub-layer input
//    and normalized." (section 5.4)
//
// Names follow torch.nn.TransformerEncoderLayer: self_attn.*, linear1.*, linear2.*, norm1.*, norm2.*
// (dropout, dropout1, dropout2 hold no parameters); the stack is layers.{i}.*, plus norm.* with pre-LN.
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

class EncoderLayer : public Module {
 public:
  /// Initialised as PyTorch's TransformerEncoderLayer (reset_parameters).
  EncoderLayer(const LayerConfig& config, Generator& init_gen, std::shared_ptr<Generator> dropout_gen);
  /// The same, allocated but not initialised (see nn/init.h).
  /// With rotary positions, the layer reads `rotary` (the stack's shared tables) or, when null, its own.
  EncoderLayer(const LayerConfig& config, SkipInit, std::shared_ptr<Generator> dropout_gen,
               std::shared_ptr<const RotaryTables> rotary = nullptr);
  /// Each attention as MultiheadAttention::reset_parameters, linear1 and linear2 a Linear's default,
  /// the LayerNorms 1 and 0.
  void reset_parameters(Generator& init_gen);
  /// x: [B, S, d], src_mask: [B, 1, S] bool (true on real tokens) or undefined -> [B, S, d]
  ///   post-LN: x = norm1(x + dropout1(self_attn(x)));  x = norm2(x + dropout2(ffn(x)))
  ///   pre-LN:  x = x + dropout1(self_attn(norm1(x)));  x = x + dropout2(ffn(norm2(x)))
  Variable forward(const Variable& x, const Tensor& src_mask = {}) const;
  /// Incremental decoding of a decoder-only model (this layer under a causal mask): the new
  /// positions x [B, Tn, d] attend to the positions in `cache` and causally to each other; their
  /// keys and values are appended to `cache`. -> [B, Tn, d], equal to the last Tn positions of
  /// forward() over the whole prefix with a causal mask.
  Variable forward_step(const Variable& x, KVCache& cache) const;

  std::shared_ptr<MultiheadAttention> self_attn;
  std::shared_ptr<Linear> linear1, linear2, linear3;  // linear3: SwiGLU's up projection only
  std::shared_ptr<Norm> norm1, norm2;                 // LayerNorm or RMSNorm
  std::shared_ptr<Dropout> dropout, dropout1, dropout2;
  NormPlacement norm_placement;
  Activation activation;  // of the feed-forward network
  /// When true, forward keeps the self-attention weights [B, H, S, S] here (for attention maps).
  bool keep_attention = false;
  mutable Tensor attention;

 private:
  // The two sub-layers with their residuals and norms; `self` computes the self-attention.
  template <class SelfAttention>
  Variable layer(const Variable& x, SelfAttention self) const;
};

/// N (num_layers) encoder layers, then (pre-LN only) a final LayerNorm "norm".
class Encoder : public Module {
 public:
  /// Each layer initialised as EncoderLayer::reset_parameters.
  Encoder(const LayerConfig& config, int64_t num_layers, Generator& init_gen, std::shared_ptr<Generator> dropout_gen);
  /// The same, allocated but not initialised (see nn/init.h).
  Encoder(const LayerConfig& config, int64_t num_layers, SkipInit, std::shared_ptr<Generator> dropout_gen);
  void reset_parameters(Generator& init_gen);
  /// x: [B, S, d], src_mask: [B, 1, S] -> memory [B, S, d]
  Variable forward(const Variable& x, const Tensor& src_mask = {}) const;
  /// x: [B, Tn, d] new positions, caches: one KVCache per layer (empty at first) -> [B, Tn, d]
  Variable forward_step(const Variable& x, std::vector<KVCache>& caches) const;

  std::shared_ptr<ModuleList<EncoderLayer>> layers;
  std::shared_ptr<Norm> norm;  // null with post-LN
};

}  // namespace gradformer
