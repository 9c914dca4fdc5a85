// The exceptions every gradformer function throws. Each message names the operation and the
// shapes or values involved, e.g. "matmul: inner dimensions differ: a is [4, 3], b is [5, 2]".
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace gradformer {

/// Root of every error a user of the library can cause. Catch this one to catch them all.
struct Error : std::runtime_error {
  /// A message quotes what the user gave (a token, a line, a file name), so its bytes are made safe to
  /// print first (utf8.h's printable): a NUL cannot cut it short, nor a carriage return write over it.
  explicit Error(const std::string& what);
  explicit Error(const char* what) : Error(std::string(what)) {}
};
/// Shapes that do not fit the operation (do not broadcast, wrong rank, inner dims differ, ...).
struct ShapeError : Error {
  using Error::Error;
};
/// A dtype the operation does not accept, or two operands whose dtypes differ.
struct DTypeError : Error {
  using Error::Error;
};
/// An index or dimension outside the valid range.
struct IndexError : Error {
  using Error::Error;
};
/// An argument whose value is out of its domain (a negative size, a zero step, ...).
struct ValueError : Error {
  using Error::Error;
};

/// Memory the operating system would not give: the message names the operation and the size asked
/// for (a model configuration far too large for the machine, say).
struct MemoryError : Error {
  using Error::Error;
};
/// A resource other than memory the operating system would not give (a thread, at its process or
/// user limit): the message names the operation and what it asked for.
struct ResourceError : Error {
  using Error::Error;
};
/// A checkpoint, or the state saved in one, that cannot be written, read or trusted.
struct CheckpointError : Error {
  using Error::Error;
};

/// Streams every argument into one string: message("add: ", a.shape(), " and ", b.shape()).
template <class... Parts>
std::string message(const Parts&... parts) {
  std::ostringstream out;
  (out << ... << parts);
  return out.str();
}

/// "1 layer", "2 layers": a count and its noun, singular only for 1 (the plural is noun + "s"
/// unless given).
inline std::string counted(long long n, const std::string& noun, const std::string& plural = "") {
  return std::to_string(n) + " " + (n == 1 ? noun : plural.empty() ? noun + "s" : plural);
}

}  // namespace gradformer
