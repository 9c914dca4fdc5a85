// Shared by the model tests: masks built by hand (so these tests do not depend on the batching
// code) and a tiny float64 configuration for gradient checks.
#pragma once

#include <cstdint>
#include <vector>

#include "autograd/helpers.h"
#include "nn/all.h"
#include "transformer/model/encoder_decoder.h"

namespace test {

/// ids [B, S] -> [B, 1, S] bool, true where id != pad.
inline gradformer::Tensor pad_mask(const gradformer::Tensor& ids, int64_t pad = 0) {
  return gradformer::ne(ids, gradformer::full({}, static_cast<double>(pad), gradformer::DType::Int64)).unsqueeze(1);
}

/// [T, T] bool, true where j <= i.
inline gradformer::Tensor lower_triangle(int64_t t) {
  using namespace gradformer;
  return le(arange(t, DType::Int64).unsqueeze(0), arange(t, DType::Int64).unsqueeze(1));
}

/// ids [B, T] -> [B, T, T]: padding AND causal.
inline gradformer::Tensor tgt_mask(const gradformer::Tensor& ids, int64_t pad = 0) {
  return gradformer::logical_and(pad_mask(ids, pad), lower_triangle(ids.size(1)).unsqueeze(0));
}

inline gradformer::Tensor ids(const std::vector<int64_t>& v, int64_t rows) {
  return gradformer::from_vector(v, {rows, static_cast<int64_t>(v.size()) / rows});
}

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
