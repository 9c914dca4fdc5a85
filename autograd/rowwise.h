// Internal helpers of the fused kernels: work over the rows of the last dimension, in parallel.
#pragma once

#include <algorithm>
#include <cstdint>

#include "autograd/variable.h"
#include "autograd/views.h"
#include "tensor/kernels/parallel.h"
#include "tensor/kernels/vector_loops.h"

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

// A row's sums are kept in kLanes running sums (element j goes to lane j % kLanes), added pairwise at
// the end. One running sum would wait for each add to finish (about four cycles); sixteen independent
// ones are what the compiler puts in vector registers of whatever width the CPU has (four floats with
// SSE, sixteen with AVX-512). The additions happen in the same order on every one of them, so the bits
// do not depend on the CPU, the build's vector width or the thread count.
constexpr int kLanes = 16;

// sum of term(j) for j in [0, n), in kLanes lanes (the last n % kLanes terms in a sum of their own:
// indexing a lane by a run-time number would keep the lanes in memory), accumulated in A
template <class A, class F>
GRADFORMER_ALWAYS_INLINE A lane_sum(int64_t n, F term) {
  A lane[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) lane[l] += term(j + l);
  A rest = 0;
  for (; j < n; ++j) rest += term(j);
  for (int width = kLanes / 2; width > 0; width /= 2)  // lanes l and l + width, halving: a fixed tree
    for (int l = 0; l < width; ++l) lane[l] += lane[l + width];
  return lane[0] + rest;
}

}  // namespace gradformer::rowwise
