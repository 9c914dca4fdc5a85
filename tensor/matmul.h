// Matrix multiply, with batching and broadcasting over leading dimensions:
//   a: [..., M, K], b: [..., K, N] -> out: [..., M, N]
// Either operand may be a transposed view (a.transpose(-2, -1)); the kernel reads it through its
// strides, no copy first. float32 and float64.
// How it is fast: tutorials/02-matmul.md; the code: gemm.h, gemm.cpp, gemm_kernel_*.cpp.
#pragma once

#include "tensor/tensor.h"

namespace gradformer {

/// ShapeError "matmul: inner dimensions differ: a is [4, 3], b is [5, 2]" and the like;
/// DTypeError if the dtypes differ or are not floating.
Tensor matmul(const Tensor& a, const Tensor& b);

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
