// Anomaly mode: find the first op that produced a NaN or an infinity, forward or backward.
//
// Without it, a NaN born deep inside a model surfaces only as `loss = nan` many ops later. With it,
// every op checks its output (and every backward function its gradients) and throws an
// AnomalyError naming the op, e.g. "anomaly: the forward of 'log' produced -inf (output [3])".
// It costs one pass over every result, so it is off unless a DetectAnomalyGuard is alive.
#pragma once

#include <span>

#include "autograd/variable.h"

namespace gradformer {

/// A NaN or infinity found by anomaly mode.
struct AnomalyError : Error {
  using Error::Error;
};

/// Whether anomaly mode is on for this thread.
bool anomaly_enabled();

/// While alive, anomaly mode is on for this thread.
class DetectAnomalyGuard {
 public:
  DetectAnomalyGuard();
  ~DetectAnomalyGuard();
  DetectAnomalyGuard(const DetectAnomalyGuard&) = delete;
  DetectAnomalyGuard& operator=(const DetectAnomalyGuard&) = delete;

 private:
  bool previous_;
};

/// The first non-finite element of a floating tensor (NaN, inf or -inf), or false if all are finite.
bool first_non_finite(const Tensor& t, double* value = nullptr);

/// AnomalyError if `output` of op `op` holds a non-finite value. The message says whether the
/// inputs were already non-finite (then the culprit is earlier, perhaps a leaf).
void check_forward_finite(const char* op, const Tensor& output, std::span<const Variable> inputs);
inline void check_forward_finite(const char* op, const Tensor& output, std::initializer_list<Variable> inputs) {
  check_forward_finite(op, output, std::span<const Variable>(inputs.begin(), inputs.size()));
}

/// AnomalyError if the gradient the backward of `op` produced for input `input` is non-finite.
void check_backward_finite(const char* op, size_t input, const Tensor& grad);

}  // namespace gradformer
