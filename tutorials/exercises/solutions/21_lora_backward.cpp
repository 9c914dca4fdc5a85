// The reference solution of tutorials/exercises/21_lora_backward.cpp, by the three products of the
// chapter (what autograd computes through nn/lora.cpp's two linear calls).
#include "exercises.h"

namespace exercises {

using namespace gradformer;

LoraGradients lora_backward(const Tensor& x, const Tensor& A, const Tensor& B, double scale, const Tensor& G) {
  const Tensor s = scalar(scale, DType::Float64);
  const Tensor u = matmul(x, A.transpose(0, 1));       // [N, r]
  const Tensor g = matmul(G, B);                       // [N, r]
  return {.dA = mul(matmul(g.transpose(0, 1), x), s),  // [r, in]
          .dB = mul(matmul(G.transpose(0, 1), u), s),  // [out, r]
          .dx = mul(matmul(g, A), s)};                 // [N, in]
}

}  // namespace exercises
