// Adam (Kingma & Ba, 2015), as PyTorch's torch.optim.Adam, with the Transformer paper's settings
// as the defaults: "We used the Adam optimizer with beta1 = 0.9, beta2 = 0.98 and eps = 1e-9."
#pragma once

#include <string>

#include "nn/optimizer.h"

namespace gradformer {

struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;   // decay of the first moment (the running mean of the gradient)
  double beta2 = 0.98;  // decay of the second moment (the running mean of its square)
  double eps = 1e-9;    // keeps the step finite where the second moment is ~0
};

/// For each parameter p with gradient g, at its t-th update (t = 1, 2, ...):
///   m = beta1 * m + (1 - beta1) * g
///   v = beta2 * v + (1 - beta2) * g^2
///   p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
/// m and v start at 0, so early on they underestimate the moments by the factors 1 - beta^t;
/// dividing by them (the bias correction) makes the first step about lr * sign(g).
/// t counts a parameter's own updates: one skipped for lack of a gradient does not advance it.
/// The largest global gradient norm whose squares the second moment v holds in `dtype`: every
/// g_k^2 <= norm^2, and v, a running mean of them, never exceeds their largest, so below this
/// bound (half of sqrt(the dtype's largest value), a margin for rounding) v stays finite. Above
/// it g_k^2 can overflow to inf, which the update then hides (m / sqrt(inf) = 0, a finite step)
/// while v holds inf for good. About 9.2e18 in float32, 6.7e153 in float64.
double max_adam_gradient_norm(DType dtype);

class Adam : public Optimizer {
 public:
  /// ValueError unless 0 <= beta1, beta2 < 1, eps >= 0 and lr >= 0 (all finite).
  Adam(std::vector<Variable> params, const AdamOptions& options = {});
  const AdamOptions& options() const { return options_; }

  /// The moments of parameter i (for inspection and tests).
  const Tensor& first_moment(size_t i) const { return m_.at(i); }
  const Tensor& second_moment(size_t i) const { return v_.at(i); }

  /// "" when a step with gradients of this global norm keeps every second moment finite, else why
  /// not: "the gradient norm N is past B, where its squares overflow float32 in Adam's second
  /// moment" (B the smallest max_adam_gradient_norm of the parameters' dtypes, found once).
  std::string second_moment_overflow(double gradient_norm) const;

 protected:
  void update() override;
  int passes_over_parameters() const override { return 7; }  // p, g, m and v read, p, m and v written
  /// "m.<i>" and "v.<i>" for each parameter, and "param_steps": int64 [parameters], each one's t.
  std::vector<std::pair<std::string, Tensor>> buffers() const override;

 private:
  AdamOptions options_;
  std::vector<Tensor> m_, v_;
  Tensor param_steps_;  // int64 [parameters]
  // The parameters' dtype whose second moment overflows first, and its max_adam_gradient_norm.
  DType narrowest_ = DType::Float64;
  double max_gradient_norm_ = max_adam_gradient_norm(DType::Float64);
};

}  // namespace gradformer
