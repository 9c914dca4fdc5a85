#include "transformer/cli/whole_text.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>

#include "transformer/data/data_error.h"

namespace gradformer {

std::string read_whole_text(std::FILE* in, const std::string& name, int64_t max_bytes) {
  std::string text;
  char buffer[1 << 16];
  errno = 0;
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, in)) > 0;) {
    if (static_cast<int64_t>(text.size() + n) > max_bytes)
      throw ReadError(message(name, ": more than ", max_bytes, " bytes, the most a text read whole may hold"));
    text.append(buffer, n);
  }
  if (std::ferror(in))
    throw ReadError(message(name, ": read failed: ", errno != 0 ? std::strerror(errno) : "the stream failed"));
  return text;
}

std::string read_whole_text_file(const std::string& path, int64_t max_bytes) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) throw DataError(message(path, ": a directory, not a text file"));
  errno = 0;
  const std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!file)
    throw DataError(message(path, ": cannot open for reading: ", errno != 0 ? std::strerror(errno) : "unknown reason"));
  return read_whole_text(file.get(), path, max_bytes);
}

}  // namespace gradformer
