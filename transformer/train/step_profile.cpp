#include "transformer/train/step_profile.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "tensor/support/files.h"

namespace gradformer {

StepProfile::StepProfile(std::string trace_path, int64_t first_step, int64_t last_step)
    : trace_path_(std::move(trace_path)) {
  if (trace_path_.empty()) return;
  first_ = std::max(first_step, std::min(first_step + kWarmupSteps, last_step - kProfiledSteps + 1));
  last_ = std::min(last_step, first_ + kProfiledSteps - 1);
}

StepProfile::~StepProfile() {
  if (running_) profiler::stop();  // the run ended inside the profiled steps (an error)
}

void StepProfile::before(int64_t step) {
  if (step != first_) return;
  profiler::start();
  running_ = true;
}

std::optional<std::string> StepProfile::after(int64_t step) {
  if (step != last_) return std::nullopt;
  const profiler::Trace trace = profiler::stop();
  running_ = false;
  std::ostringstream json;
  profiler::write_chrome_trace(trace, json);
  const std::string text = json.str();
  write_file_whole(trace_path_, text);
  return message("profile of steps ", first_, "-", last_, " (", counted(last_ - first_ + 1, "step"),
                 ", after warm-up); trace written to ", trace_path_, "\n", profiler::key_averages_table(trace));
}

}  // namespace gradformer
