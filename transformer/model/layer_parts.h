// The parts a layer of any of the three architectures is built from, as its configuration says:
// its norms (LayerNorm or RMSNorm), its attentions (heads, key/value heads, head width, biases,
// rotary positions) and its feed-forward network's projections (with or without biases; SwiGLU's
// third matrix), and the LoRA adapters beside them. The encoder's and the decoder's layers both build theirs here, so a
// setting means the same in every architecture.
#pragma once

#include <memory>

#include "nn/layers.h"
#include "transformer/model/config.h"
#include "transformer/model/multihead_attention.h"
#include "transformer/model/rotary.h"

namespace gradformer {

/// A LayerNorm or an RMSNorm of d_model, with the configuration's epsilon.
inline std::shared_ptr<Norm> make_norm(const LayerConfig& c) {
  if (c.block.normalization == Normalization::RMSNorm) return std::make_shared<RMSNorm>(c.d_model, c.norm_eps, c.dtype);
  return std::make_shared<LayerNorm>(c.d_model, c.norm_eps, c.dtype);
}

/// An attention of the configuration's shape (allocated, not initialised), with the LoRA adapters the
/// configuration names beside W^Q, W^K, W^V and W^O.
inline std::shared_ptr<MultiheadAttention> make_attention(const LayerConfig& c,
                                                          std::shared_ptr<Generator> dropout_gen) {
  auto a =
      std::make_shared<MultiheadAttention>(c.d_model, c.heads, c.dropout, skip_init, std::move(dropout_gen), c.dtype,
                                           AttentionShape{c.block.kv_heads, c.block.head_dim, c.block.bias});
  const LoraOptions& lora = c.block.lora;
  if (lora.rank > 0) {
    a->add_lora(lora.q, lora.k, lora.v, lora.rank, lora.alpha, nullptr);
    if (lora.o) a->out_proj->add_lora(lora.rank, lora.alpha, nullptr);
  }
  return a;
}

/// The feed-forward network's Linear from `in` to `out` (biases only when every projection has one),
/// with a LoRA adapter when the configuration names ffn.
inline std::shared_ptr<Linear> make_feed_forward_linear(const LayerConfig& c, int64_t in, int64_t out) {
  auto linear = std::make_shared<Linear>(in, out, skip_init, c.block.bias == Bias::All, c.dtype);
  if (c.block.lora.rank > 0 && c.block.lora.ffn) linear->add_lora(c.block.lora.rank, c.block.lora.alpha, nullptr);
  return linear;
}

/// The rotary tables a layer of this configuration shares with the others (null without rotary
/// positions): given ones when the stack built them, else its own.
inline std::shared_ptr<const RotaryTables> layer_rotary(const LayerConfig& c,
                                                        std::shared_ptr<const RotaryTables> shared) {
  if (!c.rotary) return nullptr;
  return shared ? shared : std::make_shared<const RotaryTables>(rotary_tables(c));
}

}  // namespace gradformer
