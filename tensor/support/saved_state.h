// State saved as text beside a checkpoint's tensors: step counts, options, generator states, where
// the data stood. Text, so a person can read it with any safetensors tool; read back strictly, so a
// garbled value is a CheckpointError naming the file and the key, never a silently truncated
// "12abc" or a std::invalid_argument from deep inside the standard library.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

namespace gradformer {

/// The whole text as an integer (optional sign, digits, nothing else), or CheckpointError
/// "<what> should be an integer, got '<text>'".
int64_t parse_integer(std::string_view text, std::string_view what);
/// A number as text that parse_number reads back to the same double (17 significant digits).
std::string exact_text(double value);
/// The whole text as a finite number (as printed by "%.17g"), or CheckpointError
/// "<what> should be a number, got '<text>'".
double parse_number(std::string_view text, std::string_view what);

/// Text entries by key, and the file they came from (for messages).
class SavedState {
 public:
  SavedState(const std::map<std::string, std::string>& entries, std::string source)
      : entries_(entries), source_(std::move(source)) {}

  bool contains(const std::string& key) const { return entries_.count(key) > 0; }
  /// CheckpointError "<source>: no '<key>' saved" when it is missing.
  const std::string& text(const std::string& key) const;
  /// text(key) read strictly: CheckpointError "<source>: '<key>' should be an integer, got '12abc'".
  int64_t integer(const std::string& key) const;
  double number(const std::string& key) const;
  const std::string& source() const { return source_; }

 private:
  const std::map<std::string, std::string>& entries_;
  std::string source_;
};

}  // namespace gradformer
