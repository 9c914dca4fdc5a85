// Scaled dot-product attention (Vaswani et al., 2017, section 3.2.1):
//
//   "We compute the dot products of the query with all keys, divide each by sqrt(d_k), and apply a
//    softmax function to obtain the weights on the values."
//
//       Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V
//
// Shapes: q [..., Tq, d_k], k [..., Tk, d_k], v [..., Tk, d_v] -> output [..., Tq, d_v] and
// weights [..., Tq, Tk]; in a Transformer the leading dimensions are [B, H] (batch, heads).
//
// MASK CONVENTION: a bool mask is TRUE WHERE ATTENTION IS ALLOWED. It broadcasts against the scores
// [..., Tq, Tk]: a padding mask [B, 1, 1, S], a causal-and-padding mask [B, 1, T, T]. Where it is
// false the score is -infinity before the softmax, so the weight is exactly 0. A query whose keys are
// all masked gets weights 0 and output 0 (and gradient 0), not the NaN that softmax of -inf gives.
#pragma once

#include <optional>

#include "autograd/variable.h"
#include "tensor/random.h"

namespace gradformer {

struct AttentionOptions {
  /// Dropout on the attention weights while training, as PyTorch's MultiheadAttention does
  /// (the Annotated Transformer too). Needs `dropout_gen` when > 0.
  double dropout_p = 0.0;
  Generator* dropout_gen = nullptr;
  /// The factor on Q K^T; 1/sqrt(d_k) when not given (1.0 shows why the scaling is there).
  std::optional<double> scale = std::nullopt;
};

/// What attention returns: the output (differentiable) and the weights softmax(Q K^T / sqrt(d_k))
/// before dropout, for visualisation (a plain tensor: no gradient flows through it).
struct Attention {
  Variable output;  // [..., Tq, d_v]
  Tensor weights;   // [..., Tq, Tk]
};

/// The definition composed from autograd ops (matmul, masked_fill, softmax, mul): the reference
/// the fused version below is tested against, and the version chapter 5 builds step by step.
Attention scaled_dot_product_attention_unfused(const Variable& q, const Variable& k, const Variable& v,
                                               const Tensor& mask = {}, const AttentionOptions& options = {});

/// The fused version: one op with a hand-written backward. The four products go to the fast
/// batched matmul (the heads of a projection and K^T are read in place, as strided views); the
/// scaling, masking and softmax are one pass over the scores, done in place, and the probabilities
/// are the only intermediate saved for backward:
///   dV = P^T dO,  dP = dO V^T,  dS = P * (dP - rowsum(dP * P)) * scale,  dQ = dS K,  dK = dS^T Q
/// Errors: ShapeError (ranks, sizes, a mask that does not broadcast), DTypeError (mixed or
/// non-floating dtypes, a non-bool mask), ValueError (dropout_p outside [0, 1) or no generator).
Attention scaled_dot_product_attention(const Variable& q, const Variable& k, const Variable& v, const Tensor& mask = {},
                                       const AttentionOptions& options = {});

}  // namespace gradformer
