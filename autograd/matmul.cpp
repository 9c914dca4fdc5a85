#include "autograd/matmul.h"

#include "autograd/node.h"
#include "tensor/matmul.h"

namespace gradformer {

// g: [..., M, N], a: [..., M, K], b: [..., K, N]
//   dA = g b^T : [..., M, N] x [..., N, K] -> [..., M, K]
//   dB = a^T g : [..., K, M] x [..., M, N] -> [..., K, N]
// forward:  gradformer::matmul(a.value(), b.value()), C = A B with C[i, j] = sum_p A[i, p] B[p, j]. With G = dL/dC:
//   dL/dA[i, p] = sum_j G[i, j] B[p, j] = (G B^T)[i, p],   dL/dB[p, j] = sum_i A[i, p] G[i, j] = (A^T G)[p, j]
// (tutorials/03-autograd.md derives it; batched operands transpose their last two dimensions).
Variable matmul(const Variable& a, const Variable& b) {
  return record("matmul", gradformer::matmul(a.value(), b.value()), {a, b}, [](const Tensor& g, Grads& dx) {
    if (dx.wanted(0)) dx[0] = gradformer::matmul(g, dx.input(1).transpose(-2, -1));
    if (dx.wanted(1)) dx[1] = gradformer::matmul(dx.input(0).transpose(-2, -1), g);
  });
}

}  // namespace gradformer
