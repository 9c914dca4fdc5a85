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
/// computes (x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), within 5e-4 of the exact form). SwiGLU
/// (Shazeer, 2020), Llama's, is a gated network of three matrices: down(silu(gate(x)) * up(x)).
enum class Activation { ReLU, GELU, GELUTanh, SwiGLU };

/// "relu", "gelu", "gelu-tanh", "swiglu": the checkpoint's config.activation and the program's --activation.
inline const char* activation_name(Activation a) {
  return a == Activation::GELU       ? "gelu"
         : a == Activation::GELUTanh ? "gelu-tanh"
         : a == Activation::SwiGLU   ? "swiglu"
                                     : "relu";
}

/// What each sub-layer's input (pre-LN) or output (post-LN) is normalised by: LayerNorm, or RMSNorm
/// (Zhang and Sennrich, 2019; Llama's), x / sqrt(mean(x^2) + eps) * g, no mean taken and no bias.
enum class Normalization { LayerNorm, RMSNorm };
/// "layernorm", "rmsnorm": the checkpoint's config.normalization and the program's --normalization.
inline const char* normalization_name(Normalization n) { return n == Normalization::RMSNorm ? "rmsnorm" : "layernorm"; }

/// Which projections have a bias b in x W^T + b: all (the paper's, GPT-2's), none (Llama's), the
/// attention's four (q, k, v and the output: Llama with attention_bias) or q, k and v only (Qwen2's).
enum class Bias { All, None, Attention, QKV };
/// "true", "false", "attention", "qkv": the checkpoint's config.bias and the program's --bias.
const char* bias_name(Bias b);

/// Llama 3.1's rescaling of the rotary frequencies for long contexts (its config's rope_scaling,
/// rope_type "llama3"): frequencies whose wavelength is longer than original_max_len / low_freq_factor
/// are divided by factor, those shorter than original_max_len / high_freq_factor kept, and those
/// between blended. factor 0 means no rescaling.
struct RopeScaling {
  double factor = 0, low_freq_factor = 1, high_freq_factor = 4;
  int64_t original_max_len = 8192;
  friend bool operator==(const RopeScaling&, const RopeScaling&) = default;
};

/// Low-rank adapters (LoRA, nn/lora.h) beside a layer's projections, for fine-tuning: rank 0 is none.
/// Each named projection W gets W + (alpha / rank) B A, A [rank, in] and B [out, rank]; q, k, v and o
/// are W^Q, W^K, W^V and W^O of every attention (self- and cross-), ffn the feed-forward's matrices.
/// embed adds no adapter: it trains the token embedding (and an untied output layer) in full beside
/// them, which a fine-tuning needs when its chat template added tokens (their rows must learn).
struct LoraOptions {
  int64_t rank = 0;
  double alpha = 0;  // the update's scale is alpha / rank (the paper sets alpha to the first rank tried)
  bool q = true, k = true, v = true, o = true, ffn = false, embed = false;
  friend bool operator==(const LoraOptions&, const LoraOptions&) = default;
};
/// "q,k,v,o", in the order q, k, v, o, ffn, embed (the checkpoint's config.lora.targets and the
/// program's --lora-targets).
std::string lora_targets_name(const LoraOptions& lora);
/// The inverse: the targets of a comma-separated list of q, k, v, o, ffn and embed, each at most once.
/// ValueError naming the piece and listing the six for anything else, or for an empty list.
LoraOptions parse_lora_targets(const std::string& list, LoraOptions lora = {});

/// The settings that turn the 2017 block into this decade's (Llama's, Qwen2's), each the paper's by
/// default, so that a configuration that does not name them is the model it always was; and the
/// adapters a fine-tuning adds beside the block's projections (none by default).
struct BlockOptions {
  Normalization normalization = Normalization::LayerNorm;
  /// Key/value heads N for grouped-query attention (Ainslie et al., 2023): the H query heads are
  /// split into N groups of H / N, and query head h reads key/value head h / (H / N). N = H (0 says
  /// "as many as heads") is multi-head attention; N = 1 multi-query attention (Shazeer, 2019).
  int64_t kv_heads = 0;
  int64_t head_dim = 0;  // d_k, each head's width; 0: d_model / heads
  Bias bias = Bias::All;
  double rope_theta = 10000;  // the rotary base: frequency i of d_k / 2 is rope_theta^(-2i / d_k)
  RopeScaling rope_scaling = {};
  LoraOptions lora = {};
  friend bool operator==(const BlockOptions&, const BlockOptions&) = default;
};

struct LayerConfig {
  int64_t d_model = 512;
  int64_t heads = 8;
  int64_t d_ff = 2048;
  double dropout = 0.1;  // P_drop: sub-layer outputs, FFN hidden units, attention weights
  NormPlacement norm = NormPlacement::Post;
  DType dtype = DType::Float32;
  Activation activation = Activation::ReLU;
  double norm_eps = 1e-5;  // the norms' epsilon: LayerNorm's added to the variance, RMSNorm's to the mean square
  BlockOptions block = {};
  bool rotary = false;    // rotary positions in self-attention (Positions::Rotary)
  int64_t max_len = 512;  // the positions the rotary tables cover
  int64_t kv_heads() const { return block.kv_heads > 0 ? block.kv_heads : heads; }
  int64_t head_dim() const { return block.head_dim > 0 ? block.head_dim : d_model / heads; }
};

/// Where a position's information comes from: the fixed sinusoid table or a trained [max_len, d]
/// matrix, added to the embedding; or rotary positions (RoPE, Su et al., 2021), nothing added, each
/// query and key turned by an angle proportional to its position in every self-attention.
enum class Positions { Sinusoidal, Learned, Rotary };
/// "sinusoidal", "learned", "rope": the checkpoint's config.positions and the program's --positions.
const char* positions_name(Positions p);

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
  double norm_eps = 1e-5;   // every norm's epsilon (GPT-2's layer_norm_epsilon: 1e-5 too)
  BlockOptions block = {};  // RMSNorm, grouped-query attention, biases, the rotary base (the paper's by default)

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
  LayerConfig layer() const {
    return {d_model, heads, d_ff, dropout, norm, dtype, activation, norm_eps, block, positions == Positions::Rotary,
            max_len};
  }
};

/// The checks every architecture's configuration makes of its block (validate() calls them): kv_heads
/// dividing heads, head_dim even with rotary positions, the rotary base and scaling, the adapters'
/// rank (at most the narrowest side of a projection they sit beside), alpha and targets; ValueError
/// naming `who` ("TransformerConfig") and the field.
void validate_block(const char* who, const LayerConfig& layer);
/// The parameters of one layer (with_cross_attention: a decoder layer's), term by term from the formula.
struct LayerCount {
  int64_t attention = 0, cross_attention = 0, feed_forward = 0, norms = 0;
  int64_t lora = 0;  // the adapters' A and B, over every projection they sit beside
  int64_t total() const { return attention + cross_attention + feed_forward + norms + lora; }
};
LayerCount layer_parameter_count(const LayerConfig& layer, bool with_cross_attention);
/// One norm's parameters: 2 d for LayerNorm (gain and bias), d for RMSNorm (gain only).
int64_t norm_parameter_count(const LayerConfig& layer);

}  // namespace gradformer
