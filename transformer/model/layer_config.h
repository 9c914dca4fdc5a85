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
/// Devlin et al., 2019). GELU is the exact erf form; GELUTanh its tanh approximation, which GPT-2
/// computes (x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), within 5e-4 of the exact form).
enum class Activation { ReLU, GELU, GELUTanh };

/// "relu", "gelu", "gelu-tanh": the checkpoint's config.activation and the program's --activation.
inline const char* activation_name(Activation a) {
  return a == Activation::GELU ? "gelu" : a == Activation::GELUTanh ? "gelu-tanh" : "relu";
}

struct LayerConfig {
  int64_t d_model = 512;
  int64_t heads = 8;
  int64_t d_ff = 2048;
  double dropout = 0.1;  // P_drop: sub-layer outputs, FFN hidden units, attention weights
  NormPlacement norm = NormPlacement::Post;
  DType dtype = DType::Float32;
  Activation activation = Activation::ReLU;
  double norm_eps = 1e-5;  // LayerNorm's epsilon, added to the variance
};

}  // namespace gradformer
