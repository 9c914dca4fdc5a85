// Fused primitives: softmax, log_softmax, layer_norm and cross-entropy (and scaled dot-product
// attention: fused_attention.h), each one op with a
// hand-written backward, computed row by row over the last dimension (rows in parallel).
//
// Each could be composed from the ops above, and each *_unfused version, declared right above its
// fused twin and defined above it in the same file, is exactly that composition: the reference the
// tests compare against. The fused versions are faster
// (one pass over memory instead of five or six, no intermediate tensors, one node instead of many)
// and more stable (the max is subtracted inside the exponential; cross-entropy never takes the log
// of a probability that underflowed to zero).
#pragma once

#include <cstdint>

#include "autograd/variable.h"

namespace gradformer {

/// The definitions composed from differentiable ops (the references), then the fused ops.
Variable softmax_unfused(const Variable& x, int64_t dim = -1);
Variable log_softmax_unfused(const Variable& x, int64_t dim = -1);
/// softmax(x)_i = exp(x_i - max x) / sum_j exp(x_j - max x) along dim.   x: [..., C] -> [..., C]
Variable softmax(const Variable& x, int64_t dim = -1);
/// log_softmax(x)_i = x_i - logsumexp(x) along dim.   x: [..., C] -> [..., C]
Variable log_softmax(const Variable& x, int64_t dim = -1);

Variable layer_norm_unfused(const Variable& x, const Variable& weight, const Variable& bias, double eps = 1e-5);
/// LayerNorm over the last dimension (Ba et al., 2016):
///   y = (x - mean) / sqrt(var + eps) * weight + bias,   var biased (divided by D, not D - 1)
/// x: [..., D], weight and bias: [D] (either may be undefined: no scale / no shift) -> [..., D]
Variable layer_norm(const Variable& x, const Variable& weight, const Variable& bias, double eps = 1e-5);

Variable rms_norm_unfused(const Variable& x, const Variable& weight, double eps = 1e-6);
/// RMSNorm over the last dimension (Zhang and Sennrich, 2019): LayerNorm without the mean and the bias,
///   y = x / sqrt(mean(x^2) + eps) * weight        (eps inside the root, as Llama computes it)
/// x: [..., D], weight: [D] (may be undefined: no scale) -> [..., D]
Variable rms_norm(const Variable& x, const Variable& weight, double eps = 1e-6);

Variable rotary_unfused(const Variable& x, const Tensor& cos, const Tensor& sin, int64_t start = 0);
/// Rotary position embedding (Su et al., 2021), in the "rotate half" layout Llama's released weights
/// use: the pairs (x_i, x_{i+h}), h = d_k / 2, each turned by the angle of its position times its own
/// frequency,
///   out_i = x_i cos - x_{i+h} sin,   out_{i+h} = x_{i+h} cos + x_i sin,   at position start + t
/// x: [..., T, d_k], cos and sin: [positions, h] (the tables, row p the angles of position p) -> [..., T, d_k]
Variable rotary(const Variable& x, const Tensor& cos, const Tensor& sin, int64_t start = 0);

struct CrossEntropyOptions {
  int64_t ignore_index = -100;   // targets equal to this (padding) contribute no loss and no gradient
  double label_smoothing = 0.0;  // eps: the target distribution is (1 - eps) one-hot + eps uniform
};

Variable cross_entropy_unfused(const Variable& logits, const Tensor& target, const CrossEntropyOptions& options = {});
/// Cross-entropy from logits, averaged over the targets that are not ignore_index:
///   loss_n = -sum_c q_c log softmax(logits_n)_c,   q = (1 - eps) onehot(target_n) + eps / C
/// logits: [..., C] (float), target: [...] (int64) -> a scalar. With every target ignored the loss is 0.
/// IndexError for a target outside [0, C) that is not ignore_index; ShapeError if the shapes disagree.
Variable cross_entropy(const Variable& logits, const Tensor& target, const CrossEntropyOptions& options = {});

}  // namespace gradformer
