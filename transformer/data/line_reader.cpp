#include "transformer/data/line_reader.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "tensor/support/utf8.h"

namespace gradformer {

namespace {

// A long line is read this many bytes at a time, so that reading stops within a chunk of the limit.
constexpr size_t kChunkBytes = size_t{64} << 10;

void check_limit(int64_t max_line_bytes) {
  if (max_line_bytes < 1 || max_line_bytes > kMaxLineBytes)
    throw ValueError(message("LineReader: max_line_bytes must be from 1 to ", kMaxLineBytes, ", got ", max_line_bytes));
}

std::string reason(int error) { return error != 0 ? std::strerror(error) : "an input/output error"; }

}  // namespace

std::string read_whole_text(std::FILE* in, const std::string& name, int64_t max_bytes, std::string_view kind) {
  std::string text;
  char buffer[1 << 16];
  errno = 0;
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, in)) > 0;) {
    if (static_cast<int64_t>(text.size() + n) > max_bytes)
      throw ReadError(message(name, ": more than ", max_bytes, " bytes, the most ", kind, " may hold"));
    text.append(buffer, n);
  }
  if (std::ferror(in))
    throw ReadError(message(name, ": read failed: ", errno != 0 ? std::strerror(errno) : "the stream failed"));
  return text;
}

OpenFile open_for_reading(const std::string& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) throw DataError(message(path, ": a directory, not a text file"));
  errno = 0;
  OpenFile file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file)
    throw DataError(message(path, ": cannot open for reading: ", errno != 0 ? std::strerror(errno) : "unknown reason"));
  return file;
}

std::string read_whole_file(const std::string& path, int64_t max_bytes, std::string_view kind) {
  return read_whole_text(open_for_reading(path).get(), path, max_bytes, kind);
}

std::optional<std::string> utf8_problem(std::string_view text) {
  const auto bad = invalid_utf8_at(text);
  if (!bad) return std::nullopt;
  return message("not valid UTF-8 (byte 0x", std::hex, std::uppercase,
                 static_cast<int>(static_cast<unsigned char>(text[*bad])), std::dec, " at column ", *bad + 1, ")");
}

LineReader::LineReader(std::istream& in, std::string name, int64_t max_line_bytes)
    : stream_(&in), name_(std::move(name)), max_line_bytes_(max_line_bytes) {
  check_limit(max_line_bytes);
}

LineReader::LineReader(std::FILE* in, std::string name, int64_t max_line_bytes)
    : file_(in), name_(std::move(name)), max_line_bytes_(max_line_bytes) {
  if (in == nullptr) throw ValueError(message("LineReader: no input (a null FILE*) for ", name_));
  check_limit(max_line_bytes);
}

void LineReader::fail(const std::string& what) {
  finished_ = true;
  throw ReadError(at_line(name_, line_, what));
}

// Appends to `line` at most `room` bytes of the current line, `kChunkBytes` at a time, and consumes
// the line's '\n' when it comes within them.
LineReader::Stop LineReader::read_stream(std::string& line, size_t room) {
  std::istream& in = *stream_;
  chunk_.resize(kChunkBytes + 1);  // getline stores a chunk and its terminating NUL
  while (true) {
    const size_t chunk = std::min(room, kChunkBytes);
    errno = 0;
    in.getline(chunk_.data(), static_cast<std::streamsize>(chunk + 1));
    const int error = errno;
    if (in.bad()) fail(message("read failed: ", reason(error)));
    // Neither failbit nor eofbit: getline stopped at a '\n', which it consumed and did not store.
    const bool line_end = !in.fail() && !in.eof();
    const auto stored = static_cast<size_t>(in.gcount()) - (line_end ? 1 : 0);
    line.append(chunk_.data(), stored);
    if (line_end) return Stop::LineEnd;
    if (in.eof()) return Stop::InputEnd;
    // failbit alone: a whole chunk stored, no '\n' yet; with less stored, a stream that had failed
    // before this read (its sentry refused to read), which would otherwise look like a chunk.
    if (stored != chunk) fail("read failed: the stream was in a failed state");
    in.clear(in.rdstate() & ~std::ios::failbit);
    room -= chunk;
    if (room == 0) return Stop::Full;
  }
}

// As read_stream, from a C stream: a read error shows in std::ferror, not in a stream state.
LineReader::Stop LineReader::read_file(std::string& line, size_t room) {
  for (size_t stored = 0;; ++stored) {
    errno = 0;
    const int c = std::getc(file_);
    if (c == EOF) {
      if (std::ferror(file_)) fail(message("read failed: ", reason(errno)));
      return Stop::InputEnd;
    }
    if (c == '\n') return Stop::LineEnd;
    if (stored == room) return Stop::Full;  // a byte past the room, not stored
    line.push_back(static_cast<char>(c));
  }
}

bool LineReader::next(std::string& line) {
  line.clear();
  if (finished_) return false;
  ++line_;
  // One byte more than the limit: room for the '\r' of a Windows line end, or to see the line is longer.
  const size_t room = static_cast<size_t>(max_line_bytes_) + 1;
  const Stop stop = file_ != nullptr ? read_file(line, room) : read_stream(line, room);
  if (stop == Stop::InputEnd && line.empty()) {
    --line_;  // no line: the input ended at a line end (or was empty)
    return false;
  }
  if (stop != Stop::Full && !line.empty() && line.back() == '\r') line.pop_back();  // Windows line end
  if (stop == Stop::Full || static_cast<int64_t>(line.size()) > max_line_bytes_) {
    line.clear();
    line.shrink_to_fit();  // a megabyte of what is likely not text
    fail(message("line longer than ", max_line_bytes_,
                 " bytes, the most a line may hold (is it text, one sentence a line?); reading stopped there"));
  }
  if (line_ == 1 && line.starts_with(kByteOrderMark)) line.erase(0, kByteOrderMark.size());
  if (const auto problem = utf8_problem(line))
    throw DataError(at_line(name_, line_, *problem + "; save the file as UTF-8"));
  return true;
}

}  // namespace gradformer
