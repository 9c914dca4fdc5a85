// Progress of long work: one line that updates in place when stdout is a terminal, plain lines
// otherwise (a log file, CI), and optionally one JSON object per logging step in a metrics file.
#pragma once

#include <chrono>
#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace gradformer {

class Progress {
 public:
  /// total_steps: for the ETA. metrics_path: empty for none, else a file to create, or with a
  /// first_step past 1 (a resumed run) to append to (a DataError naming the path if it cannot be).
  /// print false: the metrics file only, nothing on stdout.
  /// first_step: the first step this run takes (after resuming, not 1), so the ETA is measured on
  /// the steps actually timed.
  Progress(int64_t total_steps, const std::string& metrics_path = "", bool print = true, int64_t first_step = 1);

  /// Reports step `step` with named values (loss, lr, tokens/s, ...), in the order given. A
  /// DataError naming the metrics file if writing it fails (a full disk).
  /// `json` are more fields for the metrics file only, each name with its value already written as
  /// JSON (a number, or a quoted string).
  void report(int64_t step, const std::vector<std::pair<std::string, double>>& values,
              const std::vector<std::pair<std::string, std::string>>& json = {});
  /// The metrics file's first line, {"settings": {"options.lr": "1", ...}}: every setting of the
  /// run, as text, named as in its checkpoint's metadata (config.*, and options.* there as
  /// state.options.*). Nothing without a metrics file.
  void settings(const std::map<std::string, std::string>& entries);
  /// Ends the updating line (before printing anything else).
  void finish();

  static std::string format_duration(double seconds);  // "1:05", "2:03:04"

  /// Prints `line` on a line of its own between two reports (what a task shows as it trains: a
  /// language model's sample), first ending the updating line if one is open on stdout.
  static void note(const std::string& line);

 private:
  int64_t total_, first_;
  bool terminal_;
  bool print_;
  std::chrono::steady_clock::time_point start_;
  std::ofstream metrics_;
  std::string metrics_path_;  // for the message when a write fails
};

}  // namespace gradformer
