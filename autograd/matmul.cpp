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
namespace {

// A matrix stored transposed: a transposed view of a dense one, as linear's W^T is. Its gradient is
// made in that layout too, as the transpose of a dense product, so that transpose's backward turns it
// back into a dense tensor the engine can keep as the weight's gradient without copying it.
bool stored_transposed(const Tensor& t) {
  const int r = t.dim();
  return r >= 2 && t.size(-2) > 1 && t.size(-1) > 1 && t.strides()[r - 2] == 1 && t.strides()[r - 1] == t.size(-2);
}

}  // namespace

Variable matmul(const Variable& a, const Variable& b) {
  // dA^T = B G^T and dB^T = G^T A: the same products, summed in the same order, in the other layout,
  // chosen by how A and B are laid out (seen here: the node keeps A only to make dB, and B only for dA).
  const bool same_rank = a.dim() == b.dim();  // no broadcast batch dimensions to sum over
  const bool a_transposed = same_rank && stored_transposed(a.value()),
             b_transposed = same_rank && stored_transposed(b.value());
  return record("matmul", gradformer::matmul(a.value(), b.value()), {a, b}, Reads::Other,
                [a_transposed, b_transposed](const Tensor& g, Grads& dx) {
                  if (dx.wanted(0)) {
                    const Tensor& bv = dx.input(1);
                    dx[0] = a_transposed ? gradformer::matmul(bv, g.transpose(-2, -1)).transpose(-2, -1)
                                         : gradformer::matmul(g, bv.transpose(-2, -1));
                  }
                  if (dx.wanted(1)) {
                    const Tensor& av = dx.input(0);
                    dx[1] = b_transposed ? gradformer::matmul(g.transpose(-2, -1), av).transpose(-2, -1)
                                         : gradformer::matmul(av.transpose(-2, -1), g);
                  }
                });
}

}  // namespace gradformer
