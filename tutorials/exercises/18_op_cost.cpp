// Exercise (chapter 18): count what an op costs, and so where it sits on the roofline.
//
// Count as the profiler does: flops, the floating-point operations (a multiply and an add are two),
// and bytes, the sizes of the tensors the op reads and writes, each once, elements of
// `element_bytes` bytes (4 for float32, 8 for float64). The op's intensity is flops / bytes.
//   matmul_cost:          C = A B, A [M, K], B [K, N]: each of C's M N entries is a sum of K products.
//   matmul_backward_cost: dA = G B^T [M, K] and dB = A^T G [K, N] from G [M, N]: two products of the
//                         forward's size; it reads G, A and B and writes dA and dB.
//   add_cost:             c = a + b over n elements: one addition each; reads a and b, writes c.
// Then:
//   cmake --build build --target check-exercise-18_op_cost
// Delete the `throw` lines when you write the bodies: they are how the checker knows that the file
// is untouched, and says so.
#include "exercises.h"

namespace exercises {

OpCost matmul_cost(int64_t M, int64_t K, int64_t N, int64_t element_bytes) {
  // Your code here.
  (void)M, (void)K, (void)N, (void)element_bytes;
  throw NotWrittenYet();
}

OpCost matmul_backward_cost(int64_t M, int64_t K, int64_t N, int64_t element_bytes) {
  // Your code here.
  (void)M, (void)K, (void)N, (void)element_bytes;
  throw NotWrittenYet();
}

OpCost add_cost(int64_t n, int64_t element_bytes) {
  // Your code here.
  (void)n, (void)element_bytes;
  throw NotWrittenYet();
}

}  // namespace exercises
