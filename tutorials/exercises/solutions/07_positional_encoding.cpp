// The reference solution of tutorials/exercises/07_positional_encoding.cpp (what
// transformer/model/positional_encoding.cpp computes).
#include <cmath>
#include <vector>

#include "exercises.h"

namespace exercises {

using namespace gradformer;

Tensor positional_encoding(int64_t max_len, int64_t d_model) {
  std::vector<double> pe(static_cast<size_t>(max_len * d_model));
  for (int64_t pos = 0; pos < max_len; ++pos)
    for (int64_t i = 0; 2 * i < d_model; ++i) {
      const double angle =
          static_cast<double>(pos) / std::pow(10000.0, static_cast<double>(2 * i) / static_cast<double>(d_model));
      pe[static_cast<size_t>(pos * d_model + 2 * i)] = std::sin(angle);
      pe[static_cast<size_t>(pos * d_model + 2 * i + 1)] = std::cos(angle);
    }
  return from_vector(pe, {max_len, d_model});
}

}  // namespace exercises
