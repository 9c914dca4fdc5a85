// Exercise (chapter 6): split the model's width into heads, and merge them back.
//
// split_heads: x [B, T, d] -> [B, h, T, d_k] with d_k = d / h, where head i of position t is the
// features [i d_k, (i + 1) d_k) of x[b, t]: result[b, i, t, j] = x[b, t, i d_k + j].
// merge_heads: the inverse, [B, h, T, d_k] -> [B, T, h d_k], the heads of one position side by side
// again (the paper's Concat(head_1, ..., head_h)).
// Either with views (x.view(shape), x.transpose(dim0, dim1), x.reshape(shape): which of them copy?)
// or, to see each index move, with loops over x.contiguous().to_vector<double>() and from_vector.
// The checker's tensors are float64. Then:
//   cmake --build build --target check-exercise-06_split_heads
// Delete the `throw` lines when you write the bodies: they are how the checker knows that the file
// is untouched, and says so.
#include "exercises.h"

namespace exercises {

using namespace gradformer;

Tensor split_heads(const Tensor& x, int64_t heads) {
  // Your code here.
  (void)x, (void)heads;
  throw NotWrittenYet();
}

Tensor merge_heads(const Tensor& x) {
  // Your code here.
  (void)x;
  throw NotWrittenYet();
}

}  // namespace exercises
