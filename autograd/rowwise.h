// Internal helpers of the fused kernels: work over the rows of the last dimension, in parallel.
#pragma once

#include <algorithm>
#include <cstdint>

#include "autograd/variable.h"
#include "autograd/views.h"
#include "tensor/kernels/parallel.h"

namespace gradformer::rowwise {

// Runs fn(row) for every row of a [rows, C] problem, rows in parallel. The fused kernels make two or
// three passes over a row and take an exp or a sqrt per element: 2 units of work per element.
template <class F>
void for_each(int64_t rows, int64_t C, F fn) {
  parallel_for(0, rows, grain_for(2 * C), [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) fn(r);
  });
}

// Runs fn(first_row, count) over blocks of up to kBlock consecutive rows (count < kBlock for the last
// block only), blocks in parallel: for kernels that work on several rows side by side.
template <int64_t kBlock, class F>
void for_each_block(int64_t rows, int64_t C, F fn) {
  parallel_for(0, (rows + kBlock - 1) / kBlock, grain_for(2 * C * kBlock), [&](int64_t lo, int64_t hi) {
    for (int64_t b = lo; b < hi; ++b) fn(b * kBlock, std::min(kBlock, rows - b * kBlock));
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
