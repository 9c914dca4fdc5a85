// What every encoder and decoder layer is built from: the sizes, dropout, where the LayerNorm goes.
#pragma once

#include <cstdint>

#include "tensor/dtype.h"

namespace gradformer {

/// Post-LN is the paper's "LayerNorm(x + Sublayer(x))"; pre-LN "x + Sublayer(LayerNorm(x))" (with a
/// final LayerNorm after the stack) trains more stably without warmup (Xiong et al., 2020).
enum class NormPlacement { Post, Pre };

/// The feed-forward network's nonlinearity: the paper's ReLU, max(0, x), or GELU, x Phi(x) (Hendrycks
/// and Gimpel, 2016), which GPT and BERT use ("we use a gelu activation rather than the standard relu",
/// Devlin et al., 2019). gradformer's GELU is the exact erf form (GPT-2 uses a tanh approximation).
enum class Activation { ReLU, GELU };

struct LayerConfig {
  int64_t d_model = 512;
  int64_t heads = 8;
  int64_t d_ff = 2048;
  double dropout = 0.1;  // P_drop: sub-layer outputs, FFN hidden units, attention weights
  NormPlacement norm = NormPlacement::Post;
  DType dtype = DType::Float32;
  Activation activation = Activation::ReLU;
};

}  // namespace gradformer
