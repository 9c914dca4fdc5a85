// A parallel corpus as a TSV file: one pair per line, "source<TAB>target", each side a sentence
// of whitespace-separated tokens. Errors name the file and the line.
#pragma once

#include <cstdint>
#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "transformer/data/data_error.h"

namespace gradformer {

/// One source sentence and its translation, as tokens.
struct SentencePair {
  std::vector<std::string> source;
  std::vector<std::string> target;
  friend bool operator==(const SentencePair&, const SentencePair&) = default;
};

/// The tokens of a sentence: split on any run of spaces and tabs.
std::vector<std::string> split_words(std::string_view sentence);
/// The tokens joined by single spaces.
std::string join_words(const std::vector<std::string>& words);

/// The lines of a text a user gave us, read the same way by every command (train, score,
/// translate): "\r\n" ends a line as "\n" does, a UTF-8 byte-order mark before the first line is
/// dropped, and a line that is not UTF-8 is a DataError "name:line: not valid UTF-8 (byte B at
/// column C)" — thrown after the line is consumed, so a caller may report it and read on.
class LineReader {
 public:
  LineReader(std::istream& in, std::string name) : in_(in), name_(std::move(name)) {}
  /// The next line, without its end, into `line`; false at the end of the input. DataError if the
  /// input cannot be read (a directory, a failing disk).
  bool next(std::string& line);
  int64_t line_number() const { return line_; }  // of the line last returned, from 1
  const std::string& name() const { return name_; }

 private:
  std::istream& in_;
  std::string name_;
  int64_t line_ = 0;
};

/// Reads `path`. max_tokens > 0 rejects a side with more tokens than that: pass the model's
/// maximum length minus one, because collate adds </s> to the source and <s> or </s> to the
/// target. DataError "path:line: ..." for a missing tab, more than one tab, an empty side, an
/// over-long side, a line that is not UTF-8; "path: ..." for a file that cannot be opened, a
/// directory, or a file that holds no pair at all. Lines are read by LineReader (Windows line ends
/// and a byte-order mark are fine); blank lines (the usual one at the end, say) are skipped.
std::vector<SentencePair> read_tsv(const std::string& path, int64_t max_tokens = 0);
/// As read_tsv, from a stream; `name` stands in for the path in messages.
std::vector<SentencePair> parse_tsv(std::istream& in, const std::string& name, int64_t max_tokens = 0);

/// Writes one "source<TAB>target\n" line per pair. DataError if the file cannot be written or a
/// pair could not be read back (an empty side, a token holding a tab or newline, or a first token
/// starting with the byte-order mark reading strips).
void write_tsv(const std::string& path, const std::vector<SentencePair>& pairs);

}  // namespace gradformer
