// Reference implementation: correct for every shape and stride, not yet fast.
// (The packed, cache-blocked SIMD kernel replaces the inner product below.)
#include "tensor/matmul.h"

#include "tensor/parallel.h"

namespace gradformer {

Tensor matmul(const Tensor& a, const Tensor& b) {
  if (a.dim() < 2 || b.dim() < 2)
    throw ShapeError(message("matmul: both operands need at least 2 dimensions, a is ", a.shape(), ", b is ", b.shape()));
  if (a.dtype() != b.dtype()) throw DTypeError(message("matmul: dtypes differ: ", a.dtype(), " and ", b.dtype()));
  const int64_t M = a.size(-2), K = a.size(-1), N = b.size(-1);
  if (b.size(-2) != K)
    throw ShapeError(message("matmul: inner dimensions differ: a is ", a.shape(), ", b is ", b.shape()));

  // Broadcast the batch dimensions, then view both operands as [batch..., rows, cols].
  Shape a_batch(std::span(a.shape().begin(), a.shape().end() - 2));
  Shape b_batch(std::span(b.shape().begin(), b.shape().end() - 2));
  const Shape batch = broadcast_shapes(a_batch, b_batch, "matmul");
  Shape a_full = batch, b_full = batch, out_shape = batch;
  a_full.push_back(M), a_full.push_back(K);
  b_full.push_back(K), b_full.push_back(N);
  out_shape.push_back(M), out_shape.push_back(N);
  const Tensor A = a.expand(a_full), B = b.expand(b_full);
  Tensor out = Tensor::empty(out_shape, a.dtype());
  const int64_t batches = batch.numel();
  const int r = batch.rank();

  dispatch_floating(a.dtype(), "matmul", [&]<class T>() {
    const T* pa = A.data<T>();
    const T* pb = B.data<T>();
    T* po = out.data<T>();
    const int64_t sam = A.strides()[r], sak = A.strides()[r + 1];
    const int64_t sbk = B.strides()[r], sbn = B.strides()[r + 1];
    parallel_for(0, batches * M, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t row = lo; row < hi; ++row) {
        const int64_t bi = row / M, i = row % M;
        int64_t oa = 0, ob = 0;
        for (int64_t d = r - 1, rem = bi; d >= 0; --d) {
          const int64_t idx = rem % batch[static_cast<int>(d)];
          rem /= batch[static_cast<int>(d)];
          oa += idx * A.strides()[static_cast<int>(d)];
          ob += idx * B.strides()[static_cast<int>(d)];
        }
        T* c = po + row * N;
        for (int64_t j = 0; j < N; ++j) c[j] = 0;
        for (int64_t k = 0; k < K; ++k) {
          const T aik = pa[oa + i * sam + k * sak];
          for (int64_t j = 0; j < N; ++j) c[j] += aik * pb[ob + k * sbk + j * sbn];
        }
      }
    });
  });
  return out;
}

}  // namespace gradformer
