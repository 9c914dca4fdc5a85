// The fused cross-entropy from logits (autograd/fused.h): one pass per row computes the
// log-sum-exp and the loss; backward turns the saved log-sum-exp into softmax minus the target.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "autograd/arithmetic.h"
#include "autograd/fused.h"
#include "autograd/index.h"
#include "autograd/node.h"
#include "autograd/pointwise.h"
#include "autograd/reduce.h"
#include "autograd/rowwise.h"
#include "autograd/views.h"
#include "tensor/elementwise.h"
#include "tensor/kernels/exp_kernel.h"
#include "tensor/reduce.h"

namespace gradformer {
// ---- the definition, composed from differentiable ops: slower, but every step an op whose gradient
// is already checked, so it is the reference the fused op below is tested against ----------------
// -(1 - eps) log p_target - eps mean_c log p_c, averaged over the targets that are not ignored.
Variable cross_entropy_unfused(const Variable& logits, const Tensor& target, const CrossEntropyOptions& options) {
  const int64_t C = logits.size(-1);
  const Variable logp = reshape(log_softmax_unfused(logits, -1), {-1, C});  // [N, C]
  const Tensor flat = target.reshape({-1, 1});                              // [N, 1]
  const Tensor ignored = eq(flat, full({1}, static_cast<double>(options.ignore_index), DType::Int64));
  const Tensor safe_target = where(ignored, zeros({1}, DType::Int64), flat);  // any valid index; masked below
  const Variable nll = -gather(logp, 1, safe_target);                         // [N, 1]
  const Variable smooth = -mean(logp, {-1}, true);                            // [N, 1]
  const Variable per_row = nll * (1 - options.label_smoothing) + smooth * options.label_smoothing;
  const Tensor keep = logical_not(ignored).to(logits.dtype());
  const double count = sum(keep).item();
  return sum(per_row * Variable(keep)) / std::max(count, 1.0);
}

// ---- the fused op: one node, one pass over each row, a hand-written backward ----------------------

namespace {
constexpr int64_t kExpBlock = 256;  // exps a block at a time (the forward's: 1 KiB of floats on the stack)
}  // namespace

// For row n with target t, lse = log sum_c exp(x_c), and q = (1 - eps) onehot(t) + eps / C:
//   loss_n = -sum_c q_c (x_c - lse) = lse - (1 - eps) x_t - (eps / C) sum_c x_c
//   loss   = sum over non-ignored rows of loss_n / (their count)
//   dL/dx_c = g / count * (softmax(x)_c - q_c) on non-ignored rows, 0 on ignored ones
Variable cross_entropy(const Variable& logits, const Tensor& target, const CrossEntropyOptions& options) {
  const char* op = "cross_entropy";
  if (logits.dim() < 1)
    throw ShapeError(message(op, ": logits need at least one dimension, got shape ", logits.shape()));
  const int64_t C = logits.size(-1), rows = logits.numel() / std::max<int64_t>(C, 1);
  if (target.dtype() != DType::Int64) throw DTypeError(message(op, ": target must be int64, got ", target.dtype()));
  Shape expected = logits.shape();
  expected.erase(expected.rank() - 1);
  if (target.shape() != expected)
    throw ShapeError(message(op, ": logits ", logits.shape(),
                             " need a target of shape [...] matching all but the last dimension, got ",
                             target.shape()));
  const double eps = options.label_smoothing;
  if (!(eps >= 0 && eps <= 1)) throw ValueError(message(op, ": label_smoothing must be in [0, 1], got ", eps));
  const Tensor t = target.contiguous();
  const int64_t* pt = t.data<int64_t>();
  int64_t count = 0;
  for (int64_t r = 0; r < rows; ++r) {
    if (pt[r] == options.ignore_index) continue;
    if (pt[r] < 0 || pt[r] >= C)
      throw IndexError(message(op, ": target ", pt[r], " at position ", r, " is outside [0, ", C,
                               ") and is not ignore_index ", options.ignore_index));
    ++count;
  }

  const Tensor x = logits.value().contiguous();
  Tensor lse = Tensor::empty(Shape{rows}, x.dtype());  // saved for backward: softmax = exp(x - lse)
  const Tensor loss = dispatch_floating(x.dtype(), op, [&]<class T>() {
    const T* px = x.data<T>();
    T* pl = lse.data<T>();
    std::vector<double> row_loss(static_cast<size_t>(rows), 0.0);
    // logits: [rows, C], target: [rows] -> row_loss: [rows]
    rowwise::for_each(rows, C, [&](int64_t r) {
      if (pt[r] == options.ignore_index) return;
      const T* xr = px + r * C;
      T m = -std::numeric_limits<T>::infinity();
      for (int64_t c = 0; c < C; ++c) m = std::max(m, xr[c]);
      // s = sum_c exp(x_c - m): the exps in blocks (the library's exp, tensor/kernels/exp_kernel.h), summed in double
      double s = 0, total = 0;
      T block[kExpBlock];
      for (int64_t c0 = 0; c0 < C; c0 += kExpBlock) {
        const int64_t n = std::min(kExpBlock, C - c0);
        exp_shifted(xr + c0, m, block, n);
        for (int64_t c = 0; c < n; ++c) s += block[c];
      }
      for (int64_t c = 0; c < C; ++c) total += xr[c];
      const double row_lse = m + std::log(s);
      pl[r] = static_cast<T>(row_lse);
      row_loss[static_cast<size_t>(r)] = row_lse - (1 - eps) * xr[pt[r]] - eps / static_cast<double>(C) * total;
    });
    double sum = 0;  // in row order, so the result does not depend on the thread count
    for (double l : row_loss) sum += l;
    return scalar(count == 0 ? 0.0 : sum / static_cast<double>(count), x.dtype());
  });

  return record(op, loss, {logits},
                [x, t, lse, count, rows, C, eps, ignore = options.ignore_index](const Tensor& g, Grads& dx) {
                  // forward:  row_loss[r] = row_lse - (1 - eps) * xr[pt[r]] - eps / C * total   (total = sum_c xr[c])
                  // d row_lse / d x_c = exp(x_c - lse) = softmax_c, d x_t / d x_c = onehot_c, d total / d x_c = 1, so
                  // d row_loss / d x_c = softmax_c - (1 - eps) onehot_c - eps / C = softmax_c - q_c; then times g /
                  // count.
                  Tensor grad = Tensor::empty(x.shape(), x.dtype());
                  // g: [] -> dx: [rows, C]
                  dispatch_floating(x.dtype(), "cross_entropy_backward", [&]<class T>() {
                    const T *px = x.data<T>(), *pl = lse.data<T>();
                    const int64_t* pt = t.data<int64_t>();
                    T* pd = grad.data<T>();
                    const T scale = count == 0 ? T(0) : static_cast<T>(g.item() / static_cast<double>(count));
                    const T uniform = static_cast<T>(eps / static_cast<double>(C)), one_hot = static_cast<T>(1 - eps);
                    rowwise::for_each(rows, C, [&](int64_t r) {
                      T* dr = pd + r * C;
                      if (pt[r] == ignore) {
                        std::fill(dr, dr + C, T(0));
                        return;
                      }
                      const T* xr = px + r * C;
                      for (int64_t c0 = 0; c0 < C; c0 += kExpBlock) {  // a block in the cache at a time
                        const int64_t n = std::min(kExpBlock, C - c0);
                        exp_shifted(xr + c0, pl[r], dr + c0, n);  // softmax
                        for (int64_t c = c0; c < c0 + n; ++c) dr[c] = scale * (dr[c] - uniform);
                      }
                      dr[pt[r]] -= scale * one_hot;
                    });
                  });
                  dx[0] = grad;
                });
}

}  // namespace gradformer
