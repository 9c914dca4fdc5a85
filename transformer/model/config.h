// What a Transformer is built from, before anything is built: which of the three architectures,
// and the settings every layer of every architecture shares (sizes, dropout, where the LayerNorm
// goes, the activation, the positions). The encoder-decoder, the decoder-only and the encoder-only
// model each include this and not one another.
#pragma once

#include <cstdint>
#include <string>

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

/// Where a position's vector comes from: the fixed sinusoid table, or a trained [max_len, d] matrix.
enum class Positions { Sinusoidal, Learned };

/// The Transformer family, all built from the same blocks (the layers of encoder.h and decoder.h):
///   EncoderDecoder  the paper's: an encoder (self-attention, padding mask) and a decoder (causal
///                   self-attention and cross-attention to the encoder), trained to translate
///   DecoderOnly     GPT: one stack of decoder-only blocks (the encoder's layer) under a causal
///                   mask, no cross-attention, trained to predict the next token
///                   (transformer/model/decoder_only.h)
///   EncoderOnly     BERT: one stack of encoder layers under the padding mask alone, trained to
///                   classify or to fill in masked tokens
enum class Architecture { EncoderDecoder, DecoderOnly, EncoderOnly };
/// "encoder-decoder", "decoder-only", "encoder-only" (the checkpoint's config.arch, the program's --arch).
const char* architecture_name(Architecture arch);
/// The name with its article, for messages: "an encoder-decoder", "a decoder-only", "an encoder-only".
std::string a_architecture(Architecture arch);
/// The inverse; ValueError listing the three names for anything else.
Architecture parse_architecture(const std::string& name);

struct TransformerConfig {
  Architecture arch = Architecture::EncoderDecoder;
  int64_t src_vocab = 0, tgt_vocab = 0;
  int64_t d_model = 512, d_ff = 2048, heads = 8, layers = 6;  // layers: N, in the encoder and in the decoder
  double dropout = 0.1;                                       // P_drop
  NormPlacement norm = NormPlacement::Post;
  int64_t max_len = 512;  // the longest sequence the positional encoding covers
  bool tie_embeddings = false;
  DType dtype = DType::Float32;
  Activation activation = Activation::ReLU;  // of the feed-forward network
  Positions positions = Positions::Sinusoidal;
  /// The token embedding multiplied by sqrt(d) before the positions are added (section 3.4, "we
  /// multiply those weights by sqrt(d_model)"); GPT-2 adds its embeddings unscaled.
  bool scale_embedding = true;
  double norm_eps = 1e-5;  // every LayerNorm's epsilon (GPT-2's layer_norm_epsilon: 1e-5 too)

  /// Small enough to train in seconds on a CPU: d 128, d_ff 512, h 8, N 2, dropout 0.1.
  static TransformerConfig tutorial(int64_t src_vocab, int64_t tgt_vocab);
  /// The paper's base model: d 512, d_ff 2048, h 8, N 6, dropout 0.1; embeddings tied when the
  /// vocabularies are the same size (the paper's shared 37,000-token BPE vocabulary).
  static TransformerConfig base(int64_t src_vocab = 37000, int64_t tgt_vocab = 37000);
  /// The paper's big model: d 1024, d_ff 4096, h 16, N 6, dropout 0.3; tied as base.
  static TransformerConfig big(int64_t src_vocab = 37000, int64_t tgt_vocab = 37000);

  /// The largest sizes validate() accepts: far beyond any model this library can train on a CPU,
  /// they make a typo or a hostile checkpoint an error rather than an allocation of terabytes.
  static constexpr int64_t max_vocab = int64_t{1} << 24, max_d_model = 65536, max_d_ff = 262144, max_heads = 1024,
                           max_layers = 1024, max_max_len = int64_t{1} << 20;
  /// And the most numbers the parameters and the positional-encoding table may hold together
  /// (8 GiB in float32: GPT-2 xl's 1.56 billion fit).
  static constexpr int64_t max_numbers = int64_t{1} << 31;

  /// ValueError naming the field: sizes not positive or above the bounds above, a model of more
  /// than max_numbers, d_model not divisible by heads or odd, dropout outside [0, 1), tied
  /// embeddings with different vocabulary sizes; DTypeError for a non-floating dtype. Checked
  /// before anything is allocated.
  void validate() const;
  LayerConfig layer() const { return {d_model, heads, d_ff, dropout, norm, dtype, activation, norm_eps}; }
};

}  // namespace gradformer
