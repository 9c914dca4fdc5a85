// The choice of matmul's micro-kernels (matmul_kernel.h): the CPU asked once, the environment read
// once, and the kernel set the blocked loops (gemm.cpp) are handed.
#include "tensor/kernels/matmul_kernel.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "tensor/kernels/gemm.h"
#include "tensor/support/error.h"

namespace gradformer {
namespace detail {

// (the compiler's CPU check also asks the OS whether it saves the 256-bit and 512-bit registers)
bool avx2_available() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool cpu_ok = (__builtin_cpu_init(), __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"));
  return cpu_ok && avx2_kernels<float>() != nullptr;
#else
  return false;
#endif
}

bool avx512_available() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool cpu_ok =
      (__builtin_cpu_init(),
       __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"));
  return cpu_ok && avx512_kernels<float>() != nullptr;
#else
  return false;
#endif
}

namespace {

MatmulKernel resolve(MatmulKernel k) {
  if (k != MatmulKernel::Auto) return k;
  return avx512_available() ? MatmulKernel::Avx512 : avx2_available() ? MatmulKernel::Avx2 : MatmulKernel::Portable;
}

// GRADFORMER_MATMUL: a kernel's name chooses it, when this build and CPU have it. Anything else
// (a typo, a kernel this CPU lacks) keeps the automatic choice and says so on stderr: this runs
// before main, where an exception would end the program with no message.
MatmulKernel initial_kernel() {
  const char* env = std::getenv("GRADFORMER_MATMUL");
  if (!env || !*env) return resolve(MatmulKernel::Auto);
  for (MatmulKernel k : {MatmulKernel::Auto, MatmulKernel::Avx512, MatmulKernel::Avx2, MatmulKernel::Portable})
    if (std::string_view(env) == matmul_kernel_name(k)) {
      if (matmul_kernel_available(k)) return resolve(k);
      std::fprintf(stderr, "gradformer: GRADFORMER_MATMUL=%s: this build or CPU lacks that kernel; using %s\n", env,
                   matmul_kernel_name(resolve(MatmulKernel::Auto)));
      return resolve(MatmulKernel::Auto);
    }
  std::fprintf(stderr, "gradformer: GRADFORMER_MATMUL=%s is not one of avx512, avx2, portable, auto; using %s\n", env,
               matmul_kernel_name(resolve(MatmulKernel::Auto)));
  return resolve(MatmulKernel::Auto);
}

std::atomic<MatmulKernel>& current_kernel() {
  static std::atomic<MatmulKernel> kernel{initial_kernel()};
  return kernel;
}

}  // namespace

template <class T>
const MicroKernels<T>& active_kernels() {
  switch (current_kernel().load(std::memory_order_relaxed)) {
    case MatmulKernel::Avx512:
      return *avx512_kernels<T>();
    case MatmulKernel::Avx2:
      return *avx2_kernels<T>();
    default:
      return portable_kernels<T>();
  }
}
template const MicroKernels<float>& active_kernels<float>();
template const MicroKernels<double>& active_kernels<double>();

}  // namespace detail

bool matmul_kernel_available(MatmulKernel kernel) {
  switch (kernel) {
    case MatmulKernel::Avx512:
      return detail::avx512_available();
    case MatmulKernel::Avx2:
      return detail::avx2_available();
    default:
      return true;
  }
}

const char* matmul_kernel_name(MatmulKernel kernel) {
  switch (kernel) {
    case MatmulKernel::Avx512:
      return "avx512";
    case MatmulKernel::Avx2:
      return "avx2";
    case MatmulKernel::Portable:
      return "portable";
    default:
      return "auto";
  }
}

void set_matmul_kernel(MatmulKernel kernel) {
  if (!matmul_kernel_available(kernel))
    throw ValueError(message("set_matmul_kernel: the ", matmul_kernel_name(kernel),
                             " kernel is not available (not built in, or this CPU lacks the instructions)"));
  detail::current_kernel().store(detail::resolve(kernel));
}

MatmulKernel matmul_kernel() { return detail::current_kernel().load(); }

}  // namespace gradformer
