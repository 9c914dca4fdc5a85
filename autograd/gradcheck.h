// gradcheck: compare the gradients backward() computes with finite differences.
//
// For a random upstream gradient u (seeded), L(x) = sum(f(x) * u) is a scalar whose gradient is
// exactly what backward(u) computes. Each input element is nudged both ways and
//   dL/dx_i ~ (L(x + eps e_i) - L(x - eps e_i)) / (2 eps)      (central difference, error O(eps^2))
// In float64 with eps = 1e-6 that estimate is good to about 1e-9; in float32 the rounding of L
// alone (about 1e-7 relative) divided by 2 eps would swamp it, which is why the check runs in float64.
// An element passes when |analytic - numeric| <= atol + rtol * |numeric|.
// backward is run twice: the second run must double every gradient (gradients accumulate with +=).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "autograd/variable.h"

namespace gradformer {

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-5;
  double rtol = 1e-3;
  uint64_t seed = 0;               // of the random upstream gradient
  bool check_accumulation = true;  // run backward twice and expect twice the gradient
};

struct GradcheckResult {
  bool ok = true;
  std::string report;  // one line: the worst element, its analytic and numeric values
  // The worst element found (the largest |analytic - numeric| / (atol + rtol |numeric|)).
  size_t input = 0;
  std::vector<int64_t> index;
  double analytic = 0, numeric = 0, score = 0;  // score > 1 fails
  size_t elements_checked = 0;
  explicit operator bool() const { return ok; }
};

using GradcheckFunction = std::function<Variable(const std::vector<Variable>&)>;

/// Checks f's gradients with respect to every floating input (converted to float64; other dtypes,
/// like indices, are passed through as constants). Inputs may be non-contiguous views; a float64
/// input is perturbed in place and restored. ValueError for an input whose elements overlap
/// (an expanded view), DTypeError if f does not return float64.
GradcheckResult gradcheck(const GradcheckFunction& f, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& options = {});

/// The same check for leaves that already exist, such as a module's parameters: f() computes the
/// output from them (through the module), and the gradients of every leaf are checked. Each leaf
/// must be a float64 leaf that requires grad; their gradients are reset first.
///   Linear lin(3, 2, gen, true, DType::Float64);
///   gradcheck([&] { return lin.forward(x); }, lin.parameters());
GradcheckResult gradcheck(const std::function<Variable()>& f, const std::vector<Variable>& leaves,
                          const GradcheckOptions& options = {});

}  // namespace gradformer
