// The one loop every elementwise kernel runs on: walk all elements of a shape for N operands at
// once, each with its own strides (0 along a broadcast dimension).
//
// Dimensions that are contiguous for every operand are merged first, so a contiguous tensor of any
// shape becomes one flat row, and the kernel's inner loop is a plain `for` the compiler vectorises.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "tensor/kernels/parallel.h"
#include "tensor/shape.h"

namespace gradformer {

/// Calls body(offsets, inner_strides, n) once per run of n elements along the innermost merged
/// dimension: operand k's elements are at offsets[k] + i * inner_strides[k], i in [0, n).
/// Offsets and strides are in elements. Runs in parallel for large shapes.
template <size_t N, class Body>
void for_each_row(const Shape& shape, const std::array<Shape, N>& strides, Body&& body, int64_t grain = grain_for(1)) {
  const int64_t numel = shape.numel();
  if (numel == 0) return;

  // Drop size-1 dimensions and merge dimension d into d-1 when, for every operand,
  // stepping once along d-1 is the same as stepping shape[d] times along d.
  Shape dims;
  std::array<Shape, N> st;
  for (int d = 0; d < shape.rank(); ++d) {
    if (shape[d] == 1) continue;
    bool mergeable = !dims.empty();
    for (size_t k = 0; k < N && mergeable; ++k) mergeable = st[k].back() == strides[k][d] * shape[d];
    if (mergeable) {
      dims[dims.rank() - 1] *= shape[d];
      for (size_t k = 0; k < N; ++k) st[k][st[k].rank() - 1] = strides[k][d];
    } else {
      dims.push_back(shape[d]);
      for (size_t k = 0; k < N; ++k) st[k].push_back(strides[k][d]);
    }
  }
  if (dims.empty()) {  // a single element
    dims.push_back(1);
    for (size_t k = 0; k < N; ++k) st[k].push_back(0);
  }
  const int r = dims.rank();
  std::array<int64_t, N> inner_strides;
  for (size_t k = 0; k < N; ++k) inner_strides[k] = st[k][r - 1];

  // Walk the linear element range [lo, hi) row by row.
  parallel_for(0, numel, grain, [&](int64_t lo, int64_t hi) {
    std::array<int64_t, kMaxRank> index{};
    std::array<int64_t, N> offsets{};
    for (int64_t rem = lo, d = r - 1; d >= 0; --d) {
      index[d] = rem % dims[d];
      rem /= dims[d];
      for (size_t k = 0; k < N; ++k) offsets[k] += index[d] * st[k][d];
    }
    for (int64_t pos = lo; pos < hi;) {
      const int64_t n = std::min(dims[r - 1] - index[r - 1], hi - pos);
      body(offsets, inner_strides, n);
      pos += n;
      index[r - 1] += n;
      for (size_t k = 0; k < N; ++k) offsets[k] += n * st[k][r - 1];
      for (int d = r - 1; d > 0 && index[d] == dims[d]; --d) {  // carry into the next dimension
        index[d] = 0;
        ++index[d - 1];
        for (size_t k = 0; k < N; ++k) offsets[k] += st[k][d - 1] - dims[d] * st[k][d];
      }
    }
  });
}

/// The strides that make `t_shape`/`t_strides` broadcast to `out`: aligned from the right,
/// 0 along every dimension the operand lacks or has size 1 in.
inline Shape broadcast_strides(const Shape& t_shape, const Shape& t_strides, const Shape& out) {
  Shape s;
  const int lead = out.rank() - t_shape.rank();
  for (int d = 0; d < out.rank(); ++d) {
    const int td = d - lead;
    s.push_back(td >= 0 && t_shape[td] != 1 ? t_strides[td] : 0);
  }
  return s;
}

}  // namespace gradformer
