// The masks that keep attention off the padding and off the future.
//
// MASK CONVENTION (every attention in the model relies on it): a bool mask is TRUE WHERE ATTENTION
// IS ALLOWED, as in the Annotated Transformer. Masks are [B, Tq or 1, Tk]; unsqueeze(1) makes them
// broadcast against attention scores [B, H, Tq, Tk], and attention sets scores to -inf where the
// mask is false.
#pragma once

#include <cstdint>

#include "tensor/tensor.h"

namespace gradformer {

/// [T, T] bool, lower-triangular true: position i may attend to positions j <= i.
/// "We ... modify the self-attention sub-layer in the decoder stack to prevent positions from
/// attending to subsequent positions." (Vaswani et al., 2017, section 3.1)
Tensor causal_mask(int64_t length);
/// ids: [B, S] int64 -> [B, 1, S] bool, true where ids != pad (the keys any query may attend to).
Tensor padding_mask(const Tensor& ids, int64_t pad);
/// tgt_in: [B, T] int64 -> [B, T, T] bool: padding_mask(tgt_in) AND causal_mask(T): query i sees
/// the non-pad keys j <= i.
Tensor target_mask(const Tensor& tgt_in, int64_t pad);

}  // namespace gradformer
