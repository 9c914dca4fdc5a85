#include "nn/init.h"

#include <cmath>

namespace gradformer {

static void overwrite(const Variable& p, const Tensor& values) {
  Tensor v = p.value();  // shares the parameter's storage
  v.copy_(values);
}

void xavier_uniform_(const Variable& weight, Generator& gen, double gain) {
  if (weight.dim() < 2)
    throw ShapeError(message("xavier_uniform_: needs at least 2 dimensions, got shape ", weight.shape()));
  const int64_t receptive = weight.numel() / (weight.size(0) * weight.size(1));
  const double fan_in = static_cast<double>(weight.size(1) * receptive);
  const double fan_out = static_cast<double>(weight.size(0) * receptive);
  const double a = gain * std::sqrt(6.0 / (fan_in + fan_out));
  overwrite(weight, uniform(weight.shape(), -a, a, gen, weight.dtype()));
}

void linear_default_(const Variable& p, int64_t fan_in, Generator& gen) {
  if (fan_in <= 0) throw ValueError(message("linear_default_: fan_in must be positive, got ", fan_in));
  const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
  uniform_(p, -bound, bound, gen);
}

void uniform_(const Variable& p, double lo, double hi, Generator& gen) {
  overwrite(p, uniform(p.shape(), lo, hi, gen, p.dtype()));
}

void normal_(const Variable& p, double mean, double std, Generator& gen) {
  overwrite(p, normal(p.shape(), mean, std, gen, p.dtype()));
}

void fill_(const Variable& p, double value) {
  Tensor v = p.value();  // shares the parameter's storage
  v.fill_(value);
}

}  // namespace gradformer
