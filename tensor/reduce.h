// Reductions over any set of axes. `axes` may be negative (-1 = last); an empty list means every
// axis. keepdim keeps each reduced axis with size 1, so the result broadcasts against the input:
//   x - max(x, {-1}, true)   // [B, T] - [B, 1]
// float32 inputs accumulate in double; each output is computed by one thread in a fixed order, so
// results do not depend on the thread count.
#pragma once

#include <vector>

#include "tensor/tensor.h"

namespace gradformer {

using Axes = std::vector<int64_t>;

Tensor sum(const Tensor& t, const Axes& axes = {}, bool keepdim = false);   // numeric
Tensor mean(const Tensor& t, const Axes& axes = {}, bool keepdim = false);  // floating
Tensor max(const Tensor& t, const Axes& axes = {}, bool keepdim = false);   // NaN propagates
Tensor min(const Tensor& t, const Axes& axes = {}, bool keepdim = false);
/// Index (int64) of the first largest element along `dim`.
Tensor argmax(const Tensor& t, int64_t dim, bool keepdim = false);
/// Variance with Bessel's correction by default: sum((x - mean)^2) / (n - correction).
/// LayerNorm uses correction 0 (the biased variance). Computed in two passes, for stability.
Tensor var(const Tensor& t, const Axes& axes = {}, bool keepdim = false, int64_t correction = 1);
/// log(sum(exp(x))) computed as m + log(sum(exp(x - m))) with m = max(x): no overflow for large x.
Tensor logsumexp(const Tensor& t, const Axes& axes = {}, bool keepdim = false);

/// Sums t down to `shape`, the inverse of broadcasting `shape` up to t.shape(): the gradient of a
/// broadcast operand. ShapeError if `shape` does not broadcast to t.shape().
Tensor sum_to(const Tensor& t, const Shape& shape);

}  // namespace gradformer
