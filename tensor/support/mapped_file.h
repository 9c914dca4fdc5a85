// A file mapped into memory: its bytes read from the operating system's page cache as they are
// touched, with no copy into memory of the program's own. What lets a checkpoint's tensors become a
// model's parameters without reading 500 MB into a second 500 MB (Storage::borrow views them).
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>

namespace gradformer {

/// A whole file mapped copy-on-write: a page the program writes to is copied first, so the file
/// itself never changes. The file must not shrink while it is mapped (touching a page past its new
/// end stops the process with SIGBUS); gradformer's writers never shrink a file in place, they rename
/// a new one over it, which a mapping outlives (it keeps the old file's bytes).
class MappedFile {
 public:
  /// The file at `path` mapped whole, or nullptr when it cannot be (an empty file, a system without
  /// mmap, mmap's refusal): the caller reads the file instead.
  static std::shared_ptr<MappedFile> map(const std::filesystem::path& path);
  MappedFile(std::byte* data, size_t size) : data_(data), size_(size) {}
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::byte* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  std::byte* data_;
  size_t size_;
};

}  // namespace gradformer
