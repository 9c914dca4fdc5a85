// Shared by the model tests: a tiny float64 configuration for gradient checks (and, from
// autograd/helpers.h, masks built by hand, so these tests do not depend on the batching code).
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/helpers.h"
#include "nn/all.h"
#include "transformer/model/encoder_decoder.h"

namespace test {

/// d 8, h 2, d_ff 16, vocab 7, dropout 0, float64: small enough for a gradient check of everything.
inline gradformer::TransformerConfig tiny_config(gradformer::NormPlacement norm, int64_t layers = 1) {
  gradformer::TransformerConfig c;
  c.src_vocab = 7, c.tgt_vocab = 7, c.d_model = 8, c.d_ff = 16, c.heads = 2, c.layers = layers;
  c.dropout = 0.0, c.norm = norm, c.max_len = 16, c.dtype = gradformer::DType::Float64;
  return c;
}

/// Moves every 1-d parameter (LayerNorm gains and biases, attention biases that start at 0) off
/// its initial value, so the checks do not pass by symmetry.
inline void perturb_norms(gradformer::Module& m, uint64_t seed) {
  for (const auto& [name, p] : m.named_parameters())
    if (p.dim() == 1) {
      gradformer::Tensor v = p.value();
      v.copy_(v + rnd(v.shape(), seed++, -0.3, 0.3));
    }
}

}  // namespace test
