// The reference solution of tutorials/exercises/04_softmax_backward.cpp (what autograd/fused_softmax.cpp
// computes, row by row).
#include "exercises.h"

namespace exercises {

using namespace gradformer;

Tensor softmax_backward(const Tensor& P, const Tensor& dP) {
  // dS = P * (dP - rowsum(dP * P))
  return P * (dP - sum(dP * P, {-1}, /*keepdim=*/true));
}

}  // namespace exercises
