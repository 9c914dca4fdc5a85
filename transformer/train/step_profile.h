// `gradformer train --profile`: a few training steps under the profiler (tensor/support/profiler.h), after
// warm-up (the first steps allocate the optimizer's moments, start the threads and fault in fresh
// memory, which later steps do not), then the key_averages table and a Chrome trace file.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "tensor/support/profiler.h"

namespace gradformer {

class StepProfile {
 public:
  /// The steps skipped before profiling, and the steps profiled.
  static constexpr int64_t kWarmupSteps = 5, kProfiledSteps = 3;

  /// Profiles steps first_step + kWarmupSteps .. + kProfiledSteps - 1, or, when the run ends
  /// sooner, as many of its last steps as it has (up to kProfiledSteps). An empty trace_path: off.
  StepProfile(std::string trace_path, int64_t first_step, int64_t last_step);
  ~StepProfile();
  StepProfile(const StepProfile&) = delete;
  StepProfile& operator=(const StepProfile&) = delete;
  /// Call before step `step` begins (it starts the profiler on the first profiled step).
  void before(int64_t step);
  /// Call after step `step` ends: after the last profiled step, stops the profiler, writes the trace
  /// (DataError if the file cannot be written) and returns the table to print.
  std::optional<std::string> after(int64_t step);

 private:
  std::string trace_path_;
  int64_t first_ = 0, last_ = -1;
  bool running_ = false;
};

}  // namespace gradformer
