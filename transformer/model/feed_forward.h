// Position-wise feed-forward network (Vaswani et al., 2017, section 3.3):
//
//   "In addition to attention sub-layers, each of the layers in our encoder and decoder contains a
//    fully connected feed-forward network, which is applied to each position separately and
//    identically. This consists of two linear transformations with a ReLU activation in between."
//
//       FFN(x) = max(0, x W_1 + b_1) W_2 + b_2        d_model -> d_ff -> d_model
//
// PyTorch registers the two Linears on the encoder/decoder layer itself (encoder.layers.0.linear1),
// not on a sub-module, so the layers own linear1, linear2 and the inner dropout and call
// feed_forward() below: a function of them, not a module of its own.
#pragma once

#include "autograd/variable.h"
#include "nn/layers.h"
#include "transformer/model/config.h"

namespace gradformer {

/// linear2(dropout(act(linear1(x)))), act relu (the paper) or gelu (GPT, BERT)   x: [..., d_model] -> [..., d_ff] ->
/// [..., d_model] (dropout on the hidden activations, as PyTorch's TransformerEncoderLayer and the Annotated
/// Transformer do.) SwiGLU (Llama): linear2(dropout(silu(linear1(x)) * linear3(x))), linear1 the gate,
/// linear3 the up projection (Meta's w1 and w3), which must then be given; d_ff is each one's width.
Variable feed_forward(const Variable& x, const Linear& linear1, const Linear& linear2, const Dropout& dropout,
                      Activation activation = Activation::ReLU, const Linear* linear3 = nullptr);

}  // namespace gradformer
