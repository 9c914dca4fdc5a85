// Exercise (chapter 3): write mul's backward.
//
// The forward is done: it multiplies a and b elementwise. Fill in the backward function: given
// g = dL/d(a * b), put dL/da into dx[0] and dL/db into dx[1]. dx.input(0) is a's value, dx.input(1)
// is b's. Broadcasting is the engine's business (it sums a [3, 4] gradient down to a [4] input), so
// write the calculus only. Then:
//   cmake --build build --target check-exercise-03_mul_backward
// Delete the `throw` line when you write the body: it is how the checker knows that the file is
// untouched, and says so.
#include "exercises.h"

namespace exercises {

using namespace gradformer;

Variable mul(const Variable& a, const Variable& b) {
  return record("exercise_mul", gradformer::mul(a.value(), b.value()), {a, b}, [](const Tensor& g, Grads& dx) {
    // Your code here: dx[0] = ...; dx[1] = ...;
    (void)g, (void)dx;
    throw NotWrittenYet();
  });
}

}  // namespace exercises
