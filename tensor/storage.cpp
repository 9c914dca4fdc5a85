// The memory under every tensor: one allocation per tensor, aligned for the SIMD kernels, and
// counted against the machine's memory (tensor.h's Storage).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <new>

#include "tensor/tensor.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>  // ASAN_POISON_MEMORY_REGION: the unused bytes of a block
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#include <sanitizer/asan_interface.h>
#endif
#endif
#ifndef ASAN_POISON_MEMORY_REGION
#define ASAN_POISON_MEMORY_REGION(address, size) ((void)(address), (void)(size))
#define ASAN_UNPOISON_MEMORY_REGION(address, size) ((void)(address), (void)(size))
#endif

#if defined(__unix__)
#include <unistd.h>  // sysconf: the machine's memory
#endif

namespace gradformer {

// One allocation per tensor. std::allocate_shared puts the shared_ptr's counts and the Storage in
// one block; the allocator below makes that block longer by the tensor's bytes, which start at the
// first 64-byte boundary after the counts and the Storage (one cache line, and what the matmul's
// packed SIMD loads want). allocate() runs before the Storage is constructed, so it hands the data's
// address to the constructor through `data`, which the constructor takes by reference. One malloc
// instead of two (the counts, then the bytes) for every tensor the library makes.
//
// The block comes from malloc (calloc for zeros), not aligned_alloc: glibc reuses a freed block of the same size
// reliably, which it does not for aligned_alloc's (measured: a cycle of five tensors faulted fresh
// pages on three of six rounds with aligned_alloc, on none after the first with this). Under
// AddressSanitizer the unused bytes on either side of the data are poisoned, so an overrun of the
// tensor's last element is still reported.
constexpr size_t kAlignment = 64;

// The bytes tensors hold, counted, and bounded by the machine's memory. Linux promises memory it may
// not have: an allocation past what the machine holds succeeds, and the process is killed without a
// word once it touches the pages (a training batch a thousand times too large ran for 38 s, grew to
// all 24 GiB, and was killed). Counting what the tensors hold lets the library refuse the allocation
// that would take them past the machine's physical memory instead: a MemoryError naming the tensor.
// (A container's memory limit, cgroup v2's memory.max, bounds it too when it is lower.)
namespace {

std::atomic<int64_t> held_bytes{0};

int64_t machine_bytes() {
  static const int64_t bytes = [] {
    int64_t most = INT64_MAX;  // unknown: the allocator alone says no
#if defined(__unix__)
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0 && pages <= INT64_MAX / page) most = static_cast<int64_t>(pages) * page;
    if (std::FILE* limit = std::fopen("/sys/fs/cgroup/memory.max", "r")) {  // "max" when there is none
      long long cap = 0;
      if (std::fscanf(limit, "%lld", &cap) == 1 && cap > 0) most = std::min<int64_t>(most, cap);
      std::fclose(limit);
    }
#endif
    return most;
  }();
  return bytes;
}

}  // namespace

template <class T>
struct StorageAllocator {
  using value_type = T;
  size_t bytes;      // the tensor's bytes, after the counts and the Storage
  std::byte** data;  // where allocate() writes the data's address (Storage::allocate's local; only
                     // allocate() uses it, though the copy kept for deallocate() holds it too)
  bool zeroed;       // calloc rather than malloc

  StorageAllocator(size_t bytes, std::byte** data, bool zeroed) : bytes(bytes), data(data), zeroed(zeroed) {}
  template <class U>
  StorageAllocator(const StorageAllocator<U>& other) : bytes(other.bytes), data(other.data), zeroed(other.zeroed) {}

  // the head (counts and Storage), up to kAlignment - 1 bytes to the boundary, the data, and at
  // least one byte after it, rounded up to whole cache lines
  size_t block_bytes(size_t head) const { return (head + bytes + 2 * kAlignment - 1) / kAlignment * kAlignment; }
  T* allocate(size_t n) {
    const size_t head = n * sizeof(T);
    if (bytes > SIZE_MAX / 2) throw std::bad_alloc();
    const auto counted = static_cast<int64_t>(block_bytes(head));
    if (held_bytes.fetch_add(counted) > machine_bytes() - counted) {
      held_bytes.fetch_sub(counted);
      throw std::bad_alloc();
    }
    auto* block = static_cast<std::byte*>(zeroed ? std::calloc(1, block_bytes(head)) : std::malloc(block_bytes(head)));
    if (block == nullptr) {
      held_bytes.fetch_sub(counted);
      throw std::bad_alloc();
    }
    const auto start = reinterpret_cast<uintptr_t>(block + head);
    std::byte* begin = block + head + ((kAlignment - start % kAlignment) % kAlignment);
    ASAN_POISON_MEMORY_REGION(block + head, static_cast<size_t>(begin - (block + head)));
    ASAN_POISON_MEMORY_REGION(begin + bytes, static_cast<size_t>(block + block_bytes(head) - (begin + bytes)));
    *data = begin;
    return reinterpret_cast<T*>(block);
  }
  void deallocate(T* p, size_t n) {
    ASAN_UNPOISON_MEMORY_REGION(p, block_bytes(n * sizeof(T)));
    std::free(p);
    held_bytes.fetch_sub(static_cast<int64_t>(block_bytes(n * sizeof(T))));
  }
  friend bool operator==(const StorageAllocator&, const StorageAllocator&) { return true; }
};

std::shared_ptr<Storage> Storage::allocate(size_t bytes, bool zeroed) {
  std::byte* data = nullptr;
  return std::allocate_shared<Storage>(StorageAllocator<Storage>(bytes, &data, zeroed), Key{}, data, bytes);
}

int64_t Storage::bytes_held() { return held_bytes.load(); }

int64_t Storage::memory() { return machine_bytes(); }

std::shared_ptr<Storage> Storage::borrow(std::byte* data, size_t bytes, std::shared_ptr<const void> owner) {
  return std::make_shared<Storage>(Key{}, data, bytes, std::move(owner));
}

}  // namespace gradformer
