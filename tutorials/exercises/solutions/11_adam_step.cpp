// Reference solution of tutorials/exercises/11_adam_step.cpp: nn/adam.cpp's loop, one element at a time.
#include <cmath>

#include "exercises.h"

namespace exercises {

void adam_step(std::vector<double>& p, const std::vector<double>& g, std::vector<double>& m, std::vector<double>& v,
               int64_t t, const gradformer::AdamOptions& o) {
  const double step_size = o.lr / (1 - std::pow(o.beta1, static_cast<double>(t)));
  const double bias_correction2_sqrt = std::sqrt(1 - std::pow(o.beta2, static_cast<double>(t)));
  for (size_t k = 0; k < p.size(); ++k) {
    m[k] = o.beta1 * m[k] + (1 - o.beta1) * g[k];
    v[k] = o.beta2 * v[k] + (1 - o.beta2) * g[k] * g[k];
    p[k] -= step_size * m[k] / (std::sqrt(v[k]) / bias_correction2_sqrt + o.eps);
  }
}

}  // namespace exercises
