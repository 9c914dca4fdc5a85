// Rotary position embedding (RoPE: Su et al., 2021, "RoFormer"), the positions of Llama, Qwen and
// most models of this decade. Nothing is added to the embedding; instead, in every self-attention,
// each query and key is turned by an angle proportional to its position:
//
//   the pairs (x_i, x_{i+h}) of a head's d_k numbers, h = d_k / 2 ("rotate half", the layout of
//   Llama's released weights), pair i turned by  angle(p, i) = p * theta^(-2i / d_k)  at position p
//
// A rotation keeps lengths and composes by adding angles, so the score of a query at m and a key at
// n, q_m . k_n = (R_m q) . (R_n k) = q . R_(n-m) k, depends on the positions only through n - m:
// attention sees how far apart two tokens are, not where they are.
//
// The angles of every position up to max_len are computed once, in float64, into two tables of the
// model's dtype that every layer's attention shares; the op itself is autograd/fused.h's rotary.
#pragma once

#include <cstdint>
#include <vector>

#include "tensor/tensor.h"
#include "transformer/model/config.h"

namespace gradformer {

/// Pair i's frequency, theta^(-2i / d_k) for i in [0, d_k / 2), rescaled as Llama 3.1 does when
/// scaling.factor is set (transformers' rope_type "llama3"):
///   wavelength w = 2 pi / f;  w > L / low_freq_factor: f / factor;  w < L / high_freq_factor: f;
///   between: (1 - s) f / factor + s f,  s = (L / w - low_freq_factor) / (high_freq_factor - low_freq_factor)
/// with L = scaling.original_max_len. ValueError for an odd or non-positive head_dim.
std::vector<double> rotary_frequencies(int64_t head_dim, double theta, const RopeScaling& scaling = {});

/// cos and sin of angle(p, i) for p in [0, positions), i in [0, d_k / 2): [positions, d_k / 2] each.
struct RotaryTables {
  Tensor cos, sin;
};
RotaryTables rotary_tables(int64_t positions, int64_t head_dim, double theta, const RopeScaling& scaling, DType dtype);
/// The tables a layer of this configuration reads (max_len positions, its head width and base).
RotaryTables rotary_tables(const LayerConfig& layer);

}  // namespace gradformer
