#include <algorithm>
#include <cmath>

#include "autograd/arithmetic.h"
#include "autograd/fused.h"
#include "autograd/node.h"
#include "autograd/pointwise.h"
#include "autograd/reduce.h"
#include "autograd/rowwise.h"
#include "tensor/kernels/parallel.h"
#include "tensor/kernels/vector_loops.h"

namespace gradformer {

// ---- the definition, composed from differentiable ops: slower, but every step an op whose gradient
// is already checked, so it is the reference the fused op below is tested against ----------------
// (x - mean) / sqrt(var + eps) * weight + bias, the variance biased (divided by D)
Variable layer_norm_unfused(const Variable& x, const Variable& weight, const Variable& bias, double eps) {
  const Variable centered = x - mean(x, {-1}, true);
  Variable y = centered * rsqrt(var(x, {-1}, true, /*correction=*/0) + eps);
  if (weight.defined()) y = y * weight;
  if (bias.defined()) y = y + bias;
  return y;
}

// ---- the fused op: one node, one pass over each row, a hand-written backward ----------------------

// LayerNorm over the last dimension D, for each row of x: [rows, D]:
//   mu = mean(x),  rstd = 1 / sqrt(mean((x - mu)^2) + eps),  xhat = (x - mu) rstd,  y = xhat w + b
// Backward, with gx = g w (the gradient reaching xhat):
//   dx = rstd (gx - mean(gx) - xhat mean(gx xhat))      (the two means undo mu's and rstd's dependence on x)
//   dw = sum over rows of g xhat,   db = sum over rows of g
namespace {

using rowwise::lane_sum;

// Backward sums dw and db over rows in fixed blocks of kChunkRows rows, each block's partial sums
// in row order, the blocks' sums then added in order: the same bits for every thread count, and the
// rows of g and x are read once for dx, dw and db together.
constexpr int64_t kChunkRows = 32;

// One row of the backward pass: dx, and the row's terms added into its block's sums of g xhat and g.
// (restrict: the outputs overlap none of the inputs, which lets the compiler use vector registers.)
template <class T>
GRADFORMER_ALWAYS_INLINE void row_backward(int64_t D, const T* __restrict x, const T* __restrict g,
                                           const T* __restrict w, T m, T s, T mean_gx, T mean_gx_xhat, T* __restrict dx,
                                           T* __restrict sum_gxhat, T* __restrict sum_g) {
  for (int64_t j = 0; j < D; ++j) {
    const T xhat = (x[j] - m) * s;
    dx[j] = s * (g[j] * w[j] - mean_gx - xhat * mean_gx_xhat);
    sum_gxhat[j] += g[j] * xhat;
    sum_g[j] += g[j];
  }
}

// The forward pass over rows [lo, hi): x: [rows, D], w, b: [D] or null -> y: [rows, D], mean, rstd: [rows]
template <class T>
struct ForwardRows {
  int64_t D;
  double eps;
  const T *x, *w, *b;
  T *y, *mean, *rstd;
};

template <class T>
GRADFORMER_ALWAYS_INLINE void forward_rows_body(const ForwardRows<T>& a, int64_t lo, int64_t hi) {
  const int64_t D = a.D;
  for (int64_t r = lo; r < hi; ++r) {
    const T* xr = a.x + r * D;
    // the mean, then the variance from the deviations (a sum of squares: never negative)
    const T m = lane_sum<T>(D, [&](int64_t j) { return xr[j]; }) / static_cast<T>(D);
    const T var = lane_sum<T>(D, [&](int64_t j) { return (xr[j] - m) * (xr[j] - m); }) / static_cast<T>(D);
    const T s = static_cast<T>(1 / std::sqrt(static_cast<double>(var) + a.eps));
    a.mean[r] = m, a.rstd[r] = s;
    T* yr = a.y + r * D;
    for (int64_t j = 0; j < D; ++j) {
      const T xhat = (xr[j] - m) * s;
      yr[j] = (a.w ? xhat * a.w[j] : xhat) + (a.b ? a.b[j] : T(0));
    }
  }
}

// The backward pass over row blocks [lo, hi) of kChunkRows rows: g, x: [rows, D], w: [D] ->
// dx: [rows, D] (null: not wanted), each block's sums of g xhat and of g: [chunks, D] each
template <class T>
struct BackwardChunks {
  int64_t rows, D;
  const T *x, *g, *mean, *rstd, *w;
  T *dx, *sum_gxhat, *sum_g;
};

template <class T>
GRADFORMER_ALWAYS_INLINE void backward_chunks_body(const BackwardChunks<T>& a, int64_t lo, int64_t hi) {
  const int64_t D = a.D;
  for (int64_t c = lo; c < hi; ++c)
    for (int64_t r = c * kChunkRows; r < std::min(a.rows, (c + 1) * kChunkRows); ++r) {
      const T *xr = a.x + r * D, *gr = a.g + r * D, *pw = a.w, m = a.mean[r], s = a.rstd[r];
      T *sum_gxhat = a.sum_gxhat + c * D, *sum_g = a.sum_g + c * D;
      if (!a.dx) {
        for (int64_t j = 0; j < D; ++j) sum_gxhat[j] += gr[j] * ((xr[j] - m) * s), sum_g[j] += gr[j];
        continue;
      }
      auto gx = [gr, pw](int64_t j) { return gr[j] * pw[j]; };
      const T mean_gx = lane_sum<T>(D, gx) / static_cast<T>(D);
      const T mean_gx_xhat = lane_sum<T>(D, [&](int64_t j) { return gx(j) * ((xr[j] - m) * s); }) / static_cast<T>(D);
      row_backward(D, xr, gr, pw, m, s, mean_gx, mean_gx_xhat, a.dx + r * D, sum_gxhat, sum_g);
    }
}

// Each body built twice (tensor/kernels/vector_loops.h): for any CPU, and with AVX2's wider vectors; the
// same bits either way. The wider build ran the backward about 1.6 times as fast (800 rows of 128
// or 512, one thread, AMD EPYC Zen 4).
template <class T>
void forward_rows(const ForwardRows<T>& a, int64_t lo, int64_t hi) {
  forward_rows_body(a, lo, hi);
}
template <class T>
void backward_chunks(const BackwardChunks<T>& a, int64_t lo, int64_t hi) {
  backward_chunks_body(a, lo, hi);
}
template <class T>
GRADFORMER_TARGET_AVX2 void forward_rows_avx2(const ForwardRows<T>& a, int64_t lo, int64_t hi) {
  forward_rows_body(a, lo, hi);
}
template <class T>
GRADFORMER_TARGET_AVX2 void backward_chunks_avx2(const BackwardChunks<T>& a, int64_t lo, int64_t hi) {
  backward_chunks_body(a, lo, hi);
}

}  // namespace

Variable layer_norm(const Variable& x, const Variable& weight, const Variable& bias, double eps) {
  const char* op = "layer_norm";
  if (x.dim() < 1) throw ShapeError(message(op, ": x needs at least one dimension, got shape ", x.shape()));
  const int64_t D = x.size(-1), rows = x.numel() / std::max<int64_t>(D, 1);
  for (const Variable* p : {&weight, &bias})
    if (p->defined() && p->shape() != Shape{D})
      throw ShapeError(message(op, ": ", p == &weight ? "weight" : "bias", " has shape ", p->shape(), ", expected [", D,
                               "] for x of shape ", x.shape()));
  if (!(eps > 0)) throw ValueError(message(op, ": eps must be positive, got ", eps));

  const Tensor xc = x.value().contiguous();
  const Tensor w = weight.defined() ? weight.value().contiguous() : Tensor();
  const Tensor b = bias.defined() ? bias.value().contiguous() : Tensor();
  Tensor y = Tensor::empty(xc.shape(), xc.dtype());
  Tensor mean = Tensor::empty(Shape{rows}, xc.dtype()), rstd = Tensor::empty(Shape{rows}, xc.dtype());  // saved
  // x: [rows, D], w, b: [D] -> y: [rows, D], mean, rstd: [rows]
  dispatch_floating(xc.dtype(), op, [&]<class T>() {
    const T* px = xc.data<T>();
    const T* pw = w.defined() ? w.data<T>() : nullptr;
    const T* pb = b.defined() ? b.data<T>() : nullptr;
    const ForwardRows<T> rows_of{.D = D,
                                 .eps = eps,
                                 .x = px,
                                 .w = pw,
                                 .b = pb,
                                 .y = y.data<T>(),
                                 .mean = mean.data<T>(),
                                 .rstd = rstd.data<T>()};
    parallel_for(0, rows, grain_for(2 * D), [&](int64_t lo, int64_t hi) {
      run_built_twice(forward_rows_avx2<T>, forward_rows<T>, rows_of, lo, hi);
    });
  });

  // without a weight, backward multiplies by ones (no test inside its loops)
  const Tensor w_or_ones = w.defined() ? w : ones(Shape{D}, xc.dtype());
  return record(op, y, {x, weight, bias}, [xc, w = w_or_ones, mean, rstd, rows, D](const Tensor& g, Grads& dx) {
    // forward:  const T xhat = (xr[j] - m) * s;
    //           yr[j] = (a.w ? xhat * a.w[j] : xhat) + (a.b ? a.b[j] : T(0));
    // so dL/dxhat = g w, dL/dw = sum over rows of g xhat, dL/db = sum over rows of g, and through
    // xhat's dependence on x (directly, through m and through s): the formula at the top of the file.
    const Tensor gc = g.contiguous();
    const bool want_x = dx.wanted(0), want_params = dx.wanted(1) || dx.wanted(2);
    const int64_t chunks = (rows + kChunkRows - 1) / kChunkRows;
    Tensor grad = want_x ? Tensor::empty(xc.shape(), xc.dtype()) : Tensor();
    Tensor partial = zeros(Shape{2, chunks, D}, xc.dtype());  // each block's sums of g xhat and of g
    dispatch_floating(xc.dtype(), "layer_norm_backward", [&]<class T>() {
      T* p_gxhat = partial.data<T>();
      T* p_g = p_gxhat + chunks * D;
      const BackwardChunks<T> chunks_of{.rows = rows,
                                        .D = D,
                                        .x = xc.data<T>(),
                                        .g = gc.data<T>(),
                                        .mean = mean.data<T>(),
                                        .rstd = rstd.data<T>(),
                                        .w = w.data<T>(),
                                        .dx = want_x ? grad.data<T>() : nullptr,
                                        .sum_gxhat = p_gxhat,
                                        .sum_g = p_g};
      // g, x: [rows, D] -> dx: [rows, D], partial: [2, chunks, D]
      parallel_for(0, chunks, grain_for(4 * kChunkRows * D), [&](int64_t lo, int64_t hi) {
        run_built_twice(backward_chunks_avx2<T>, backward_chunks<T>, chunks_of, lo, hi);
      });
      if (want_x) dx[0] = grad;
      if (!want_params) return;
      // dw = sum over blocks of sum_gxhat, db = sum over blocks of sum_g, blocks in order: [D] each
      Tensor dw = zeros(Shape{D}, xc.dtype()), db = zeros(Shape{D}, xc.dtype());
      T *pdw = dw.data<T>(), *pdb = db.data<T>();
      for (int64_t c = 0; c < chunks; ++c)
        for (int64_t j = 0; j < D; ++j) pdw[j] += p_gxhat[c * D + j], pdb[j] += p_g[c * D + j];
      if (dx.wanted(1)) dx[1] = dw;
      if (dx.wanted(2)) dx[2] = db;
    });
  });
}

}  // namespace gradformer
