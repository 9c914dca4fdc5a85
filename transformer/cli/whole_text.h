// A text read whole, as tokenize (standard input) and learn-bpe (its files) read theirs: every byte
// as it is (no line split, no newline translated), at most kMaxTextBytes of it, so that an endless
// input (/dev/zero) is refused rather than read until memory runs out.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace gradformer {

/// The most a text read whole may hold: 1 GiB.
inline constexpr int64_t kMaxTextBytes = int64_t{1} << 30;

/// All of `in`; `name` (a path, "standard input") stands for it in messages. ReadError "name: read
/// failed: reason", and "name: more than MAX bytes, the most a text read whole may hold" once a
/// byte past max_bytes has been read.
std::string read_whole_text(std::FILE* in, const std::string& name, int64_t max_bytes = kMaxTextBytes);

/// The file at `path`, whole. DataError "path: cannot open for reading: reason" and "path: a
/// directory, not a text file"; then as read_whole_text.
std::string read_whole_text_file(const std::string& path, int64_t max_bytes = kMaxTextBytes);

}  // namespace gradformer
