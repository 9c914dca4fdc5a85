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

}  // namespace gradformer
