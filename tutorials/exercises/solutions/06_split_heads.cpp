// The reference solution of tutorials/exercises/06_split_heads.cpp (what MultiheadAttention's
// split_heads and attend do, in transformer/model/multihead_attention.cpp).
#include "exercises.h"

namespace exercises {

using namespace gradformer;

// [B, T, d] -> [B, T, h, d_k] (a view) -> [B, h, T, d_k] (a transposed view: no copy)
Tensor split_heads(const Tensor& x, int64_t heads) {
  return x.view({x.size(0), x.size(1), heads, x.size(2) / heads}).transpose(1, 2);
}

// [B, h, T, d_k] -> [B, T, h, d_k] -> [B, T, h d_k]: reshape copies, since the heads of one
// position are no longer next to each other in memory.
Tensor merge_heads(const Tensor& x) { return x.transpose(1, 2).reshape({x.size(0), x.size(2), x.size(1) * x.size(3)}); }

}  // namespace exercises
