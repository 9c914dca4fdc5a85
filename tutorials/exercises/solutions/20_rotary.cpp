// The reference solution of tutorials/exercises/20_rotary.cpp, pair by pair (what
// autograd/fused_rotary.cpp computes from the tables of transformer/model/rotary.cpp).
#include <cmath>
#include <vector>

#include "exercises.h"

namespace exercises {

using namespace gradformer;

Tensor rotate_pairs(const Tensor& x, double theta, int64_t start) {
  const int64_t T = x.size(0), dk = x.size(1), h = dk / 2;
  const std::vector<double> in = x.contiguous().to_vector<double>();
  std::vector<double> out(in.size());
  for (int64_t t = 0; t < T; ++t)
    for (int64_t i = 0; i < h; ++i) {
      const double angle =
          static_cast<double>(start + t) * std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(dk));
      const double a = in[static_cast<size_t>(t * dk + i)], b = in[static_cast<size_t>(t * dk + i + h)];
      out[static_cast<size_t>(t * dk + i)] = a * std::cos(angle) - b * std::sin(angle);
      out[static_cast<size_t>(t * dk + i + h)] = b * std::cos(angle) + a * std::sin(angle);
    }
  return from_vector(out, {T, dk});
}

}  // namespace exercises
