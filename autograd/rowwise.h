// Internal helpers of the fused kernels: work over the rows of the last dimension, in parallel.
#pragma once

#include <algorithm>
#include <cstdint>

#include "autograd/variable.h"
#include "autograd/views.h"
#include "tensor/parallel.h"

namespace gradformer::rowwise {

// Rows per thread: enough work (about 16K elements) to be worth waking a thread for.
inline int64_t grain(int64_t row_length) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(1, row_length)); }

// Runs fn(row) for every row of a [rows, C] problem, rows in parallel.
template <class F>
void for_each(int64_t rows, int64_t C, F fn) {
  parallel_for(0, rows, grain(C), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) fn(r);
  });
}

// A last-dimension op applied along `dim`: move dim to the end (a view), run it, move it back.
template <class F>
Variable along_last(const Variable& x, int64_t dim, const char* op, F last_dim_op) {
  const int d = normalize_dim(dim, x.dim(), op);
  if (d == x.dim() - 1) return last_dim_op(x);
  return transpose(last_dim_op(transpose(x, d, -1)), d, -1);
}

}  // namespace gradformer::rowwise
