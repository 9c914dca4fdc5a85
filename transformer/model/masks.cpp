#include "transformer/model/masks.h"

#include "tensor/all.h"

namespace gradformer {

Tensor causal_mask(int64_t length) {
  if (length < 1) throw ValueError(message("causal_mask: length must be positive, got ", length));
  const Tensor positions = arange(length, DType::Int64);
  // query i (rows) may see key j (columns) when j <= i
  return le(positions.unsqueeze(0), positions.unsqueeze(1));
}

Tensor padding_mask(const Tensor& ids, int64_t pad) {
  if (ids.dim() != 2) throw ShapeError(message("padding_mask: ids must be [B, S], got ", ids.shape()));
  if (ids.dtype() != DType::Int64) throw DTypeError(message("padding_mask: ids must be int64, got ", ids.dtype()));
  return ne(ids, scalar(static_cast<double>(pad), DType::Int64)).unsqueeze(1);
}

Tensor target_mask(const Tensor& tgt_in, int64_t pad) {
  const Tensor keys = padding_mask(tgt_in, pad);                   // [B, 1, T]
  const Tensor causal = causal_mask(tgt_in.size(1)).unsqueeze(0);  // [1, T, T]
  return logical_and(keys, causal);                                // [B, T, T]
}

}  // namespace gradformer
