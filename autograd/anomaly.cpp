#include "autograd/anomaly.h"

#include <cmath>

namespace gradformer {

namespace {
thread_local bool anomaly_mode = false;
}  // namespace

bool anomaly_enabled() { return anomaly_mode; }
DetectAnomalyGuard::DetectAnomalyGuard() : previous_(anomaly_mode) { anomaly_mode = true; }
DetectAnomalyGuard::~DetectAnomalyGuard() { anomaly_mode = previous_; }

bool first_non_finite(const Tensor& t, double* value) {
  if (!t.defined() || !is_floating(t.dtype())) return false;
  return dispatch_floating(t.dtype(), "first_non_finite", [&]<class T>() {
    const Tensor c = t.contiguous();
    const T* p = c.data<T>();
    for (int64_t i = 0; i < c.numel(); ++i)
      if (!std::isfinite(p[i])) {
        if (value) *value = static_cast<double>(p[i]);
        return true;
      }
    return false;
  });
}

void check_forward_finite(const char* op, const Tensor& output, std::span<const Variable> inputs) {
  double bad = 0;
  if (!first_non_finite(output, &bad)) return;
  bool inputs_finite = true;
  for (const Variable& v : inputs)
    if (v.defined() && first_non_finite(v.value())) inputs_finite = false;
  throw AnomalyError(message("anomaly: the forward of '", op, "' produced ", bad, " (output ", output.shape(), ")",
                             inputs_finite ? " from finite inputs" : "; its inputs were already non-finite"));
}

void check_backward_finite(const char* op, size_t input, const Tensor& grad) {
  double bad = 0;
  if (first_non_finite(grad, &bad))
    throw AnomalyError(message("anomaly: the backward of '", op, "' produced ", bad, " in the gradient of input ",
                               input, " (shape ", grad.shape(), ")"));
}

}  // namespace gradformer
