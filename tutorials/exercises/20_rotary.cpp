// Exercise (chapter 20): rotary positions on one head, the rotation every query and key of a Llama
// goes through before attention.
//
// x is [T, d_k] (float64, d_k even): row t is a query or a key at position p = start + t. With
// h = d_k / 2, pair i is (x_i, x_{i+h}), for i = 0 .. h - 1, and it is turned by the angle
//   a = p * theta^(-2i / d_k)
// as a point of the plane:
//   out_i     = x_i cos(a) - x_{i+h} sin(a)
//   out_{i+h} = x_{i+h} cos(a) + x_i sin(a)
// Return out, [T, d_k] float64. Read x with x.contiguous().to_vector<double>() (rows = x.size(0),
// d_k = x.size(1)) and build the result with from_vector(values, {T, d_k}). Then:
//   cmake --build build --target check-exercise-20_rotary
// Delete the `throw` line when you write the body: it is how the checker knows that the file is
// untouched, and says so.
#include "exercises.h"

namespace exercises {

using namespace gradformer;

Tensor rotate_pairs(const Tensor& x, double theta, int64_t start) {
  // Your code here.
  (void)x, (void)theta, (void)start;
  throw NotWrittenYet();
}

}  // namespace exercises
