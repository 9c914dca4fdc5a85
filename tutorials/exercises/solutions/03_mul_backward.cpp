// The reference solution of tutorials/exercises/03_mul_backward.cpp (what the library's own mul does).
#include "exercises.h"

namespace exercises {

using namespace gradformer;

Variable mul(const Variable& a, const Variable& b) {
  return record("exercise_mul", gradformer::mul(a.value(), b.value()), {a, b}, [](const Tensor& g, Grads& dx) {
    dx[0] = gradformer::mul(g, dx.input(1));  // d(a*b)/da = b
    dx[1] = gradformer::mul(g, dx.input(0));  // d(a*b)/db = a
  });
}

}  // namespace exercises
