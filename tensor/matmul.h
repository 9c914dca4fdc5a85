// Matrix multiply, with batching and broadcasting over leading dimensions:
//   a: [..., M, K], b: [..., K, N] -> out: [..., M, N]
// Either operand may be a transposed view (a.transpose(-2, -1)); the kernel reads it through its
// strides, no copy first. float32 and float64.
// How it is fast: tutorials/02-matmul.md; the code: tensor/kernels/ (gemm.h, gemm.cpp, gemm_kernel_*.cpp).
#pragma once

#include "tensor/kernels/matmul_kernel.h"  // the choice of micro-kernel: MatmulKernel, set_matmul_kernel
#include "tensor/tensor.h"

namespace gradformer {

/// The matrix product by its definition, one plain triple loop: what the fast matmul below is
/// checked against by the tests, what tutorial chapter 2's ladder starts from and checks every step
/// against, and bench_matmul's slowest row. Slow on purpose; never used by the library itself.
/// a: [M, K], b: [K, N] -> out: [M, N], out[i, j] = sum over k (from 0 up) of a[i, k] * b[k, j],
/// summed in float64 and rounded once to the operands' dtype. Either operand may be any strided
/// view. ShapeError unless both are matrices with a's columns as many as b's rows ("matmul_reference:
/// inner dimensions differ: a is [4, 3], b is [5, 2]"); DTypeError if the dtypes differ or are not
/// floating; ValueError for an undefined tensor.
Tensor matmul_reference(const Tensor& a, const Tensor& b);

/// The fast one: ShapeError "matmul: inner dimensions differ: a is [4, 3], b is [5, 2]" and the like;
/// DTypeError if the dtypes differ or are not floating.
Tensor matmul(const Tensor& a, const Tensor& b);

}  // namespace gradformer
