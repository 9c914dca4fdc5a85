// The reference solution of tutorials/exercises/09_masks.cpp (what transformer/model/masks.cpp does).
#include "exercises.h"

namespace exercises {

using namespace gradformer;

Tensor causal_mask(int64_t length) {
  const Tensor positions = arange(length, DType::Int64);
  // query i (rows, [T, 1]) may see key j (columns, [1, T]) when j <= i
  return le(positions.unsqueeze(0), positions.unsqueeze(1));
}

Tensor padding_mask(const Tensor& ids, int64_t pad) {
  return ne(ids, scalar(static_cast<double>(pad), DType::Int64)).unsqueeze(1);  // [B, S] -> [B, 1, S]
}

}  // namespace exercises
