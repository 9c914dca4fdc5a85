#include "nn/functional.h"

#include "autograd/all.h"

namespace gradformer {

// y = x W^T + b
Variable linear(const Variable& x, const Variable& weight, const Variable& bias) {
  if (weight.dim() != 2)
    throw ShapeError(message("linear: weight must be [out, in], got ", weight.shape(), " (input ", x.shape(), ")"));
  const int64_t in = weight.size(1), out = weight.size(0);
  if (x.dim() < 1 || x.size(-1) != in)
    throw ShapeError(message("linear: input ", x.shape(), " does not fit weight ", weight.shape(),
                             ": its last dimension should be ", in));
  if (bias.defined() && bias.shape() != Shape{out})
    throw ShapeError(
        message("linear: bias ", bias.shape(), " does not fit weight ", weight.shape(), ": it should be [", out, "]"));
  Shape out_shape = x.shape();  // [..., in] -> [..., out]
  out_shape[out_shape.rank() - 1] = out;
  Variable y = matmul(reshape(x, {-1, in}), transpose(weight, 0, 1));  // [rows, in] x [in, out] -> [rows, out]
  if (bias.defined()) y = y + bias;                                    // [out] broadcasts over the rows
  return reshape(y, out_shape);
}

}  // namespace gradformer
