#include <algorithm>
#include <cmath>

#include "autograd/fused.h"
#include "autograd/node.h"
#include "autograd/rowwise.h"

namespace gradformer {

// LayerNorm over the last dimension D, for each row of x: [rows, D]:
//   mu = mean(x),  rstd = 1 / sqrt(mean((x - mu)^2) + eps),  xhat = (x - mu) rstd,  y = xhat w + b
// Backward, with gx = g w (the gradient reaching xhat):
//   dx = rstd (gx - mean(gx) - xhat mean(gx xhat))      (the two means undo mu's and rstd's dependence on x)
//   dw = sum over rows of g xhat,   db = sum over rows of g
namespace {
constexpr int64_t kRows = 8;  // rows normalised side by side
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
    T *py = y.data<T>(), *pm = mean.data<T>(), *ps = rstd.data<T>();
    // Eight rows at a time: a running sum waits for each add to finish (about four cycles), eight
    // independent sums do not. Each row is still summed in its own order, so the bits are those of
    // one row at a time.
    rowwise::for_each_block<kRows>(rows, D, [&](int64_t r0, int64_t n) {
      const T* xr[kRows];
      for (int64_t i = 0; i < kRows; ++i) xr[i] = px + (r0 + std::min(i, n - 1)) * D;  // past the end: row r0+n-1 again
      double sum[kRows] = {}, squares[kRows] = {}, mu[kRows];  // in double: var never goes negative
      for (int64_t j = 0; j < D; ++j)
        for (int64_t i = 0; i < kRows; ++i) sum[i] += xr[i][j];
      for (int64_t i = 0; i < kRows; ++i) mu[i] = sum[i] / static_cast<double>(D);
      for (int64_t j = 0; j < D; ++j)
        for (int64_t i = 0; i < kRows; ++i) squares[i] += (xr[i][j] - mu[i]) * (xr[i][j] - mu[i]);
      for (int64_t i = 0; i < n; ++i) {
        const int64_t r = r0 + i;
        const T m = static_cast<T>(mu[i]), s = static_cast<T>(1 / std::sqrt(squares[i] / static_cast<double>(D) + eps));
        pm[r] = m, ps[r] = s;
        T* yr = py + r * D;
        for (int64_t j = 0; j < D; ++j) {
          const T xhat = (xr[i][j] - m) * s;
          yr[j] = (pw ? xhat * pw[j] : xhat) + (pb ? pb[j] : T(0));
        }
      }
    });
  });

  return record(op, y, {x, weight, bias}, [xc, w, mean, rstd, rows, D](const Tensor& g, Grads& dx) {
    // forward:  const T xhat = (xr[j] - m) * s;
    //           yr[j] = (pw ? xhat * pw[j] : xhat) + (pb ? pb[j] : T(0));
    // so dL/dxhat = g w, dL/dw = sum over rows of g xhat, dL/db = sum over rows of g, and through
    // xhat's dependence on x (directly, through m and through s): the formula at the top of the file.
    const Tensor gc = g.contiguous();
    dispatch_floating(xc.dtype(), "layer_norm_backward", [&]<class T>() {
      const T *px = xc.data<T>(), *pg = gc.data<T>(), *pm = mean.data<T>(), *ps = rstd.data<T>();
      const T* pw = w.defined() ? w.data<T>() : nullptr;
      if (dx.wanted(0)) {
        Tensor grad = Tensor::empty(xc.shape(), xc.dtype());
        T* pd = grad.data<T>();
        // g, x: [rows, D] -> dx: [rows, D]
        rowwise::for_each_block<kRows>(rows, D, [&](int64_t r0, int64_t n) {
          const T *xr[kRows], *gr[kRows], *mr[kRows], *sr[kRows];  // eight rows side by side, as forward
          for (int64_t i = 0; i < kRows; ++i) {
            const int64_t r = r0 + std::min(i, n - 1);
            xr[i] = px + r * D, gr[i] = pg + r * D, mr[i] = pm + r, sr[i] = ps + r;
          }
          T sum_gx[kRows] = {}, sum_gx_xhat[kRows] = {};
          for (int64_t j = 0; j < D; ++j)
            for (int64_t i = 0; i < kRows; ++i) {
              const T gx = pw ? gr[i][j] * pw[j] : gr[i][j], xhat = (xr[i][j] - *mr[i]) * *sr[i];
              sum_gx[i] += gx;
              sum_gx_xhat[i] += gx * xhat;
            }
          for (int64_t i = 0; i < n; ++i) {
            const T mean_gx = sum_gx[i] / static_cast<T>(D), mean_gx_xhat = sum_gx_xhat[i] / static_cast<T>(D);
            T* dr = pd + (r0 + i) * D;
            for (int64_t j = 0; j < D; ++j) {
              const T gx = pw ? gr[i][j] * pw[j] : gr[i][j], xhat = (xr[i][j] - *mr[i]) * *sr[i];
              dr[j] = *sr[i] * (gx - mean_gx - xhat * mean_gx_xhat);
            }
          }
        });
        dx[0] = grad;
      }
      if (!dx.wanted(1) && !dx.wanted(2)) return;
      // g, x: [rows, D] -> dw, db: [D]. Parallel over columns, each summing its rows in order, so the
      // result does not depend on the thread count; a column is two sums over its rows.
      Tensor dw = Tensor::empty(Shape{D}, xc.dtype()), db = Tensor::empty(Shape{D}, xc.dtype());
      T *pdw = dw.data<T>(), *pdb = db.data<T>();
      parallel_for(0, D, grain_for(2 * rows), [&](int64_t lo, int64_t hi) {
        std::fill(pdw + lo, pdw + hi, T(0));
        std::fill(pdb + lo, pdb + hi, T(0));
        for (int64_t r = 0; r < rows; ++r) {
          const T *xr = px + r * D, *gr = pg + r * D;
          for (int64_t j = lo; j < hi; ++j) {
            pdw[j] += gr[j] * (xr[j] - pm[r]) * ps[r];
            pdb[j] += gr[j];
          }
        }
      });
      if (dx.wanted(1)) dx[1] = dw;
      if (dx.wanted(2)) dx[2] = db;
    });
  });
}

}  // namespace gradformer
