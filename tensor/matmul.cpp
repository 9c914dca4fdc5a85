// matmul: the naive triple loop first (the definition every faster version is checked against),
// then the fast one's shapes, batching and broadcasting. Its arithmetic is in tensor/kernels/:
// gemm.cpp (the blocked loops) and gemm_kernel_*.cpp (the micro-kernels).
//   a: [..., M, K], b: [..., K, N] -> out: [..., M, N]
#include "tensor/matmul.h"

#include <vector>

#include "tensor/kernels/gemm.h"  // gemm_batch: the blocked loops, on raw pointers

namespace gradformer {

// The definition: out[i, j] = sum_k a[i, k] * b[k, j], each sum in float64, rounded once.
Tensor matmul_reference(const Tensor& a, const Tensor& b) {
  const char* op = "matmul_reference";
  if (!a.defined() || !b.defined()) throw ValueError(message(op, ": undefined tensor"));
  if (a.dim() != 2 || b.dim() != 2)
    throw ShapeError(
        message(op, ": both operands must be matrices (2 dimensions), a is ", a.shape(), ", b is ", b.shape()));
  if (a.dtype() != b.dtype()) throw DTypeError(message(op, ": dtypes differ: ", a.dtype(), " and ", b.dtype()));
  if (!is_floating(a.dtype()))
    throw DTypeError(message(op, ": expected a floating dtype (float32 or float64), got ", a.dtype()));
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  if (b.size(0) != K)
    throw ShapeError(message(op, ": inner dimensions differ: a is ", a.shape(), ", b is ", b.shape()));
  Tensor out = Tensor::empty({M, N}, a.dtype());
  dispatch_floating(a.dtype(), op, [&]<class T>() {
    // A(i, k) = pa[i * sa0 + k * sa1], B(k, j) = pb[k * sb0 + j * sb1]: the views' own strides
    const T *pa = a.data<T>(), *pb = b.data<T>();
    const int64_t sa0 = a.strides()[0], sa1 = a.strides()[1], sb0 = b.strides()[0], sb1 = b.strides()[1];
    T* po = out.data<T>();
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double sum = 0;
        for (int64_t k = 0; k < K; ++k)
          sum += static_cast<double>(pa[i * sa0 + k * sa1]) * static_cast<double>(pb[k * sb0 + j * sb1]);
        po[i * N + j] = static_cast<T>(sum);
      }
  });
  return out;
}

// The fast one: the same sums, each in the operands' dtype, by the blocked loops of tensor/kernels/.

// The strides of x's batch dimensions, aligned to the broadcast batch shape `batch` (from the
// right): 0 where x lacks the dimension or has size 1 there, so that every element of the batch
// finds its operand with the same arithmetic, broadcast or not.
static Shape batch_strides(const Tensor& x, const Shape& batch) {
  Shape strides = batch;
  const int missing = batch.rank() - (x.dim() - 2);
  for (int d = 0; d < batch.rank(); ++d)
    strides[d] = d < missing || x.shape()[d - missing] == 1 ? 0 : x.strides()[d - missing];
  return strides;
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined()) throw ValueError("matmul: undefined tensor");
  const int ra = a.dim(), rb = b.dim();
  if (ra < 2 || rb < 2)
    throw ShapeError(
        message("matmul: both operands need at least 2 dimensions, a is ", a.shape(), ", b is ", b.shape()));
  if (a.dtype() != b.dtype()) throw DTypeError(message("matmul: dtypes differ: ", a.dtype(), " and ", b.dtype()));
  if (!is_floating(a.dtype()))
    throw DTypeError(message("matmul: expected a floating dtype (float32 or float64), got ", a.dtype()));
  const int64_t M = a.shape()[ra - 2], K = a.shape()[ra - 1], N = b.shape()[rb - 1];
  if (b.shape()[rb - 2] != K)
    throw ShapeError(message("matmul: inner dimensions differ: a is ", a.shape(), ", b is ", b.shape()));

  // out: [batch..., M, N], batch = the broadcast of a's and b's leading dimensions (none for two
  // matrices, the common case, which skips the batch arithmetic below)
  const bool batched = ra > 2 || rb > 2;
  const Shape batch = batched ? broadcast_shapes(Shape(std::span(a.shape().begin(), ra - 2)),
                                                 Shape(std::span(b.shape().begin(), rb - 2)), "matmul")
                              : Shape{};
  Shape out_shape = batch;
  out_shape.push_back(M), out_shape.push_back(N);
  Tensor out = Tensor::empty(out_shape, a.dtype());
  if (out.numel() == 0) return out;
  const int64_t batches = batch.numel();
  // the matrices' own strides: A(i, k) = pa[i * sam + k * sak], B(k, j) = pb[k * sbk + j * sbn]
  const int64_t sam = a.strides()[ra - 2], sak = a.strides()[ra - 1], sbk = b.strides()[rb - 2],
                sbn = b.strides()[rb - 1];
  // out[bi] = A[bi] · B[bi]: the flat batch index bi unravelled into each operand's offset
  std::vector<int64_t> a_offsets(batches, 0), b_offsets(batches, 0);
  if (batched) {
    const Shape a_bs = batch_strides(a, batch), b_bs = batch_strides(b, batch);
    for (int64_t bi = 0; bi < batches; ++bi)
      for (int64_t d = batch.rank() - 1, rest = bi; d >= 0; --d) {
        const int dim = static_cast<int>(d);
        a_offsets[bi] += rest % batch[dim] * a_bs[dim];
        b_offsets[bi] += rest % batch[dim] * b_bs[dim];
        rest /= batch[dim];
      }
  }
  dispatch_floating(a.dtype(), "matmul", [&]<class T>() {
    detail::gemm_batch<T>(M, N, K, a.data<T>(), a_offsets.data(), sam, sak, b.data<T>(), b_offsets.data(), sbk, sbn,
                          out.data<T>(), batches);
  });
  return out;
}

}  // namespace gradformer
