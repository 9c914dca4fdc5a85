// Reference solution of tutorials/exercises/11_noam_schedule.cpp: the formula as the paper writes it.
#include <algorithm>
#include <cmath>

#include "exercises.h"

namespace exercises {

double noam_rate(int64_t d_model, int64_t warmup, int64_t step) {
  const double s = static_cast<double>(step), w = static_cast<double>(warmup);
  // lrate = d_model^-0.5 * min(step_num^-0.5, step_num * warmup_steps^-1.5)
  return std::pow(static_cast<double>(d_model), -0.5) * std::min(std::pow(s, -0.5), s * std::pow(w, -1.5));
}

}  // namespace exercises
