// Exercise (chapter 5): write one attention head.
//
// Return softmax(q k^T / sqrt(d_k)) v for q [Tq, d_k], k [Tk, d_k], v [Tk, d_v] (float64 in the
// checker); where `allowed` is defined, a false entry (i, j) means query i must give key j the weight
// 0. Use tensor ops (matmul, transpose, a softmax along the last dimension you write yourself with
// exp, max and sum, or the autograd ops of chapter 3 on Variable(q) and .value() at the end). Then:
//   cmake --build build --target check-exercise-05_attention_head
// Delete the `throw` line when you write the body: it is how the checker knows that the file is
// untouched, and says so.
#include "exercises.h"

namespace exercises {

using namespace gradformer;

Tensor attention_head(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& allowed) {
  // Your code here.
  (void)q, (void)k, (void)v, (void)allowed;
  throw NotWrittenYet();
}

}  // namespace exercises
