// The reference solution of tutorials/exercises/08_layer_norm_backward.cpp, row by row (what
// autograd/fused_layer_norm.cpp computes).
#include <cmath>
#include <vector>

#include "exercises.h"

namespace exercises {

using namespace gradformer;

Tensor layer_norm_backward(const Tensor& x, const Tensor& gamma, const Tensor& dy, double eps) {
  const int64_t rows = x.size(0), d = x.size(1);
  const std::vector<double> xs = x.contiguous().to_vector<double>(), gs = gamma.contiguous().to_vector<double>(),
                            dys = dy.contiguous().to_vector<double>();
  std::vector<double> dx(xs.size());
  const double n = static_cast<double>(d);
  for (int64_t r = 0; r < rows; ++r) {
    const double* row = &xs[static_cast<size_t>(r * d)];
    const double* dy_row = &dys[static_cast<size_t>(r * d)];
    double mean = 0, var = 0;
    for (int64_t j = 0; j < d; ++j) mean += row[j] / n;
    for (int64_t j = 0; j < d; ++j) var += (row[j] - mean) * (row[j] - mean) / n;
    const double sigma = std::sqrt(var + eps);
    // g = dL/dxhat; dL/dx_i = (g_i - mean(g) - xhat_i mean(g xhat)) / sigma
    double mean_g = 0, mean_g_xhat = 0;
    for (int64_t j = 0; j < d; ++j) {
      const double g = dy_row[j] * gs[static_cast<size_t>(j)], xhat = (row[j] - mean) / sigma;
      mean_g += g / n;
      mean_g_xhat += g * xhat / n;
    }
    for (int64_t i = 0; i < d; ++i) {
      const double g = dy_row[i] * gs[static_cast<size_t>(i)], xhat = (row[i] - mean) / sigma;
      dx[static_cast<size_t>(r * d + i)] = (g - mean_g - xhat * mean_g_xhat) / sigma;
    }
  }
  return from_vector(dx, {rows, d});
}

}  // namespace exercises
