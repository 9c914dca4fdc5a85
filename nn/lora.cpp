#include "nn/lora.h"

#include <algorithm>
#include <cmath>

#include "autograd/all.h"
#include "nn/functional.h"

namespace gradformer {

LoraAdapter::LoraAdapter(int64_t in, int64_t out, int64_t rank, double alpha, SkipInit, DType dtype)
    : scale_(alpha / static_cast<double>(rank)) {
  if (in <= 0 || out <= 0 || rank < 1 || rank > std::min(in, out) || !(alpha > 0 && std::isfinite(alpha)))
    throw ValueError(message("LoraAdapter: rank must be from 1 to min(in, out) = ", std::min(in, out),
                             " and alpha positive; got in ", in, ", out ", out, ", rank ", rank, ", alpha ", alpha));
  A = register_parameter("A", zeros({rank, in}, dtype));
  B = register_parameter("B", zeros({out, rank}, dtype));
}

LoraAdapter::LoraAdapter(int64_t in, int64_t out, int64_t rank, double alpha, Generator& gen, DType dtype)
    : LoraAdapter(in, out, rank, alpha, skip_init, dtype) {
  linear_default_(A, in, gen);  // B stays 0: the update starts at nothing
}

// (alpha / r) (x A^T) B^T: [..., in] -> [..., r] -> [..., out]
Variable LoraAdapter::forward(const Variable& x) const { return linear(linear(x, A), B) * scale_; }

Tensor LoraAdapter::delta() const { return mul(matmul(B.value(), A.value()), scalar(scale_, B.value().dtype())); }

}  // namespace gradformer
