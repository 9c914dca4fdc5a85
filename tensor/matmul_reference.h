// The matrix product by its definition, one plain triple loop: what the fast matmul (matmul.h) is
// checked against by the tests, what tutorial chapter 2's ladder starts from and checks every step
// against, and bench_matmul's slowest row. Slow on purpose; never used by the library itself.
#pragma once

#include "tensor/tensor.h"

namespace gradformer {

/// a: [M, K], b: [K, N] -> out: [M, N], out[i, j] = sum over k (from 0 up) of a[i, k] * b[k, j],
/// summed in float64 and rounded once to the operands' dtype. Either operand may be any strided
/// view. ShapeError unless both are matrices with a's columns as many as b's rows ("matmul_reference:
/// inner dimensions differ: a is [4, 3], b is [5, 2]"); DTypeError if the dtypes differ or are not
/// floating; ValueError for an undefined tensor.
Tensor matmul_reference(const Tensor& a, const Tensor& b);

}  // namespace gradformer
