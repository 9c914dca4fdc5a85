#include "tensor/support/files.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>

namespace gradformer {

namespace fs = std::filesystem;

bool same_file(const std::string& a, const std::string& b) {
  std::error_code error;
  const bool a_exists = fs::exists(a, error), b_exists = fs::exists(b, error);
  if (a_exists != b_exists) return false;
  if (a_exists) return fs::equivalent(a, b, error);  // false when it cannot tell
  const fs::path canonical_a = fs::weakly_canonical(a, error);
  if (error) return false;
  const fs::path canonical_b = fs::weakly_canonical(b, error);
  return !error && canonical_a == canonical_b;
}

std::string input_written_over(const std::vector<std::string>& paths, const std::string& out_path) {
  for (const std::string& path : paths)
    if (same_file(path, out_path)) return path;
  return "";
}

namespace {

constexpr const char* kTemporaryTag = ".tmp-";  // model.safetensors.tmp-<pid>-<counter>

// What a path that exists is, when it is not a regular file.
std::string kind_of(fs::file_status status) {
  switch (status.type()) {
    case fs::file_type::symlink:
      return "a symbolic link";
    case fs::file_type::directory:
      return "a directory";
    case fs::file_type::block:
    case fs::file_type::character:
      return "a device";
    case fs::file_type::fifo:
      return "a FIFO";
    case fs::file_type::socket:
      return "a socket";
    default:
      return "not a file";
  }
}

// OutputError when `path` exists and is not a regular file (a link counts as a link, not as its target).
void refuse_non_regular(const std::string& path) {
  std::error_code error;
  const fs::file_status status = fs::symlink_status(path, error);
  if (error || !fs::exists(status) || fs::is_regular_file(status)) return;
  throw OutputError(message(path, ": ", kind_of(status), ", not a regular file; not replacing it"));
}

fs::path temporary_name(const fs::path& path) {
  static std::atomic<uint64_t> counter{0};
  return path.string() + kTemporaryTag + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

// A run killed in the middle of a write leaves its temporary behind (as large as a checkpoint).
// Remove those of `path` whose writer is gone; a live writer's temporary is its own business.
void remove_stale_temporaries(const fs::path& path) {
  const fs::path directory = path.has_parent_path() ? path.parent_path() : fs::path(".");
  const std::string prefix = path.filename().string() + kTemporaryTag;
  std::error_code error;
  for (fs::directory_iterator it(directory, error), end; !error && it != end; it.increment(error)) {
    const std::string name = it->path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    const std::string pid_text = name.substr(prefix.size(), name.find('-', prefix.size()) - prefix.size());
    char* parsed_end = nullptr;
    const long pid = std::strtol(pid_text.c_str(), &parsed_end, 10);
    if (pid_text.empty() || *parsed_end != '\0' || pid <= 0) continue;
    // A pid no process can have (past pid_t's range) names a writer that is surely gone; cast, it
    // could have wrapped to a live process's and kept the file forever.
    const bool impossible = pid > std::numeric_limits<pid_t>::max();
    if (!impossible && (pid == ::getpid() || ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH)) continue;
    std::error_code ignored;
    fs::remove(it->path(), ignored);
  }
}

// Best effort: a directory that cannot be opened or synced (some file systems) is not an error
// the caller could do anything about; the file itself is already durable.
void sync_directory(const fs::path& path) {
  const fs::path directory = path.has_parent_path() ? path.parent_path() : fs::path(".");
  const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

}  // namespace

std::string system_reason() { return errno ? std::string(": ") + std::strerror(errno) : std::string(); }

std::string file_fingerprint(const std::string& path) {
  // FNV-1a: for each byte, hash = (hash XOR byte) x the FNV prime, from the FNV offset basis.
  constexpr uint64_t kOffsetBasis = 14695981039346656037ull, kPrime = 1099511628211ull;
  errno = 0;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(message(path, ": cannot read it to check it is the same file", system_reason()));
  uint64_t hash = kOffsetBasis;
  std::vector<unsigned char> chunk(1 << 16);
  ssize_t got = 0;
  while ((got = ::read(fd, chunk.data(), chunk.size())) != 0) {
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) break;
    for (ssize_t i = 0; i < got; ++i) hash = (hash ^ chunk[static_cast<size_t>(i)]) * kPrime;
  }
  const std::string reason = got < 0 ? system_reason() : "";
  ::close(fd);
  if (got < 0) throw Error(message(path, ": cannot read it to check it is the same file", reason));
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash));
  return hex;
}

void check_output_path(const std::string& path, bool replace, const std::string& force_flag) {
  refuse_non_regular(path);
  std::error_code error;
  if (!replace && fs::exists(path, error))
    throw OutputError(message(path, " exists; give ", force_flag, " to replace it"));
}

bool write_all(int fd, const void* data, std::size_t size) {
  const char* bytes = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, bytes, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes += n, size -= static_cast<std::size_t>(n);
  }
  return true;
}

void write_file_whole(const std::string& path, const std::function<bool(int fd)>& write) {
  refuse_non_regular(path);
  // Written beside the target and renamed over it: rename within one directory is atomic. The
  // temporary's name is the writer's own (pid and a counter), so two runs writing one path never
  // share one, and O_EXCL never follows a link someone planted under that name.
  const fs::path temporary = temporary_name(path);
  remove_stale_temporaries(path);
  auto fail = [&](const std::string& what) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    throw OutputError(message(path, ": ", what));
  };
  errno = 0;
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0)
    throw OutputError(message(path, ": cannot create the temporary file ", temporary.string(), system_reason()));
  bool written = false;
  try {
    written = write(fd);
  } catch (...) {
    ::close(fd);
    std::error_code ignored;
    fs::remove(temporary, ignored);
    throw;
  }
  // fsync before the rename: otherwise a power cut can leave the new name on a file whose data
  // never reached the disk, and both the old and the new file are gone.
  written = written && ::fsync(fd) == 0;
  const std::string reason = system_reason();
  if (::close(fd) != 0) written = false;
  if (!written) fail("cannot write the temporary file " + temporary.string() + reason);
  std::error_code error;
  fs::rename(temporary, path, error);
  if (error) fail("cannot rename " + temporary.string() + " into place: " + error.message());
  sync_directory(path);  // and the rename itself, which lives in the directory
}

void write_file_whole(const std::string& path, std::string_view bytes) {
  write_file_whole(path, [&](int fd) { return write_all(fd, bytes.data(), bytes.size()); });
}

}  // namespace gradformer
