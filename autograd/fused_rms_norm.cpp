#include <algorithm>
#include <cmath>

#include "autograd/arithmetic.h"
#include "autograd/fused.h"
#include "autograd/node.h"
#include "autograd/pointwise.h"
#include "autograd/reduce.h"
#include "autograd/rowwise.h"
#include "tensor/kernels/parallel.h"

namespace gradformer {

// ---- the definition, composed from differentiable ops: the reference the fused op is tested against
// x / sqrt(mean(x^2) + eps) * weight
Variable rms_norm_unfused(const Variable& x, const Variable& weight, double eps) {
  const Variable y = x * rsqrt(mean(x * x, {-1}, true) + eps);
  return weight.defined() ? y * weight : y;
}

// ---- the fused op: one node, one pass over each row, a hand-written backward ----------------------

// RMSNorm over the last dimension D, for each row of x: [rows, D]:
//   rstd = 1 / sqrt(mean(x^2) + eps),  xhat = x rstd,  y = xhat w
// Backward, with gx = g w (the gradient reaching xhat); rstd depends on x through mean(x^2):
//   dx = rstd (gx - xhat mean(gx xhat))        dw = sum over rows of g xhat
// LayerNorm's backward without the mean(gx) term, since nothing is subtracted.
namespace {

using rowwise::lane_sum;

// dw is summed over rows in fixed blocks of kChunkRows rows, then the blocks in order: the same bits
// for every thread count (as layer_norm).
constexpr int64_t kChunkRows = 32;

template <class T>
void forward_rows(int64_t D, double eps, const T* x, const T* w, T* y, T* rstd, int64_t lo, int64_t hi) {
  for (int64_t r = lo; r < hi; ++r) {
    const T* xr = x + r * D;
    const T mean_square = lane_sum<T>(D, [&](int64_t j) { return xr[j] * xr[j]; }) / static_cast<T>(D);
    const T s = static_cast<T>(1 / std::sqrt(static_cast<double>(mean_square) + eps));
    rstd[r] = s;
    T* yr = y + r * D;
    for (int64_t j = 0; j < D; ++j) yr[j] = w ? xr[j] * s * w[j] : xr[j] * s;
  }
}

// Row blocks [lo, hi): dx for each row (null: not wanted) and each block's sum of g xhat: [chunks, D]
template <class T>
void backward_chunks(int64_t rows, int64_t D, const T* x, const T* g, const T* w, const T* rstd, T* dx, T* sum_gxhat,
                     int64_t lo, int64_t hi) {
  for (int64_t c = lo; c < hi; ++c)
    for (int64_t r = c * kChunkRows; r < std::min(rows, (c + 1) * kChunkRows); ++r) {
      const T *xr = x + r * D, *gr = g + r * D, s = rstd[r];
      T* sums = sum_gxhat + c * D;
      for (int64_t j = 0; j < D; ++j) sums[j] += gr[j] * (xr[j] * s);
      if (!dx) continue;
      const T mean_gx_xhat = lane_sum<T>(D, [&](int64_t j) { return gr[j] * w[j] * (xr[j] * s); }) / static_cast<T>(D);
      T* dxr = dx + r * D;
      for (int64_t j = 0; j < D; ++j) dxr[j] = s * (gr[j] * w[j] - xr[j] * s * mean_gx_xhat);
    }
}

}  // namespace

Variable rms_norm(const Variable& x, const Variable& weight, double eps) {
  const char* op = "rms_norm";
  if (x.dim() < 1) throw ShapeError(message(op, ": x needs at least one dimension, got shape ", x.shape()));
  const int64_t D = x.size(-1), rows = x.numel() / std::max<int64_t>(D, 1);
  if (weight.defined() && weight.shape() != Shape{D})
    throw ShapeError(
        message(op, ": weight has shape ", weight.shape(), ", expected [", D, "] for x of shape ", x.shape()));
  if (!(eps > 0)) throw ValueError(message(op, ": eps must be positive, got ", eps));
  const Tensor xc = x.value().contiguous();
  const Tensor w = weight.defined() ? weight.value().contiguous() : ones(Shape{D}, xc.dtype());
  Tensor y = Tensor::empty(xc.shape(), xc.dtype()), rstd = Tensor::empty(Shape{rows}, xc.dtype());
  // x: [rows, D], w: [D] -> y: [rows, D], rstd: [rows] (saved)
  dispatch_floating(xc.dtype(), op, [&]<class T>() {
    parallel_for(0, rows, grain_for(2 * D), [&](int64_t lo, int64_t hi) {
      forward_rows<T>(D, eps, xc.data<T>(), w.data<T>(), y.data<T>(), rstd.data<T>(), lo, hi);
    });
  });
  return record(op, y, {x, weight}, [xc, w, rstd, rows, D](const Tensor& g, Grads& dx) {
    const Tensor gc = g.contiguous();
    const int64_t chunks = (rows + kChunkRows - 1) / kChunkRows;
    Tensor grad = dx.wanted(0) ? Tensor::empty(xc.shape(), xc.dtype()) : Tensor();
    Tensor partial = zeros(Shape{chunks, D}, xc.dtype());  // each block's sum of g xhat
    dispatch_floating(xc.dtype(), "rms_norm_backward", [&]<class T>() {
      T* dx_data = grad.defined() ? grad.data<T>() : nullptr;
      // g, x: [rows, D] -> dx: [rows, D], partial: [chunks, D]
      parallel_for(0, chunks, grain_for(4 * kChunkRows * D), [&](int64_t lo, int64_t hi) {
        backward_chunks<T>(rows, D, xc.data<T>(), gc.data<T>(), w.data<T>(), rstd.data<T>(), dx_data, partial.data<T>(),
                           lo, hi);
      });
      if (dx.wanted(0)) dx[0] = grad;
      if (!dx.wanted(1)) return;
      Tensor dw = zeros(Shape{D}, xc.dtype());  // the blocks' sums, in order
      const T* p = partial.data<T>();
      T* pdw = dw.data<T>();
      for (int64_t c = 0; c < chunks; ++c)
        for (int64_t j = 0; j < D; ++j) pdw[j] += p[c * D + j];
      dx[1] = dw;
    });
  });
}

}  // namespace gradformer
