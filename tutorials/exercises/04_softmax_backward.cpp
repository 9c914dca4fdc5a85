// Exercise (chapter 4): write softmax's backward.
//
// P is the softmax of some scores S along the last dimension ([rows, C], contiguous, float64 in the
// checker), dP is dL/dP. Return dL/dS, shape [rows, C]. Chapter 4 derives the formula; write it with
// tensor ops (mul, sub, sum with keepdim) or with a loop over P.data<double>(). Then:
//   cmake --build build --target check-exercise-04_softmax_backward
// Delete the `throw` line when you write the body: it is how the checker knows that the file is
// untouched, and says so.
#include "exercises.h"

namespace exercises {

using namespace gradformer;

Tensor softmax_backward(const Tensor& P, const Tensor& dP) {
  // Your code here.
  (void)P, (void)dP;
  throw NotWrittenYet();
}

}  // namespace exercises
