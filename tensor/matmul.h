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

/// Which micro-kernel matmul runs. Auto (the default) picks Avx2 when the library was built with
/// it (CMake option GRADFORMER_AVX2) and the CPU has AVX2 and FMA, else Portable. The environment
/// variable GRADFORMER_MATMUL=portable (or avx2) sets the starting choice.
enum class MatmulKernel { Auto, Avx2, Portable };

/// ValueError when asked for Avx2 on a build or CPU without it.
void set_matmul_kernel(MatmulKernel kernel);
/// The kernel matmul runs now (Avx2 or Portable, never Auto).
MatmulKernel matmul_kernel();
/// Whether Avx2 can be chosen on this build and CPU.
bool matmul_avx2_available();

}  // namespace gradformer
