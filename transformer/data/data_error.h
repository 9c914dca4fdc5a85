// The error every data reader throws: a corpus, a vocabulary or a batch that cannot be used as
// given. Messages start with "file:line: " so an editor can jump straight to the bad line.
#pragma once

#include <cstdint>
#include <string>

#include "tensor/support/error.h"

namespace gradformer {

/// Bad input data: a malformed TSV line, an over-long sentence, a vocabulary with a duplicate
/// token, a file that cannot be read or written.
struct DataError : Error {
  using Error::Error;
};

/// Input that cannot be read on: a read that failed (a directory, a closed standard input, a failing
/// disk) or a line longer than a reader takes (an endless line: a file with no line ends, /dev/zero).
/// Unlike a bad line, which a caller may report and read past, it ends the reading: a command that
/// answers each line goes on after a DataError but stops at a ReadError.
struct ReadError : DataError {
  using DataError::DataError;
};

/// "train.tsv:12: " + what — the prefix of every DataError about one line of a file.
inline std::string at_line(const std::string& file, int64_t line, const std::string& what) {
  return message(file, ":", line, ": ", what);
}

}  // namespace gradformer
