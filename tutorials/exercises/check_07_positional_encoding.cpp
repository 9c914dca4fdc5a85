// Checks exercises::positional_encoding (tutorials/exercises/07_positional_encoding.cpp, or the
// reference solution) against the library's sinusoidal_encoding for a few sizes. Prints what it
// found; exits 1 if a check fails.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "exercises.h"
#include "transformer/model/positional_encoding.h"

using namespace gradformer;

// The largest |a - b| over two tensors of one shape (infinity if the shapes differ or one is missing).
static double max_difference(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined() || a.shape() != b.shape()) return INFINITY;
  const std::vector<double> x = a.to(DType::Float64).to_vector<double>(), y = b.to(DType::Float64).to_vector<double>();
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
  return worst;
}

int main() {
  int failed = 0;
  for (const auto& [max_len, d] : {std::pair<int64_t, int64_t>{3, 2}, {10, 8}, {200, 64}}) {
    const double difference =
        max_difference(exercises::positional_encoding(max_len, d), sinusoidal_encoding(max_len, d, DType::Float64));
    const bool close = difference < 1e-12;
    std::printf("max_len %3lld, d_model %2lld: largest difference from the library %.3g: %s\n",
                static_cast<long long>(max_len), static_cast<long long>(d), difference, close ? "yes" : "NO");
    if (!close) ++failed;
  }
  std::printf(failed == 0 ? "positional encoding: all checks pass\n" : "positional encoding: %d check(s) FAILED\n",
              failed);
  return failed == 0 ? 0 : 1;
}
