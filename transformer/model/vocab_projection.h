// The two ends every generating model shares (the encoder-decoder and the decoder-only model):
// token vectors scaled on the way in, and the output layer that turns a vector back into one score
// per vocabulary token on the way out.
#pragma once

#include <cstdint>

#include "autograd/variable.h"
#include "nn/module.h"
#include "tensor/dtype.h"
#include "transformer/model/config.h"

namespace gradformer {

/// tokens [..., d] -> tokens * sqrt(d), or tokens as they are when config.scale_embedding is off.
Variable scaled_embedding(const Variable& tokens, const TransformerConfig& config);

/// The output layer: logits = x W^T + b,  x: [..., d] -> [..., V]. Its weight is its own [V, d]
/// parameter "weight", or, with tied embeddings, the embedding matrix (then only "bias" is
/// registered here). Registered as "generator" in EncoderDecoder and DecoderOnly (the checkpoint's name).
class VocabProjection : public Module {
 public:
  /// Allocated only: EncoderDecoder initialises it with the rest of the model. ShapeError unless a
  /// tied weight is [vocab, d_model]. Without a bias (GPT-2's lm_head), `bias` stays undefined.
  VocabProjection(int64_t d_model, int64_t vocab, DType dtype, Variable tied_weight = {}, bool with_bias = true);
  Variable forward(const Variable& x) const;  // linear(x, weight, bias)
  Variable weight, bias;
};

}  // namespace gradformer
