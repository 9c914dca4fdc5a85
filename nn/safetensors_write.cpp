// save_safetensors: a StateDict and its metadata written as one safetensors file, atomically and
// durably (a reader sees the old file or the new one, never a torn one).
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <vector>

#include "nn/safetensors.h"
#include "nn/safetensors_format.h"
#include "tensor/support/json.h"

namespace gradformer {

namespace fs = std::filesystem;
using namespace safetensors_format;

namespace {

// ---- an atomic, durable write --------------------------------------------------------------------

constexpr const char* kTemporaryTag = ".tmp-";  // model.safetensors.tmp-<pid>-<counter>

fs::path temporary_name(const fs::path& path) {
  static std::atomic<uint64_t> counter{0};
  return path.string() + kTemporaryTag + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

// A run killed in the middle of a save leaves its temporary behind (as large as a checkpoint).
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

bool write_all(int fd, const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n, size -= static_cast<size_t>(n);
  }
  return true;
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

// ---- writing --------------------------------------------------------------------------------

void save_safetensors(const fs::path& path, const StateDict& tensors,
                      const std::map<std::string, std::string>& metadata) {
  const std::string where = "save_safetensors: " + path.string() + ": ";
  // The header: __metadata__ first, then each tensor with its byte range in the data part.
  Json::Members header;
  if (!metadata.empty()) {
    Json::Members entries;
    for (const auto& [key, value] : metadata) entries.emplace_back(key, Json::string(value));
    header.emplace_back("__metadata__", Json::object(std::move(entries)));
  }
  std::vector<Tensor> data;  // contiguous, in the order of the header
  int64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    if (name == "__metadata__") throw CheckpointError(where + "\"__metadata__\" is reserved and cannot name a tensor");
    if (!tensor.defined()) throw CheckpointError(where + "tensor " + quoted(name) + " is undefined");
    std::vector<Json> shape;
    for (const int64_t d : tensor.shape()) shape.push_back(Json::integer(d));
    const int64_t bytes = tensor.numel() * static_cast<int64_t>(itemsize(tensor.dtype()));
    header.emplace_back(
        name, Json::object({{"dtype", Json::string(safetensors_name(tensor.dtype()))},
                            {"shape", Json::array(std::move(shape))},
                            {"data_offsets", Json::array({Json::integer(offset), Json::integer(offset + bytes)})}}));
    offset += bytes;
    data.push_back(tensor.contiguous());
  }
  std::string text;
  try {
    text = Json::object(std::move(header)).dump();
  } catch (const JsonError& e) {
    throw CheckpointError(where + "a name or metadata entry is not valid UTF-8 (" + e.what() + ")");
  }
  // Padding to a multiple of 8 keeps the data 8-byte aligned when the file is memory-mapped.
  text.append((8 - text.size() % 8) % 8, ' ');

  // Written beside the target and renamed over it: rename within one directory is atomic, so the
  // target is always either the old complete file or the new complete file. The temporary's name
  // is the writer's own (pid and a counter), so two runs saving to one path never share one.
  const fs::path temporary = temporary_name(path);
  remove_stale_temporaries(path);
  auto fail = [&](const std::string& what) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    throw CheckpointError(where + what);
  };
  errno = 0;
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) fail("cannot create the temporary file " + temporary.string() + system_reason());
  bool written = true;
  char length[8];
  const uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) length[i] = static_cast<char>((n >> (8 * i)) & 0xFF);  // little-endian
  written = written && write_all(fd, length, 8) && write_all(fd, text.data(), text.size());
  for (const Tensor& t : data) {
    const size_t bytes = static_cast<size_t>(t.numel()) * itemsize(t.dtype());
    const char* begin =
        reinterpret_cast<const char*>(t.storage()->data()) + t.offset() * static_cast<int64_t>(itemsize(t.dtype()));
    if constexpr (std::endian::native == std::endian::big) {
      std::vector<char> swapped(begin, begin + bytes);
      swap_to_little_endian(swapped.data(), static_cast<size_t>(t.numel()), itemsize(t.dtype()));
      written = written && write_all(fd, swapped.data(), bytes);
    } else {
      written = written && write_all(fd, begin, bytes);
    }
  }
  // fsync before the rename: otherwise a power cut can leave the new name on a file whose data
  // never reached the disk, and both the old and the new checkpoint are gone.
  written = written && ::fsync(fd) == 0;
  const std::string reason = system_reason();
  if (::close(fd) != 0) written = false;
  if (!written) fail("cannot write the temporary file " + temporary.string() + reason);
  std::error_code error;
  fs::rename(temporary, path, error);
  if (error) fail("cannot rename " + temporary.string() + " into place: " + error.message());
  sync_directory(path);  // and the rename itself, which lives in the directory
}

}  // namespace gradformer
