// Exercise (chapter 1): strides, the numbers that turn an index into a place in memory.
//
// 1. row_major_strides: the strides of a contiguous tensor of this shape, in elements. The last
//    dimension's stride is 1; each earlier one is the next one's stride times the next one's size:
//    [2, 3, 4] -> [12, 4, 1]. A shape of rank 0 has no strides (an empty Shape); build the answer
//    with Shape's push_back, or fill a Shape of the right rank by index.
// 2. element_offset: where element `index` of `t` sits in its storage, counted in elements from the
//    storage's start: t.offset() + index[0] * t.strides()[0] + index[1] * t.strides()[1] + ...
//    This works for every view (a transpose, a slice, an expand), which is why views cost nothing.
// Then:
//   cmake --build build --target check-exercise-01_strides
// Delete the `throw` lines when you write the bodies: they are how the checker knows that the file
// is untouched, and says so.
#include "exercises.h"

namespace exercises {

using namespace gradformer;

Shape row_major_strides(const Shape& shape) {
  // Your code here.
  (void)shape;
  throw NotWrittenYet();
}

int64_t element_offset(const Tensor& t, const std::vector<int64_t>& index) {
  // Your code here.
  (void)t, (void)index;
  throw NotWrittenYet();
}

}  // namespace exercises
