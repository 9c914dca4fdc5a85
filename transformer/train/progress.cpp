#include "transformer/train/progress.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <sstream>
#include <vector>

#include "tensor/support/error.h"
#include "tensor/support/json.h"
#include "transformer/data/data_error.h"

namespace gradformer {

namespace {
// Whether an updating line (terminal only) is open on stdout: one stdout, so one flag for every
// Progress and for note().
std::atomic<bool> line_open{false};
}  // namespace

Progress::Progress(int64_t total_steps, const std::string& metrics_path, bool print, int64_t first_step)
    : total_(total_steps),
      first_(first_step),
      terminal_(isatty(STDOUT_FILENO) != 0),
      print_(print),
      start_(std::chrono::steady_clock::now()) {
  if (!metrics_path.empty()) {
    metrics_path_ = metrics_path;
    // A resumed run goes on with the file of the run it continues (if it names that file): appended
    // to, its steps after the earlier ones, not written over.
    metrics_.open(metrics_path, first_step > 1 ? std::ios::app : std::ios::trunc);
    if (!metrics_)
      throw DataError(message("metrics file ", metrics_path, ": cannot open for writing: ", std::strerror(errno)));
  }
}

std::string Progress::format_duration(double seconds) {
  const auto s = static_cast<int64_t>(std::llround(std::max(0.0, seconds)));
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%lld:%02lld:%02lld", static_cast<long long>(s / 3600),
                  static_cast<long long>(s / 60 % 60), static_cast<long long>(s % 60));
  else
    std::snprintf(buf, sizeof buf, "%lld:%02lld", static_cast<long long>(s / 60), static_cast<long long>(s % 60));
  return buf;
}

void Progress::report(int64_t step, const std::vector<std::pair<std::string, double>>& values,
                      const std::vector<std::pair<std::string, std::string>>& json) {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const int64_t done = step - first_ + 1;  // steps timed by this run
  const double eta = done > 0 ? elapsed / static_cast<double>(done) * static_cast<double>(total_ - step) : 0;
  std::ostringstream line;
  line << "step " << step << "/" << total_;
  for (const auto& [name, v] : values) {
    char buf[64];
    // Counts and rates as integers, small rates (the learning rate) in scientific notation.
    const char* format = std::fabs(v) >= 100 || v == std::floor(v) ? "%.0f" : std::fabs(v) < 1e-2 ? "%.3e" : "%.4f";
    std::snprintf(buf, sizeof buf, format, v);
    line << "  " << name << " " << buf;
  }
  line << "  elapsed " << format_duration(elapsed) << "  eta " << format_duration(eta);
  if (!print_) {
    // not printing: the metrics file only
  } else if (terminal_) {
    std::cout << "\r\033[K" << line.str() << std::flush;  // rewrite the line in place
    line_open = true;
  } else {
    std::cout << line.str() << "\n" << std::flush;
  }
  if (metrics_.is_open()) {
    metrics_ << "{\"step\": " << step << ", \"elapsed_s\": " << elapsed;
    for (const auto& [name, v] : values) {
      char number[32];  // enough digits for a learning rate of 1e-7 (std::to_string would print 0.000000)
      std::snprintf(number, sizeof number, "%.10g", v);
      metrics_ << ", \"" << name << "\": " << (std::isfinite(v) ? number : "null");
    }
    for (const auto& [name, value] : json) metrics_ << ", \"" << name << "\": " << value;
    metrics_ << "}\n" << std::flush;
    // A full disk shows here, at the flush: stop rather than train on with the log lost.
    if (!metrics_) throw DataError(message("metrics file ", metrics_path_, ": write failed: ", std::strerror(errno)));
  }
}

void Progress::settings(const std::map<std::string, std::string>& entries) {
  if (!metrics_.is_open()) return;
  Json::Members members;
  for (const auto& [key, value] : entries) members.emplace_back(key, Json::string(value));
  metrics_ << Json::object({{"settings", Json::object(std::move(members))}}).dump() << "\n" << std::flush;
  if (!metrics_) throw DataError(message("metrics file ", metrics_path_, ": write failed: ", std::strerror(errno)));
}

void Progress::finish() {
  if (line_open.exchange(false)) std::cout << "\n" << std::flush;
}

void Progress::note(const std::string& line) {
  if (line_open.exchange(false)) std::cout << "\n";
  std::cout << line << "\n" << std::flush;
}

}  // namespace gradformer
