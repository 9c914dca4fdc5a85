// The fused softmax and log_softmax (autograd/fused.h), row by row over the last dimension.
#include <algorithm>
#include <cmath>
#include <limits>

#include "autograd/arithmetic.h"
#include "autograd/fused.h"
#include "autograd/node.h"
#include "autograd/pointwise.h"
#include "autograd/reduce.h"
#include "autograd/rowwise.h"
#include "tensor/kernels/exp_kernel.h"

namespace gradformer {

// ---- the definition, composed from differentiable ops: slower, but every step an op whose gradient
// is already checked, so it is the reference the fused op below is tested against ----------------
// exp(x - max x) / sum exp(x - max x): subtracting the max changes nothing but prevents overflow.
Variable softmax_unfused(const Variable& x, int64_t dim) {
  const Variable e = exp(x - max(x, {dim}, true));
  return e / sum(e, {dim}, true);
}

Variable log_softmax_unfused(const Variable& x, int64_t dim) { return x - logsumexp(x, {dim}, true); }

// ---- the fused op: one node, one pass over each row, a hand-written backward ----------------------

// ---- softmax --------------------------------------------------------------------------------
// y_i = exp(x_i - m) / s,  m = max_j x_j,  s = sum_j exp(x_j - m)
// dL/dx_i = y_i (g_i - sum_j g_j y_j)
Variable softmax(const Variable& x, int64_t dim) {
  return rowwise::along_last(x, dim, "softmax", [](const Variable& xl) {
    const Tensor xc = xl.value().contiguous();
    const int64_t C = xc.dim() == 0 ? 1 : xc.size(-1), rows = xc.numel() / std::max<int64_t>(C, 1);
    Tensor y = Tensor::empty(xc.shape(), xc.dtype());
    // x: [rows, C] -> y: [rows, C]
    dispatch_floating(xc.dtype(), "softmax", [&]<class T>() {
      const T* px = xc.data<T>();
      T* py = y.data<T>();
      rowwise::for_each(rows, C, [&](int64_t r) {
        const T* xr = px + r * C;
        T* yr = py + r * C;
        T m = -std::numeric_limits<T>::infinity();
        for (int64_t j = 0; j < C; ++j) m = std::max(m, xr[j]);
        exp_shifted(xr, m, yr, C);  // the library's exp (tensor/kernels/exp_kernel.h)
        T s = 0;
        for (int64_t j = 0; j < C; ++j) s += yr[j];
        const T inv = 1 / s;
        for (int64_t j = 0; j < C; ++j) yr[j] *= inv;
      });
    });
    return record("softmax", y, {xl}, [y, rows, C](const Tensor& g, Grads& dx) {
      // forward:  yr[j] = exp(xr[j] - m) * inv   (inv = 1 / s), so dy_i/dx_j = y_i (delta_ij - y_j) and
      // dL/dx_j = sum_i g_i y_i (delta_ij - y_j) = y_j (g_j - sum_i g_i y_i): one dot product per row.
      const Tensor gc = g.contiguous();
      Tensor grad = Tensor::empty(y.shape(), y.dtype());
      // g, y: [rows, C] -> dx: [rows, C]
      dispatch_floating(y.dtype(), "softmax_backward", [&]<class T>() {
        const T *pg = gc.data<T>(), *py = y.data<T>();
        T* pd = grad.data<T>();
        rowwise::for_each(rows, C, [&](int64_t r) {
          const T *gr = pg + r * C, *yr = py + r * C;
          T dot = 0;
          for (int64_t j = 0; j < C; ++j) dot += gr[j] * yr[j];
          for (int64_t j = 0; j < C; ++j) pd[r * C + j] = yr[j] * (gr[j] - dot);
        });
      });
      dx[0] = grad;
    });
  });
}

// ---- log_softmax ----------------------------------------------------------------------------
// y_i = x_i - m - log sum_j exp(x_j - m)
// dL/dx_i = g_i - exp(y_i) sum_j g_j
Variable log_softmax(const Variable& x, int64_t dim) {
  return rowwise::along_last(x, dim, "log_softmax", [](const Variable& xl) {
    const Tensor xc = xl.value().contiguous();
    const int64_t C = xc.dim() == 0 ? 1 : xc.size(-1), rows = xc.numel() / std::max<int64_t>(C, 1);
    Tensor y = Tensor::empty(xc.shape(), xc.dtype());
    // x: [rows, C] -> y: [rows, C]
    dispatch_floating(xc.dtype(), "log_softmax", [&]<class T>() {
      const T* px = xc.data<T>();
      T* py = y.data<T>();
      rowwise::for_each(rows, C, [&](int64_t r) {
        const T* xr = px + r * C;
        T* yr = py + r * C;
        T m = -std::numeric_limits<T>::infinity();
        for (int64_t j = 0; j < C; ++j) m = std::max(m, xr[j]);
        exp_shifted(xr, m, yr, C);  // yr holds exp(x - m) until the last loop
        T s = 0;
        for (int64_t j = 0; j < C; ++j) s += yr[j];
        const T shift = m + std::log(s);
        for (int64_t j = 0; j < C; ++j) yr[j] = xr[j] - shift;
      });
    });
    return record("log_softmax", y, {xl}, [y, rows, C](const Tensor& g, Grads& dx) {
      // forward:  py[r * C + j] = xr[j] - shift   (shift = m + log(s)), so dy_i/dx_j = delta_ij - softmax_j
      // and dL/dx_j = g_j - softmax_j sum_i g_i, with softmax_j = exp(y_j).
      const Tensor gc = g.contiguous();
      Tensor grad = Tensor::empty(y.shape(), y.dtype());
      // g, y: [rows, C] -> dx: [rows, C]
      dispatch_floating(y.dtype(), "log_softmax_backward", [&]<class T>() {
        const T *pg = gc.data<T>(), *py = y.data<T>();
        T* pd = grad.data<T>();
        rowwise::for_each(rows, C, [&](int64_t r) {
          const T *gr = pg + r * C, *yr = py + r * C;
          T* dr = pd + r * C;
          T total = 0;
          for (int64_t j = 0; j < C; ++j) total += gr[j];
          exp_shifted(yr, T(0), dr, C);  // softmax = exp(y)
          for (int64_t j = 0; j < C; ++j) dr[j] = gr[j] - dr[j] * total;
        });
      });
      dx[0] = grad;
    });
  });
}

}  // namespace gradformer
