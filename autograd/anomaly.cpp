#include "autograd/anomaly.h"

#include <algorithm>
#include <atomic>
#include <cmath>

#include "tensor/kernels/parallel.h"

namespace gradformer {

namespace {
thread_local bool anomaly_mode = false;
}  // namespace

bool anomaly_enabled() { return anomaly_mode; }
DetectAnomalyGuard::DetectAnomalyGuard() : previous_(anomaly_mode) { anomaly_mode = true; }
DetectAnomalyGuard::~DetectAnomalyGuard() { anomaly_mode = previous_; }

// The threads take a piece each and find its first non-finite element; the first of those is the
// tensor's. A loaded model's check is the first read of its whole file (0.5 GB for GPT-2 small),
// so sharing it matters there.
bool first_non_finite(const Tensor& t, double* value) {
  if (!t.defined() || !is_floating(t.dtype())) return false;
  return dispatch_floating(t.dtype(), "first_non_finite", [&]<class T>() {
    const Tensor c = t.contiguous();
    const T* p = c.data<T>();
    const int64_t n = c.numel();
    std::atomic<int64_t> first{n};
    parallel_for(0, n, grain_for(1), [&](int64_t lo, int64_t hi) {
      const int64_t i = std::find_if(p + lo, p + hi, [](T x) { return !std::isfinite(x); }) - p;
      if (i == hi) return;
      for (int64_t seen = first.load(); i < seen && !first.compare_exchange_weak(seen, i);) {
      }
    });
    if (first.load() == n) return false;
    if (value) *value = static_cast<double>(p[first.load()]);
    return true;
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
