// Checks exercises::layer_norm_backward (tutorials/exercises/08_layer_norm_backward.cpp, or the
// reference solution) in float64: against central differences of LayerNorm's forward, written here
// from its definition, and against the gradient of the library's layer_norm. Prints what it found;
// exits 1 if a check fails or the file is still the stub.
#include <cmath>
#include <cstdio>
#include <tuple>
#include <vector>

#include "exercises.h"

using namespace gradformer;
using exercises::max_difference;

// L(x) = sum over rows and features of dy * LayerNorm(x), from the definition (x [rows, d]).
static double loss(const std::vector<double>& x, const std::vector<double>& gamma, const std::vector<double>& beta,
                   const std::vector<double>& dy, int64_t rows, int64_t d, double eps) {
  double total = 0;
  const double n = static_cast<double>(d);
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t j = 0; j < d; ++j) mean += x[static_cast<size_t>(r * d + j)] / n;
    for (int64_t j = 0; j < d; ++j) var += std::pow(x[static_cast<size_t>(r * d + j)] - mean, 2) / n;
    for (int64_t j = 0; j < d; ++j) {
      const size_t at = static_cast<size_t>(r * d + j);
      const double y =
          gamma[static_cast<size_t>(j)] * (x[at] - mean) / std::sqrt(var + eps) + beta[static_cast<size_t>(j)];
      total += dy[at] * y;
    }
  }
  return total;
}

// dL/dx by central differences: (L(x + h e_i) - L(x - h e_i)) / 2h for every element i.
static Tensor numeric_gradient(const Tensor& x, const Tensor& gamma, const Tensor& beta, const Tensor& dy, double eps) {
  const int64_t rows = x.size(0), d = x.size(1);
  std::vector<double> xs = x.to_vector<double>(), grad(xs.size());
  const std::vector<double> gs = gamma.to_vector<double>(), bs = beta.to_vector<double>(), dys = dy.to_vector<double>();
  const double h = 1e-6;
  for (size_t i = 0; i < xs.size(); ++i) {
    const double saved = xs[i];
    xs[i] = saved + h;
    const double up = loss(xs, gs, bs, dys, rows, d, eps);
    xs[i] = saved - h;
    const double down = loss(xs, gs, bs, dys, rows, d, eps);
    xs[i] = saved;
    grad[i] = (up - down) / (2 * h);
  }
  return from_vector(grad, {rows, d});
}

static int checks() {
  int failed = 0;
  Generator gen(8);
  for (const auto& [rows, d, eps] : {std::tuple<int64_t, int64_t, double>{1, 4, 1e-5}, {3, 8, 1e-5}, {5, 16, 0.1}}) {
    const Tensor x = randn({rows, d}, gen, DType::Float64), gamma = randn({d}, gen, DType::Float64),
                 beta = randn({d}, gen, DType::Float64), dy = randn({rows, d}, gen, DType::Float64);
    const Tensor mine = exercises::layer_norm_backward(x, gamma, dy, eps);

    const double numeric = max_difference(mine, numeric_gradient(x, gamma, beta, dy, eps));
    const bool numeric_ok = numeric < 1e-6;
    Variable xv(x, true);
    layer_norm(xv, Variable(gamma), Variable(beta), eps).backward(dy);
    const double library = max_difference(mine, xv.grad());
    const bool library_ok = library < 1e-10;
    std::printf("[%lld, %2lld], eps %g: central differences within %.1e: %s; the library's gradient within %.1e: %s\n",
                static_cast<long long>(rows), static_cast<long long>(d), eps, numeric, numeric_ok ? "yes" : "NO",
                library, library_ok ? "yes" : "NO");
    failed += (numeric_ok ? 0 : 1) + (library_ok ? 0 : 1);
  }
  std::printf(failed == 0 ? "LayerNorm's backward: all checks pass\n" : "LayerNorm's backward: %d check(s) FAILED\n",
              failed);
  return failed;
}

int main() { return exercises::run_checks("08_layer_norm_backward.cpp", 8, checks); }
