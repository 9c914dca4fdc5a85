// The fused primitives composed from differentiable ops: slower, but each step is an op whose
// gradient is already checked, so they are the references the fused versions are tested against.
#include "autograd/arithmetic.h"
#include "autograd/fused.h"
#include "autograd/index.h"
#include "autograd/pointwise.h"
#include "autograd/reduce.h"
#include "autograd/views.h"
#include "tensor/elementwise.h"
#include "tensor/reduce.h"

namespace gradformer {

// exp(x - max x) / sum exp(x - max x): subtracting the max changes nothing but prevents overflow.
Variable softmax_unfused(const Variable& x, int64_t dim) {
  const Variable e = exp(x - max(x, {dim}, true));
  return e / sum(e, {dim}, true);
}

Variable log_softmax_unfused(const Variable& x, int64_t dim) { return x - logsumexp(x, {dim}, true); }

Variable layer_norm_unfused(const Variable& x, const Variable& weight, const Variable& bias, double eps) {
  const Variable centered = x - mean(x, {-1}, true);
  Variable y = centered * rsqrt(var(x, {-1}, true, /*correction=*/0) + eps);
  if (weight.defined()) y = y * weight;
  if (bias.defined()) y = y + bias;
  return y;
}

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

}  // namespace gradformer
