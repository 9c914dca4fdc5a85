// Which micro-kernel matmul (tensor/matmul.h) runs: chosen once from what this build and CPU can
// run, or named by the environment (GRADFORMER_MATMUL) or a test (set_matmul_kernel).
#pragma once

namespace gradformer {

/// Which micro-kernel matmul runs. Auto (the default) picks the widest this build and CPU can run:
/// Avx512 (CMake option GRADFORMER_AVX512; a CPU with AVX-512F), else Avx2 (GRADFORMER_AVX2; AVX2
/// and FMA), else Portable. All three give the same products; the SIMD ones bit for bit. The
/// environment variable GRADFORMER_MATMUL=avx512, avx2 or portable sets the starting choice.
enum class MatmulKernel { Auto, Avx512, Avx2, Portable };

/// ValueError when asked for a kernel this build or CPU lacks.
void set_matmul_kernel(MatmulKernel kernel);
/// The kernel matmul runs now (never Auto).
MatmulKernel matmul_kernel();
/// Whether `kernel` can be chosen on this build and CPU (Auto and Portable always can).
bool matmul_kernel_available(MatmulKernel kernel);
/// "avx512", "avx2", "portable" or "auto".
const char* matmul_kernel_name(MatmulKernel kernel);

}  // namespace gradformer
