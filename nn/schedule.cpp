#include "nn/schedule.h"

#include <algorithm>
#include <cmath>

#include "tensor/support/error.h"

namespace gradformer {

NoamSchedule::NoamSchedule(int64_t d_model_, int64_t warmup_, double factor_)
    : d_model(d_model_), warmup(warmup_), factor(factor_) {
  if (d_model <= 0 || warmup <= 0 || !(std::isfinite(factor) && factor > 0))
    throw ValueError(
        message("NoamSchedule: d_model and warmup must be positive and factor positive and finite, got d_model ",
                d_model, ", warmup ", warmup, ", factor ", factor));
}

double NoamSchedule::rate(int64_t step) const {
  if (step < 1) throw ValueError(message("NoamSchedule.rate: steps count from 1, got step ", step));
  const double s = static_cast<double>(step), w = static_cast<double>(warmup);
  return factor * std::pow(static_cast<double>(d_model), -0.5) * std::min(std::pow(s, -0.5), s * std::pow(w, -1.5));
}

}  // namespace gradformer
