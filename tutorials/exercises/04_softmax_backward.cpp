// Exercise (chapter 4): write softmax's backward.
//
// P is the softmax of some scores S along the last dimension ([rows, C], contiguous, float64 in the
// checker), dP is dL/dP. Return dL/dS, shape [rows, C]. Chapter 4 derives the formula; write it with
// tensor ops (mul, sub, sum with keepdim) or with a loop over P.data<double>(). Then:
//   cmake -S . -B build -DGRADFORMER_EXERCISES=ON && cmake --build build -j2 && ctest --test-dir build -L exercises
#include "exercises.h"

namespace exercises {

using namespace gradformer;

Tensor softmax_backward(const Tensor& P, const Tensor& dP) {
  // Your code here.
  (void)dP;
  return zeros_like(P);
}

}  // namespace exercises
