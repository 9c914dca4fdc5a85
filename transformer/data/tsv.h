// A parallel corpus as a TSV file: one pair per line, "source<TAB>target", each side a sentence
// of whitespace-separated tokens. Errors name the file and the line.
#pragma once

#include <cstdint>
#include <istream>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "transformer/data/data_error.h"
#include "transformer/data/line_reader.h"

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

/// Reads `path`. max_tokens > 0 rejects a side with more tokens than that: pass the model's
/// maximum length minus one, because collate adds </s> to the source and <s> or </s> to the
/// target. DataError "path:line: ..." for a missing tab, more than one tab, an empty side, an
/// over-long side, a line that is not UTF-8; "path: ..." for a file that cannot be opened, a
/// directory, or a file that holds no pair at all. Lines are read by LineReader (line_reader.h:
/// Windows line ends and a byte-order mark are fine, a line over 1 MiB or a failed read is a
/// ReadError); blank lines (only spaces and tabs: the usual one at the end, say) are skipped.
std::vector<SentencePair> read_tsv(const std::string& path, int64_t max_tokens = 0);
/// As read_tsv, from a stream; `name` stands in for the path in messages.
std::vector<SentencePair> parse_tsv(std::istream& in, const std::string& name, int64_t max_tokens = 0);

/// As read_tsv, but one entry per line of the file, nothing for a blank line: for a command whose
/// output must line up with the file's lines (score prints an empty line for a blank one).
std::vector<std::optional<SentencePair>> read_tsv_lines(const std::string& path, int64_t max_tokens = 0);
/// As read_tsv_lines, from a stream; `name` stands in for the path in messages.
std::vector<std::optional<SentencePair>> parse_tsv_lines(std::istream& in, const std::string& name,
                                                         int64_t max_tokens = 0);

/// Writes one "source<TAB>target\n" line per pair, the file whole (write_file_whole,
/// tensor/support/files.h: OutputError if it cannot be written). DataError for a pair that could
/// not be read back (an empty side, a token holding a tab or newline, or a first token starting
/// with the byte-order mark reading strips).
void write_tsv(const std::string& path, const std::vector<SentencePair>& pairs);

}  // namespace gradformer
