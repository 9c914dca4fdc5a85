#include "nn/clip.h"

#include <cmath>

#include "tensor/profiler.h"

namespace gradformer {

namespace {

double sum_of_squares(const Tensor& grad) {
  return dispatch_floating(grad.dtype(), "clip_grad_norm", [&]<class T>() {
    const Tensor g = grad.contiguous();
    const T* data = g.data<T>();
    double sum = 0;
    for (int64_t k = 0; k < g.numel(); ++k) sum += static_cast<double>(data[k]) * static_cast<double>(data[k]);
    return sum;
  });
}

}  // namespace

double clip_grad_norm(const std::vector<Variable>& params, double max_norm) {
  const profiler::Scope event("clip_grad_norm", profiler::Phase::Optimizer);
  if (!(std::isfinite(max_norm) && max_norm > 0))
    throw ValueError(message("clip_grad_norm: max_norm must be positive and finite, got ", max_norm));
  double total = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].defined() || !params[i].grad().defined()) continue;
    const double part = sum_of_squares(params[i].grad());
    if (!std::isfinite(part))
      throw ValueError(message("clip_grad_norm: the gradient of parameter ", i, " ", params[i].shape(),
                               " is not finite (sum of squares ", part, ")"));
    total += part;
  }
  const double norm = std::sqrt(total);
  if (!std::isfinite(norm)) throw ValueError(message("clip_grad_norm: the gradient norm overflowed: ", norm));
  // The 1e-6 (PyTorch's) keeps the clipped norm just under max_norm and the division safe.
  const double scale = max_norm / (norm + 1e-6);
  if (scale < 1)
    for (const Variable& p : params)
      if (p.defined() && p.grad().defined()) {
        Tensor g = p.grad().clone();  // the gradient tensor may be shared with another variable's
        g.mul_(scale);
        Variable(p).set_grad(g);
      }
  return norm;
}

}  // namespace gradformer
