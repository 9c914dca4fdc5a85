// A program for the pretty-printer test: gdb stops in stop_here() and prints its arguments.
#include "autograd/all.h"

using namespace gradformer;

// noinline, and used, so gdb can break here and see the arguments even in an optimised build.
[[gnu::noinline]] void stop_here(const Tensor& matrix, const Tensor& column, const Variable& loss,
                                 const Variable& weight) {
  asm volatile("" : : "r"(&matrix), "r"(&column), "r"(&loss), "r"(&weight) : "memory");
}

int main() {
  const Tensor matrix = arange(6).reshape({2, 3});            // [[0, 1, 2], [3, 4, 5]]
  const Tensor column = matrix.transpose(0, 1).select(0, 1);  // [1, 4]: column 1, a strided view
  Variable weight(tensor({0.5, -1, 2}, {3}), /*requires_grad=*/true);
  Variable loss = sum(weight * weight);  // 0.25 + 1 + 4 = 5.25
  loss.backward();                       // grad = 2 * weight = [1, -2, 4]
  stop_here(matrix, column, loss, weight);
}
