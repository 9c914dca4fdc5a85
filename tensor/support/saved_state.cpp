#include "tensor/support/saved_state.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "tensor/support/error.h"

namespace gradformer {

int64_t parse_integer(std::string_view text, std::string_view what) {
  int64_t value = 0;
  const char* begin = text.data() + (text.size() > 1 && text[0] == '+' ? 1 : 0);
  const auto [end, ec] = std::from_chars(begin, text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    throw CheckpointError(message(what, " should be an integer, got '", text, "'"));
  return value;
}

std::string exact_text(double value) {
  std::ostringstream out;
  out.precision(17);
  out << value;
  return out.str();
}

double parse_number(std::string_view text, std::string_view what) {
  // strtod, not from_chars: g++ 12's std::from_chars for double is fine, but clang 14's libc++
  // lacks it. A copy gives strtod the terminating zero it needs.
  const std::string copy(text);
  char* end = nullptr;
  const double value =
      copy.empty() || std::isspace(static_cast<unsigned char>(copy[0])) ? NAN : std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || !std::isfinite(value))
    throw CheckpointError(message(what, " should be a number, got '", text, "'"));
  return value;
}

const std::string& SavedState::text(const std::string& key) const {
  const auto it = entries_.find(key);
  if (it == entries_.end()) throw CheckpointError(message(source_, ": no '", key, "' saved"));
  return it->second;
}

int64_t SavedState::integer(const std::string& key) const {
  return parse_integer(text(key), message(source_, ": '", key, "'"));
}

double SavedState::number(const std::string& key) const {
  return parse_number(text(key), message(source_, ": '", key, "'"));
}

}  // namespace gradformer
