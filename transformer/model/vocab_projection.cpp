#include "transformer/model/vocab_projection.h"

#include <cmath>

#include "autograd/all.h"
#include "nn/functional.h"

namespace gradformer {

// "In the embedding layers, we multiply those weights by sqrt(d_model)."
Variable scaled_embedding(const Variable& tokens, const TransformerConfig& config) {
  return config.scale_embedding ? tokens * std::sqrt(static_cast<double>(config.d_model)) : tokens;
}

VocabProjection::VocabProjection(int64_t d_model, int64_t vocab, DType dtype, Variable tied_weight, bool with_bias) {
  if (tied_weight.defined()) {
    if (tied_weight.shape() != Shape{vocab, d_model})
      throw ShapeError(
          message("VocabProjection: a tied weight must be [", vocab, ", ", d_model, "], got ", tied_weight.shape()));
    weight = tied_weight;
  } else {
    weight = register_parameter("weight", zeros({vocab, d_model}, dtype));
  }
  if (with_bias) bias = register_parameter("bias", zeros({vocab}, dtype));
}

// logits = x W^T + b   x: [..., d] -> [..., V]
Variable VocabProjection::forward(const Variable& x) const { return linear(x, weight, bias); }

}  // namespace gradformer
