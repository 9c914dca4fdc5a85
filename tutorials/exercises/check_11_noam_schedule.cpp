// Checks exercises::noam_rate (tutorials/exercises/11_noam_schedule.cpp, or the reference solution)
// against first principles and the library's NoamSchedule (nn/schedule.h): the peak
// (d_model * warmup)^-0.5 at step = warmup, the linear rise before it, the 1/sqrt(step) fall after
// it, and every step of three schedules. Prints what it found; exits 1 if a check fails or the file is still the stub.
#include <cmath>
#include <cstdio>
#include <string>

#include "exercises.h"
#include "nn/schedule.h"

using namespace gradformer;

namespace {

int failed = 0;

void report(const std::string& what, bool ok, const std::string& found) {
  std::printf("%-52s: %s\n", what.c_str(), ok ? "yes" : ("NO, " + found).c_str());
  if (!ok) ++failed;
}

bool close(double a, double b) { return std::abs(a - b) <= 1e-12 * std::abs(b); }

std::string rates(double mine, double expected) {
  char text[96];
  std::snprintf(text, sizeof text, "your rate %.12g, expected %.12g", mine, expected);
  return text;
}

}  // namespace

static int checks() {
  using exercises::noam_rate;
  const int64_t d = 512, w = 4000;
  // The peak: at step = warmup both terms of the min are warmup^-0.5, so the rate is (d * warmup)^-0.5.
  const double peak = 1 / std::sqrt(512.0 * 4000.0);
  report("the peak at step = warmup is (d_model * warmup)^-0.5", close(noam_rate(d, w, w), peak),
         rates(noam_rate(d, w, w), peak));
  // Before the peak the rate is proportional to the step: step 1 is peak / warmup, step 1000 a quarter of the peak.
  report("warmup: step 1 is the peak / warmup", close(noam_rate(d, w, 1), peak / 4000),
         rates(noam_rate(d, w, 1), peak / 4000));
  report("warmup: step 1000 is a quarter of the peak", close(noam_rate(d, w, 1000), peak / 4),
         rates(noam_rate(d, w, 1000), peak / 4));
  // After it the rate falls as 1/sqrt(step): four times the steps, half the rate.
  report("decay: step 16000 is half the peak", close(noam_rate(d, w, 16000), peak / 2),
         rates(noam_rate(d, w, 16000), peak / 2));
  report("decay: step 64000 is a quarter of the peak", close(noam_rate(d, w, 64000), peak / 4),
         rates(noam_rate(d, w, 64000), peak / 4));
  // The library's schedule, with factor 1, at every step of three schedules.
  for (const auto& [d_model, warmup] : {std::pair<int64_t, int64_t>{512, 4000}, {128, 200}, {16, 1}}) {
    const NoamSchedule schedule(d_model, warmup);
    int64_t first_wrong = 0;
    for (int64_t step = 1; step <= 3 * warmup + 10 && first_wrong == 0; ++step)
      if (!close(noam_rate(d_model, warmup, step), schedule.rate(step))) first_wrong = step;
    report("d_model " + std::to_string(d_model) + ", warmup " + std::to_string(warmup) + ": the library's rate",
           first_wrong == 0,
           first_wrong == 0 ? ""
                            : "at step " + std::to_string(first_wrong) + " " +
                                  rates(noam_rate(d_model, warmup, first_wrong), schedule.rate(first_wrong)));
  }
  std::printf(failed == 0 ? "noam schedule: all checks pass\n" : "noam schedule: %d check(s) FAILED\n", failed);
  return failed;
}

int main() { return exercises::run_checks("11_noam_schedule.cpp", 11, checks); }
