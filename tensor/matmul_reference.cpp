#include "tensor/matmul_reference.h"

namespace gradformer {

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

}  // namespace gradformer
