// Reference solution of tutorials/exercises/18_op_cost.cpp: flops from the loops, bytes from the shapes.
#include "exercises.h"

namespace exercises {

OpCost matmul_cost(int64_t M, int64_t K, int64_t N, int64_t element_bytes) {
  // C[i, j] = sum_k A[i, k] B[k, j]: K multiplies and K adds for each of the M N entries.
  return {.flops = 2 * M * N * K, .bytes = (M * K + K * N + M * N) * element_bytes};  // read A, B; write C
}

OpCost matmul_backward_cost(int64_t M, int64_t K, int64_t N, int64_t element_bytes) {
  // dA = G B^T: [M, N] x [N, K]; dB = A^T G: [K, M] x [M, N]. Each is 2 M N K flops.
  return {.flops = 4 * M * N * K, .bytes = (M * N + 2 * (M * K + K * N)) * element_bytes};  // G, A, B; dA, dB
}

OpCost add_cost(int64_t n, int64_t element_bytes) {
  return {.flops = n, .bytes = 3 * n * element_bytes};  // read a and b, write c
}

}  // namespace exercises
