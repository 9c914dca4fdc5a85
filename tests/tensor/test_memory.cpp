// keep_freed_memory (tensor/support/memory.h): a call a program makes, never something linking the library
// does. With glibc it keeps a block just under its 32 MiB threshold in the heap, and a tensor
// made again reuses the memory of the one before; without the call glibc serves such a block from
// fresh pages (mmap). ctest runs each test case in a process of its own, so "without the call" here
// means what a program linking gradformer starts with.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "catch.h"
#include "tensor/support/memory.h"
#include "tensor/tensor.h"

#if defined(__GLIBC__)
#include <malloc.h>
#include <sys/resource.h>  // getrusage
#include <unistd.h>        // environ
#endif
#if defined(__linux__)
#include <unistd.h>  // sysconf
#endif

// A sanitizer replaces malloc, and glibc's mallopt and mallinfo2 then say nothing about it.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define TEST_SANITIZED_MALLOC 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define TEST_SANITIZED_MALLOC 1
#endif
#endif

using namespace gradformer;

namespace {

#if defined(__GLIBC__)
// For one test case, an environment without GLIBC_TUNABLES and MALLOC_... (which would make
// keep_freed_memory decline); the variables are put back as they were afterwards.
struct UntunedEnvironment {
  std::vector<std::pair<std::string, std::string>> removed;
  UntunedEnvironment() {
    for (char** variable = environ; *variable != nullptr; ++variable) {
      const std::string entry = *variable;
      if (entry.starts_with("GLIBC_TUNABLES=") || entry.starts_with("MALLOC_")) {
        const size_t equals = entry.find('=');
        removed.emplace_back(entry.substr(0, equals), entry.substr(equals + 1));
      }
    }
    for (const auto& [name, value] : removed) unsetenv(name.c_str());  // after the loop: it edits environ
  }
  ~UntunedEnvironment() {
    for (const auto& [name, value] : removed) setenv(name.c_str(), value.c_str(), 1);
  }
};
#endif

#if defined(__GLIBC__) && !defined(TEST_SANITIZED_MALLOC)
// glibc raises its threshold by itself to the size of each mmapped block freed (up to 32 MiB), this
// file's probes included: a probe tells the truth when no block as large was freed before it in the
// process. So each case probes a larger block than the cases before it (in the order Catch2 runs
// them, should they share a process), and a block just under 32 MiB is larger than anything the
// other test cases of test_tensor free.
constexpr size_t kProbeWhenDeclined = size_t{24} << 20;
constexpr size_t kUnder32MiB = (size_t{32} << 20) - (size_t{64} << 10);

void* volatile escaped;  // the block is stored here, so the compiler cannot drop its malloc and free

// Whether malloc serves a block of `bytes` with fresh pages of its own (mmap) rather than from the heap.
bool mapped(size_t bytes) {
  const size_t before = mallinfo2().hblkhd;  // bytes in mmapped blocks
  escaped = std::malloc(bytes);
  REQUIRE(escaped != nullptr);
  const size_t after = mallinfo2().hblkhd;
  std::free(escaped);
  return after >= before + bytes;
}
#endif

}  // namespace

#if defined(__GLIBC__)
TEST_CASE("keep_freed_memory declines when the environment tunes malloc") {
  const UntunedEnvironment untuned;
  setenv("GLIBC_TUNABLES", "glibc.malloc.check=0", 1);
  CHECK_FALSE(keep_freed_memory());
  unsetenv("GLIBC_TUNABLES");
  setenv("MALLOC_TOP_PAD_", "131072", 1);
  CHECK_FALSE(keep_freed_memory());
  unsetenv("MALLOC_TOP_PAD_");
  setenv("MALLOC_ARENA_MAX", "2", 1);  // any MALLOC_ variable, not only those ending in '_'
  CHECK_FALSE(keep_freed_memory());
  unsetenv("MALLOC_ARENA_MAX");
#if !defined(TEST_SANITIZED_MALLOC)
  CHECK(mapped(kProbeWhenDeclined));  // declining changed nothing
#endif
}
#endif

#if defined(__GLIBC__) && !defined(TEST_SANITIZED_MALLOC)
TEST_CASE("linking leaves glibc's malloc as it is, and keep_freed_memory keeps blocks under 32 MiB in the heap") {
  const UntunedEnvironment untuned;
  CHECK(mapped(kUnder32MiB));  // a static initializer calling keep_freed_memory would have kept it in the heap
  CHECK(keep_freed_memory());
  CHECK_FALSE(mapped(kUnder32MiB));
  CHECK(mapped(size_t{40} << 20));  // above the 32 MiB threshold: fresh pages still
}

// A training step makes the same tensors again every step: once the program has opted in, a tensor
// made again after its first one died reuses that memory instead of faulting in fresh pages.
TEST_CASE("after keep_freed_memory, a large tensor made again after its first one died faults in no fresh pages") {
  const UntunedEnvironment untuned;
  REQUIRE(keep_freed_memory());
  const auto page_faults = [] {
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_minflt;
  };
  constexpr int64_t n = int64_t{4} << 20;    // 16 MiB of float32: 4096 pages of 4 KiB
  { const Tensor first = full({n}, 1.0f); }  // its pages are fresh: about 4096 faults
  const long before = page_faults();
  const Tensor second = full({n}, 2.0f);
  CHECK(second.data<float>()[n - 1] == 2.0f);
  CHECK(page_faults() - before < 100);  // without the call: about 4096 again
}
#endif

TEST_CASE("no library source calls keep_freed_memory: only a program opts in") {
  const std::filesystem::path root = GRADFORMER_SOURCE_DIR;
  int sources = 0;
  for (const char* folder :
       {"tensor", "autograd", "nn", "transformer/model", "transformer/data", "transformer/train"}) {
    REQUIRE(std::filesystem::is_directory(root / folder));
    for (const auto& entry : std::filesystem::directory_iterator(root / folder)) {
      const std::string name = entry.path().filename().string();
      if (!name.ends_with(".cpp") && !name.ends_with(".h")) continue;
      ++sources;
      if (name == "memory.h" || name == "memory.cpp") continue;  // its declaration and definition
      std::stringstream text;
      text << std::ifstream(entry.path()).rdbuf();
      INFO(folder << "/" << name << " calls keep_freed_memory: the library would change every program's malloc");
      CHECK(text.str().find("keep_freed_memory(") == std::string::npos);
    }
  }
  CHECK(sources > 100);  // the folders were read
}

// Linux promises memory it may not have (overcommit): each tensor below would be given, its pages
// untouched, and a process holding more than the machine would be killed once it touched them. The
// library counts the bytes its tensors hold and refuses, with a MemoryError, the tensor that would
// take them past the machine's memory (the sanitizers' mallocs are left out: they reserve their own).
#if defined(__linux__) && !defined(TEST_SANITIZED_MALLOC)
TEST_CASE("tensors that together pass the machine's memory are refused, naming what they hold") {
  int64_t machine = static_cast<int64_t>(sysconf(_SC_PHYS_PAGES)) * sysconf(_SC_PAGESIZE);
  if (std::ifstream limit("/sys/fs/cgroup/memory.max"); limit) {  // a container's limit, if lower
    int64_t cap = 0;
    if (limit >> cap && cap > 0) machine = std::min(machine, cap);
  }
  const int64_t two_fifths = machine / 5 * 2 / 4, seven_tenths = machine / 10 * 7 / 4;  // float32 elements
  for (int round = 0; round < 3; ++round) {  // 120% of the machine in all, one at a time: each freed is uncounted
    const Tensor held = Tensor::empty({two_fifths}, DType::Float32);
    CHECK_THROWS_MSG(Tensor::empty({seven_tenths}, DType::Float32), MemoryError,
                     message("empty: cannot allocate ", seven_tenths * 4, " bytes for a float32 tensor of shape [",
                             seven_tenths, "] (tensors hold "));
    CHECK_THROWS_MSG(
        Tensor::empty({seven_tenths}, DType::Float32), MemoryError,
        message(" MiB already, of this machine's ", std::lround(static_cast<double>(machine) / (1 << 20)), " MiB)"));
  }
}
#endif
