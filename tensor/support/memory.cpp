#include "tensor/support/memory.h"

#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#include <unistd.h>  // environ
#endif

namespace gradformer {

#if defined(__GLIBC__)
// Whether the user tunes malloc through the environment: GLIBC_TUNABLES, or any variable glibc's
// malloc reads (MALLOC_TOP_PAD_, MALLOC_ARENA_MAX, ...; all begin with MALLOC_).
static bool malloc_tuned_by_environment() {
  for (char** variable = environ; variable != nullptr && *variable != nullptr; ++variable)
    if (std::strncmp(*variable, "GLIBC_TUNABLES=", 15) == 0 || std::strncmp(*variable, "MALLOC_", 7) == 0) return true;
  return false;
}

bool keep_freed_memory() {
  if (malloc_tuned_by_environment()) return false;
  const bool heap = mallopt(M_MMAP_THRESHOLD, 32 << 20) == 1;  // blocks up to 32 MiB (glibc's most) from the heap
  const bool kept = mallopt(M_TRIM_THRESHOLD, 1 << 30) == 1;   // give back free heap beyond 1 GiB only
  return heap && kept;
}
#else
bool keep_freed_memory() { return false; }  // other C libraries decide for themselves
#endif

}  // namespace gradformer
