#include "transformer/model/rotary.h"

#include <cmath>
#include <numbers>

#include "tensor/all.h"

namespace gradformer {

std::vector<double> rotary_frequencies(int64_t head_dim, double theta, const RopeScaling& scaling) {
  if (head_dim <= 0 || head_dim % 2 != 0)
    throw ValueError(message("rotary_frequencies: the head width must be positive and even, got ", head_dim));
  std::vector<double> f(static_cast<size_t>(head_dim / 2));
  for (size_t i = 0; i < f.size(); ++i)
    f[i] = std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(head_dim));  // theta^(-2i/d_k)
  if (scaling.factor == 0) return f;
  const double L = static_cast<double>(scaling.original_max_len);
  const double low = scaling.low_freq_factor, high = scaling.high_freq_factor;
  for (double& fi : f) {
    const double wavelength = 2 * std::numbers::pi / fi;
    if (wavelength > L / low) {
      fi /= scaling.factor;  // long waves: stretched by the factor
    } else if (wavelength >= L / high) {
      const double s = (L / wavelength - low) / (high - low);  // between: blended
      fi = (1 - s) * fi / scaling.factor + s * fi;
    }  // short waves: kept
  }
  return f;
}

RotaryTables rotary_tables(int64_t positions, int64_t head_dim, double theta, const RopeScaling& scaling, DType dtype) {
  const std::vector<double> f = rotary_frequencies(head_dim, theta, scaling);
  const int64_t h = head_dim / 2;
  Tensor c = Tensor::empty({positions, h}, DType::Float64), s = Tensor::empty({positions, h}, DType::Float64);
  double *pc = c.data<double>(), *ps = s.data<double>();
  for (int64_t p = 0; p < positions; ++p)
    for (int64_t i = 0; i < h; ++i) {
      const double angle = static_cast<double>(p) * f[static_cast<size_t>(i)];
      pc[p * h + i] = std::cos(angle), ps[p * h + i] = std::sin(angle);
    }
  return {c.to(dtype), s.to(dtype)};
}

RotaryTables rotary_tables(const LayerConfig& c) {
  return rotary_tables(c.max_len, c.head_dim(), c.block.rope_theta, c.block.rope_scaling, c.dtype);
}

}  // namespace gradformer
