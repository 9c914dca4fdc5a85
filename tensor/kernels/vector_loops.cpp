#include "tensor/kernels/vector_loops.h"

#include <atomic>

#include "tensor/support/error.h"

namespace gradformer {

// (the compiler's CPU check also asks the OS whether it saves the 256-bit registers)
bool avx2_loops_available() {
#if GRADFORMER_HAS_AVX2_LOOPS && defined(GRADFORMER_HAVE_AVX2)
  static const bool cpu_ok = (__builtin_cpu_init(), __builtin_cpu_supports("avx2"));
  return cpu_ok;
#else
  return false;  // another architecture or compiler, or built with GRADFORMER_AVX2 off
#endif
}

namespace {
std::atomic<bool>& avx2_loops_on() {
  static std::atomic<bool> on{avx2_loops_available()};
  return on;
}
}  // namespace

bool avx2_loops() { return avx2_loops_on().load(std::memory_order_relaxed); }

void set_avx2_loops(bool on) {
  if (on && !avx2_loops_available()) throw ValueError("set_avx2_loops: this build or CPU cannot run the AVX2 loops");
  avx2_loops_on().store(on, std::memory_order_relaxed);
}

}  // namespace gradformer
