// Differentiable indexing: embedding lookups (index_select) and picking one entry per row (gather).
// Their gradients scatter back with +=, so a row looked up twice (a token that appears twice in a
// batch) receives both contributions.
#pragma once

#include "autograd/variable.h"

namespace gradformer {

/// Slices of x along dim picked by index (int64, any shape).  weight: [V, D], ids: [B, T] -> [B, T, D]
Variable index_select(const Variable& x, int64_t dim, const Tensor& index);
/// out[i][j] = x[i][index[i][j]] for dim 1 (as torch.gather); index has x's rank.
Variable gather(const Variable& x, int64_t dim, const Tensor& index);
/// An embedding lookup: rows of weight [V, D] for each id.  ids: [B, T] -> [B, T, D]
inline Variable embedding(const Variable& weight, const Tensor& ids) { return index_select(weight, 0, ids); }

}  // namespace gradformer
