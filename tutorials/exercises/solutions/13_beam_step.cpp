// Reference solution of tutorials/exercises/13_beam_step.cpp: every extension scored, sorted, cut.
#include <algorithm>
#include <cmath>

#include "exercises.h"

namespace exercises {

using namespace gradformer;

std::vector<BeamCandidate> beam_step(const std::vector<double>& alive_log_probs, const Tensor& log_probs,
                                     int64_t count) {
  const int64_t rows = log_probs.size(0), vocab = log_probs.size(1);
  std::vector<BeamCandidate> all;
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t token = 0; token < vocab; ++token) {
      const double total = alive_log_probs[static_cast<size_t>(row)] + log_probs.at({row, token});
      if (std::isfinite(total)) all.push_back({row, token, total});
    }
  // Best first; std::stable_sort keeps equal ones in the order they were made: row * V + token.
  std::stable_sort(all.begin(), all.end(),
                   [](const BeamCandidate& a, const BeamCandidate& b) { return a.log_prob > b.log_prob; });
  if (static_cast<int64_t>(all.size()) > count) all.resize(static_cast<size_t>(count));
  return all;
}

}  // namespace exercises
