// Exercise (chapter 9): the two masks that decide which positions attention may look at.
//
// A mask is a bool tensor, TRUE WHERE ATTENTION IS ALLOWED (transformer/model/masks.h):
// causal_mask(T): [T, T], entry (i, j) true when query i may see key j, that is j <= i: no position
//   sees the ones after it.
// padding_mask(ids, pad): ids [B, S] int64 -> [B, 1, S], true where ids[b, s] != pad: every query
//   of sentence b may see its real tokens, none of its padding. The 1 lets it broadcast against
//   [B, Tq, S] scores.
// Bool tensors come from comparisons: le(a, b), ne(a, b) (tensor/elementwise.h, which broadcast like
// arithmetic) on arange(T, DType::Int64) or on ids; or fill a std::vector<int64_t> with 0 and 1,
// make it a tensor with from_vector(values, shape) and compare it with ne(t, scalar(0, DType::Int64)).
// Then:
//   cmake --build build --target check-exercise-09_masks
// Delete the `throw` lines when you write the bodies: they are how the checker knows that the file
// is untouched, and says so.
#include "exercises.h"

namespace exercises {

using namespace gradformer;

Tensor causal_mask(int64_t length) {
  // Your code here.
  (void)length;
  throw NotWrittenYet();
}

Tensor padding_mask(const Tensor& ids, int64_t pad) {
  // Your code here.
  (void)ids, (void)pad;
  throw NotWrittenYet();
}

}  // namespace exercises
