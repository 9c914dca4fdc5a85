// Differentiable reductions over any set of axes (negative counts from the end; empty = all).
// A reduction's gradient is the upstream gradient broadcast back over the reduced axes, weighted
// by how each input element contributed.
#pragma once

#include "autograd/variable.h"
#include "tensor/reduce.h"

namespace gradformer {

Variable sum(const Variable& x, const Axes& axes = {}, bool keepdim = false);
Variable mean(const Variable& x, const Axes& axes = {}, bool keepdim = false);
/// The gradient goes to the maximal elements, split evenly among ties.
Variable max(const Variable& x, const Axes& axes = {}, bool keepdim = false);
/// sum((x - mean)^2) / (n - correction); LayerNorm uses correction 0.
Variable var(const Variable& x, const Axes& axes = {}, bool keepdim = false, int64_t correction = 1);
Variable logsumexp(const Variable& x, const Axes& axes = {}, bool keepdim = false);

}  // namespace gradformer
