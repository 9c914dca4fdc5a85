// The Transformer paper's learning-rate schedule (section 5.3):
//   "lrate = d_model^-0.5 * min(step_num^-0.5, step_num * warmup_steps^-1.5)
//    This corresponds to increasing the learning rate linearly for the first warmup_steps training
//    steps, and decreasing it thereafter proportionally to the inverse square root of the step number."
// With a factor in front, as The Annotated Transformer has it ("Noam" after Noam Shazeer).
#pragma once

#include <cstdint>

namespace gradformer {

class NoamSchedule {
 public:
  /// ValueError unless d_model and warmup are positive and factor positive and finite.
  NoamSchedule(int64_t d_model, int64_t warmup, double factor = 1.0);

  /// factor * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5), for step >= 1 (the step about to be
  /// taken, counting from 1). Step 0 is a ValueError rather than silently treated as step 1: 0^-0.5
  /// is infinite, and a caller passing 0 has an off-by-one worth knowing about.
  double rate(int64_t step) const;

  /// The largest rate, reached at step = warmup: factor * (d_model * warmup)^-0.5.
  double peak() const { return rate(warmup); }

  int64_t d_model, warmup;
  double factor;
};

}  // namespace gradformer
