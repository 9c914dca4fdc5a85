// The one reader of text a user gives us, line by line: every corpus, file of sentences, vocabulary
// file and standard input of every command goes through LineReader, so that all of them accept and
// refuse the same things, in the same words, and none of them can be made to read without end.
#pragma once

#include <cstdint>
#include <cstdio>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "transformer/data/data_error.h"

namespace gradformer {

/// The longest line a reader takes, in bytes, its line end not counted: 1 MiB, far beyond any
/// sentence (a model takes at most a few thousand tokens), and small enough that an endless line (a
/// file with no line ends, /dev/zero) is refused after a millisecond and a megabyte of memory.
inline constexpr int64_t kMaxLineBytes = int64_t{1} << 20;

/// UTF-8's byte-order mark (EF BB BF), which some editors put first and LineReader drops.
inline constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";

/// "not valid UTF-8 (byte 0xE9 at column 4)" when `text` is not UTF-8, nothing when it is: what
/// LineReader asks of every line, for user text that does not come in lines (a command's argument).
std::optional<std::string> utf8_problem(std::string_view text);

/// The most a text read whole may hold: 1 GiB.
inline constexpr int64_t kMaxTextBytes = int64_t{1} << 30;
/// The most a configuration file (a model's config.json) may hold: 1 MiB, some 1,000 times GPT-2's.
/// A reader builds every value of a JSON file in memory, several times its bytes: the limit bounds that.
inline constexpr int64_t kMaxConfigBytes = int64_t{1} << 20;
/// The most a tokenizer's file (learn-bpe's JSON, encoder.json, vocab.bpe, merges.txt) may hold:
/// 64 MiB, some 60 times GPT-2's vocab.json and 7 times the largest of today's models' tokenizer.json.
inline constexpr int64_t kMaxTokenizerFileBytes = int64_t{64} << 20;

/// All of `in`, every byte as it is (no line split, no newline translated), for a format read at
/// once (JSON, a tokenizer's files) or a text taken whole (tokenize's standard input, learn-bpe's
/// and train --text's files); `name` (a path, "standard input") stands for it in messages.
/// ReadError "name: read failed: reason", and "name: more than MAX bytes, the most KIND may hold"
/// once a byte past max_bytes has been read, so an endless input (/dev/zero) is refused rather than
/// read until memory runs out.
std::string read_whole_text(std::FILE* in, const std::string& name, int64_t max_bytes = kMaxTextBytes,
                            std::string_view kind = "a text read whole");

/// A C stream that closes itself.
using OpenFile = std::unique_ptr<std::FILE, int (*)(std::FILE*)>;

/// The file at `path`, open for reading (bytes as they are). DataError "path: cannot open for reading:
/// reason" and "path: a directory, not a text file".
OpenFile open_for_reading(const std::string& path);

/// The file at `path`, whole: open_for_reading's errors, then read_whole_text's.
std::string read_whole_file(const std::string& path, int64_t max_bytes = kMaxTextBytes,
                            std::string_view kind = "a text read whole");

/// The lines of a text a user gave us, read the same way by every command: "\r\n" ends a line as
/// "\n" does, a UTF-8 byte-order mark before the first line is dropped, and
///  - a line that is not UTF-8 is a DataError "name:line: not valid UTF-8 (byte B at column C); ...",
///    thrown after the line is consumed, so a caller may report it and read on;
///  - a line longer than max_line_bytes is a ReadError "name:line: line longer than N bytes ...",
///    found by reading at most max_line_bytes + 1 bytes of it (in chunks, never the whole line);
///  - a read that fails (a directory, a closed standard input, a failing disk) is a ReadError
///    "name:line: read failed: reason".
/// After a ReadError the reader is at its end (next() returns false): the rest of the input cannot be
/// read line by line, and a caller that reads on after errors must not loop on it.
class LineReader {
 public:
  /// Reads `in`; `name` (a path, "standard input") stands for it in messages.
  LineReader(std::istream& in, std::string name, int64_t max_line_bytes = kMaxLineBytes);
  /// Reads a C stream: standard input as `stdin`, whose read errors (a directory given as input, a
  /// closed descriptor) std::cin does not report, but std::ferror does.
  LineReader(std::FILE* in, std::string name, int64_t max_line_bytes = kMaxLineBytes);

  /// The next line, without its end, into `line`; false at the end of the input.
  bool next(std::string& line);
  int64_t line_number() const { return line_; }  // of the line last returned (or refused), from 1
  const std::string& name() const { return name_; }

 private:
  enum class Stop { LineEnd, InputEnd, Full };  // what ended a read of one line's bytes
  Stop read_stream(std::string& line, size_t room);
  Stop read_file(std::string& line, size_t room);
  [[noreturn]] void fail(const std::string& what);

  std::istream* stream_ = nullptr;  // one of the two is the input
  std::FILE* file_ = nullptr;
  std::vector<char> chunk_;  // read_stream's buffer, kept from line to line
  std::string name_;
  int64_t max_line_bytes_;
  int64_t line_ = 0;
  bool finished_ = false;  // after a ReadError
};

}  // namespace gradformer
