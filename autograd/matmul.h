// Differentiable matrix multiply, batched with broadcasting over leading dimensions:
//   a: [..., M, K], b: [..., K, N] -> out: [..., M, N]
#pragma once

#include "autograd/variable.h"

namespace gradformer {

/// C = A B  =>  dA = dC B^T,  dB = A^T dC. The transposes are views read through their strides by
/// the same fast kernel: no copies. Batch dimensions that were broadcast are summed back.
Variable matmul(const Variable& a, const Variable& b);

}  // namespace gradformer
