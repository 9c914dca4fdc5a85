#include "transformer/train/run_directory.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "nn/safetensors.h"
#include "tensor/support/error.h"
#include "tensor/support/utf8.h"
#include "transformer/data/data_error.h"
#include "transformer/evaluate/evaluate.h"
#include "transformer/inspect/attention_maps.h"
#include "transformer/store/average.h"

namespace gradformer {

namespace fs = std::filesystem;

std::string run_directory_for_data(const std::string& data_path) {
  const std::string stem = fs::path(data_path).stem().string();
  std::string name;
  for (const char c : stem) {
    const auto byte = static_cast<unsigned char>(c);
    const bool kept = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                      c == '-' || c == '_' || byte >= 0x80;
    const char out = kept ? c : '-';
    if (out == '-' && !name.empty() && name.back() == '-') continue;  // one '-' for a run of them
    name += out;
  }
  const size_t first = name.find_first_not_of("-."), last = name.find_last_not_of("-.");
  name = first == std::string::npos ? "corpus" : name.substr(first, last - first + 1);
  return "runs/" + name;
}

std::string run_checkpoint_path(const std::string& out_dir) { return out_dir + "/model.safetensors"; }

namespace {

// The metrics file the run saved in out_dir said it wrote, if it lies inside out_dir ("" if none).
fs::path metrics_written_inside(const fs::path& out_dir) {
  std::string metrics;
  try {
    const auto metadata = load_safetensors(run_checkpoint_path(out_dir.string())).metadata;
    const auto it = metadata.find("state.options.metrics_path");  // the run's options, as save_checkpoint stores them
    if (it != metadata.end()) metrics = it->second;
  } catch (const Error&) {
    return {};  // not a checkpoint this could read: it names no metrics file
  }
  if (metrics.empty()) return {};
  std::error_code error;
  const fs::path inside = fs::weakly_canonical(metrics, error).lexically_relative(fs::weakly_canonical(out_dir, error));
  if (error || inside.empty() || *inside.begin() == ".." || inside == ".") return {};
  return out_dir / inside;
}

}  // namespace

std::vector<std::string> run_outputs(const std::string& out_dir) {
  const fs::path dir(out_dir);
  std::vector<fs::path> candidates;
  if (const fs::path metrics = metrics_written_inside(dir); !metrics.empty()) candidates.push_back(metrics);
  candidates.push_back(dir / "model.safetensors");
  candidates.push_back(dir / "loss.svg");
  std::error_code error;
  if (fs::is_directory(dir, error))
    for (const std::string& kept : kept_checkpoints(out_dir)) candidates.push_back(kept);  // train --keep-last's
  const fs::path attention = dir / "attention";
  if (fs::is_directory(attention, error))
    for (const fs::directory_entry& entry : fs::directory_iterator(attention, error))
      if (entry.is_regular_file(error) && is_attention_map_name(entry.path().filename().string()))
        candidates.push_back(entry.path());
  std::vector<std::string> outputs;
  for (const fs::path& path : candidates)
    if (fs::is_regular_file(path, error)) outputs.push_back(path.string());
  return outputs;
}

namespace {

// Removes `files` of the run in out_dir, and its attention folder if that leaves it empty.
void remove_outputs(const std::string& out_dir, const std::vector<std::string>& files) {
  std::error_code error;
  for (const std::string& path : files)
    if (fs::exists(path, error) && (!fs::remove(path, error) || error))
      throw DataError(message("train: cannot remove ", path, " of the run it replaces: ", error.message()));
  const fs::path attention = fs::path(out_dir) / "attention";
  if (fs::is_directory(attention, error) && fs::is_empty(attention, error)) fs::remove(attention, error);
}

// The folder, open and locked for this process alone: its descriptor, or -1 where the file system
// has no locks. RunFolderBusy if another holder has it.
int lock_folder(const std::string& out_dir) {
  const int fd = ::open(out_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) throw DataError(message("train: output directory ", out_dir, ": cannot open: ", std::strerror(errno)));
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return fd;
  const int reason = errno;
  ::close(fd);
  if (reason == EWOULDBLOCK)
    throw RunFolderBusy(message("train: ", out_dir,
                                " is in use: another gradformer train is writing there (until it ends, no other "
                                "run may); wait for it, or give --out for another folder"));
  // No locks here, nothing enforced: a file system without them (ENOLCK, EOPNOTSUPP, EINVAL, Lustre's
  // ENOSYS), or NFS, whose emulated flock wants a file open for writing, not a folder (EBADF).
  if (reason == ENOLCK || reason == EOPNOTSUPP || reason == EINVAL || reason == ENOSYS || reason == EBADF) return -1;
  throw DataError(message("train: output directory ", out_dir, ": cannot lock: ", std::strerror(reason)));
}

}  // namespace

void refuse_busy_folder(const std::string& out_dir) {
  std::error_code error;
  if (!fs::is_directory(out_dir, error)) return;
  if (const int fd = lock_folder(out_dir); fd >= 0) ::close(fd);  // free: let it go at once
}

RunFolder::RunFolder(const std::string& out_dir, const std::string& resume_path) : out_dir_(out_dir) {
  std::error_code error;
  fs::create_directories(out_dir, error);
  if (error) throw DataError(message("train: output directory ", out_dir, ": cannot create: ", error.message()));
  lock_ = lock_folder(out_dir);
  const bool continues_here = !resume_path.empty() && same_file(resume_path, run_checkpoint_path(out_dir));
  if (!continues_here) replaced_ = run_outputs(out_dir);
}

RunFolder::~RunFolder() {
  if (lock_ >= 0) ::close(lock_);  // closing the last descriptor releases the lock
}

bool RunFolder::replaces(const std::string& path) const {
  return std::any_of(replaced_.begin(), replaced_.end(), [&](const std::string& old) { return same_file(old, path); });
}

void RunFolder::checkpoint_written(const std::vector<std::string>& own) {
  std::vector<std::string> doomed;
  for (const std::string& path : replaced_) {
    const bool keep = same_file(path, run_checkpoint_path(out_dir_)) ||
                      std::any_of(own.begin(), own.end(), [&](const std::string& o) { return same_file(path, o); });
    if (!keep) doomed.push_back(path);
  }
  replaced_.clear();
  remove_outputs(out_dir_, doomed);
}

}  // namespace gradformer
