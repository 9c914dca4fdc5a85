// Differentiable views and joins. A view's backward is the same view run in reverse: the gradient
// of a transpose is the transposed gradient, of a slice a zero tensor with the slice filled in.
// Forward and backward make views, not copies, wherever the tensor layer can.
#pragma once

#include <vector>

#include "autograd/variable.h"

namespace gradformer {

Variable view(const Variable& x, const Shape& shape);     // ShapeError if the strides cannot express it
Variable reshape(const Variable& x, const Shape& shape);  // copies only when a view is impossible
Variable transpose(const Variable& x, int64_t dim0, int64_t dim1);
Variable permute(const Variable& x, const std::vector<int64_t>& order);
Variable slice(const Variable& x, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
Variable narrow(const Variable& x, int64_t dim, int64_t start, int64_t length);
Variable select(const Variable& x, int64_t dim, int64_t index);
Variable squeeze(const Variable& x, int64_t dim);
Variable unsqueeze(const Variable& x, int64_t dim);
Variable expand(const Variable& x, const Shape& shape);
Variable contiguous(const Variable& x);

/// Joins along an existing dimension; the gradient of piece k is the matching narrow of the gradient.
Variable concat(const std::vector<Variable>& xs, int64_t dim);
/// Joins equal shapes along a new dimension; the gradient of piece k is select(dim, k) of the gradient.
Variable stack(const std::vector<Variable>& xs, int64_t dim);

}  // namespace gradformer
