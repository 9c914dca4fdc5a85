#include "tensor/support/mapped_file.h"

#if __has_include(<sys/mman.h>)
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#define GRADFORMER_HAS_MMAP 1
#endif

namespace gradformer {

#if defined(GRADFORMER_HAS_MMAP)

std::shared_ptr<MappedFile> MappedFile::map(const std::filesystem::path& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat status {};
  void* data = MAP_FAILED;
  if (::fstat(fd, &status) == 0 && S_ISREG(status.st_mode) && status.st_size > 0)
    // MAP_PRIVATE: copy-on-write, the file never changes. The mapping outlives the descriptor.
    data = ::mmap(nullptr, static_cast<size_t>(status.st_size), PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (data == MAP_FAILED) return nullptr;
#if defined(MADV_POPULATE_READ)
  // The page tables filled in one call rather than one fault per touched stretch: a loader reads
  // every byte at once (the non-finite check). Pages stay the page cache's until written. Linux
  // 5.14 and later; elsewhere madvise refuses it and the pages fault in as they are touched.
  ::madvise(data, static_cast<size_t>(status.st_size), MADV_POPULATE_READ);
#endif
  return std::make_shared<MappedFile>(static_cast<std::byte*>(data), static_cast<size_t>(status.st_size));
}

MappedFile::~MappedFile() { ::munmap(data_, size_); }

#else

std::shared_ptr<MappedFile> MappedFile::map(const std::filesystem::path&) { return nullptr; }
MappedFile::~MappedFile() = default;

#endif

}  // namespace gradformer
