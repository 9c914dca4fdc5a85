// Selecting and combining along an axis: embedding lookups (index_select), picking each row's
// target log-probability (gather), and the scatter-adds that are their gradients.
#pragma once

#include <vector>

#include "tensor/tensor.h"

namespace gradformer {

/// Rows of `t` along `dim` picked by `index` (int64, any shape):
///   t: [V, D], index: [B, T] -> out: [B, T, D]   (an embedding lookup, dim 0)
/// In general out.shape = t.shape[:dim] + index.shape + t.shape[dim+1:].
Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index);

/// out[i][j][k] = t[i][index[i][j][k]][k] for dim 1 (and likewise for any dim), as torch.gather:
/// index has t's rank, out has index's shape.   logp: [N, V], target: [N, 1] -> [N, 1]
Tensor gather(const Tensor& t, int64_t dim, const Tensor& index);

/// The adjoint of index_select: dst's slices at `index` along `dim` += the matching slices of src.
/// Repeated indices accumulate. src.shape must equal index_select(dst, dim, index).shape.
void index_add_(Tensor& dst, int64_t dim, const Tensor& index, const Tensor& src);

/// The adjoint of gather: dst[i][index[i][j][k]][k] += src[i][j][k] (for dim 1). Repeats accumulate.
void scatter_add_(Tensor& dst, int64_t dim, const Tensor& index, const Tensor& src);

/// Joins tensors along an existing dimension; all other sizes must match.
Tensor concat(const std::vector<Tensor>& tensors, int64_t dim);
/// Joins equal-shaped tensors along a new dimension.
Tensor stack(const std::vector<Tensor>& tensors, int64_t dim);

}  // namespace gradformer
