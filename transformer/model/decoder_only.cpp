#include "transformer/model/decoder_only.h"

#include <cmath>

#include "autograd/all.h"
#include "nn/functional.h"

namespace gradformer {

TransformerConfig decoder_only_config(int64_t vocab) {
  TransformerConfig c = TransformerConfig::tutorial(vocab, vocab);
  c.arch = Architecture::DecoderOnly;
  c.norm = NormPlacement::Pre;
  return c;
}

TransformerConfig gpt2_small_config() {
  TransformerConfig c = decoder_only_config(50257);
  c.max_len = 1024, c.d_model = 768, c.layers = 12, c.heads = 12, c.d_ff = 4 * 768;
  c.positions = Positions::Learned, c.activation = Activation::GELUTanh, c.tie_embeddings = true;
  c.scale_embedding = false;
  return c;
}

TransformerConfig llama_config(int64_t vocab) {
  TransformerConfig c = decoder_only_config(vocab);
  c.norm = NormPlacement::Pre, c.positions = Positions::Rotary, c.activation = Activation::SwiGLU;
  c.block.normalization = Normalization::RMSNorm, c.block.bias = Bias::None;
  c.scale_embedding = false, c.dropout = 0, c.norm_eps = 1e-5;
  return c;
}

std::vector<std::string> hub_preset_names() {
  return {"smollm2-135m", "llama-3.2-1b", "qwen2.5-0.5b", "tinyllama-1.1b"};
}

TransformerConfig hub_preset_config(const std::string& name) {
  struct Sizes {
    const char* name;
    int64_t vocab, d, layers, heads, kv_heads, d_ff, max_len;
    double theta, eps;
    bool tied;
  };
  static const Sizes presets[] = {{"smollm2-135m", 49152, 576, 30, 9, 3, 1536, 8192, 100000, 1e-5, true},
                                  {"llama-3.2-1b", 128256, 2048, 16, 32, 8, 8192, 131072, 500000, 1e-5, true},
                                  {"qwen2.5-0.5b", 151936, 896, 24, 14, 2, 4864, 32768, 1000000, 1e-6, true},
                                  {"tinyllama-1.1b", 32000, 2048, 22, 32, 4, 5632, 2048, 10000, 1e-5, false}};
  for (const Sizes& p : presets) {
    if (name != p.name) continue;
    TransformerConfig c = llama_config(p.vocab);
    c.d_model = p.d, c.layers = p.layers, c.heads = p.heads, c.d_ff = p.d_ff, c.max_len = p.max_len;
    c.block.kv_heads = p.kv_heads, c.block.rope_theta = p.theta, c.norm_eps = p.eps, c.tie_embeddings = p.tied;
    if (name == "qwen2.5-0.5b") c.block.bias = Bias::QKV;
    if (name == "llama-3.2-1b")
      c.block.rope_scaling = {.factor = 32, .low_freq_factor = 1, .high_freq_factor = 4, .original_max_len = 8192};
    return c;
  }
  std::string names;
  for (const std::string& n : hub_preset_names()) names += (names.empty() ? "" : ", ") + n;
  throw ValueError(message("hub_preset_config: no preset '", name, "' (the presets: ", names, ")"));
}

int64_t decoder_only_parameter_count(const TransformerConfig& c) {
  c.validate();
  if (c.arch != Architecture::DecoderOnly)
    throw ValueError(message("decoder_only_parameter_count: the configuration is ", architecture_name(c.arch)));
  const int64_t d = c.d_model, V = c.tgt_vocab;
  const int64_t embedding = V * d;
  const int64_t positions = c.positions == Positions::Learned ? c.max_len * d : 0;
  const int64_t layers = c.layers * layer_parameter_count(c.layer(), false).total();
  const int64_t final_norm = c.norm == NormPlacement::Pre ? norm_parameter_count(c.layer()) : 0;
  const int64_t output = c.tie_embeddings ? 0 : V * d;
  return embedding + positions + layers + final_norm + output;
}

DecoderOnly::DecoderOnly(const TransformerConfig& config, uint64_t seed, SkipInit)
    : config_(config), dropout_gen_(std::make_shared<Generator>(seed, 1)) {
  config_.validate();
  if (config_.arch != Architecture::DecoderOnly)
    throw ValueError(
        message("DecoderOnly: the configuration is ", architecture_name(config_.arch), ", not decoder-only"));
  const TransformerConfig& c = config_;
  embed = register_module("embed", std::make_shared<Embedding>(c.tgt_vocab, c.d_model, skip_init, c.dtype));
  positional_encoding = register_module(
      "positional_encoding",
      std::make_shared<PositionalEncoding>(c.d_model, c.max_len, c.dropout, dropout_gen_, c.dtype, c.positions));
  decoder =
      register_module("decoder", std::make_shared<DecoderOnlyStack>(c.layer(), c.layers, skip_init, dropout_gen_));
  output_projection =
      register_module("generator", std::make_shared<VocabProjection>(c.d_model, c.tgt_vocab, c.dtype,
                                                                     c.tie_embeddings ? embed->weight : Variable(),
                                                                     /*with_bias=*/false));
}

DecoderOnly::DecoderOnly(const TransformerConfig& config, uint64_t seed) : DecoderOnly(config, seed, skip_init) {
  Generator init(seed, 0);
  reset_parameters(init);
}

void DecoderOnly::reset_parameters(Generator& init_gen) {
  for (const auto& [name, p] : named_parameters())
    if (p.dim() >= 2 && name != "positional_encoding.weight") xavier_uniform_(p, init_gen);
  for (const auto& layer : *decoder->layers) {
    const MultiheadAttention& a = *layer->self_attn;
    if (a.in_proj_bias.defined()) fill_(a.in_proj_bias, 0.0);
    if (a.out_proj->bias.defined()) fill_(a.out_proj->bias, 0.0);
    if (layer->linear1->bias.defined()) {                                               // a block with biases
      linear_default_(layer->linear1->bias, layer->linear1->weight.size(1), init_gen);  // fan_in d
      linear_default_(layer->linear2->bias, layer->linear2->weight.size(1), init_gen);  // fan_in d_ff
      if (layer->linear3) linear_default_(layer->linear3->bias, layer->linear3->weight.size(1), init_gen);
    }
    layer->norm1->reset_parameters(), layer->norm2->reset_parameters();
  }
  if (decoder->norm) decoder->norm->reset_parameters();
  positional_encoding->reset_parameters(init_gen);  // learned: N(0, 0.02)
  reset_lora_adapters(*this, init_gen);             // A drawn, B zero: a fine-tuning's adapters start at nothing
}

void DecoderOnly::check_ids(const Tensor& ids) const {
  if (ids.dtype() != DType::Int64 || ids.dim() != 2)
    throw ShapeError(message("DecoderOnly: ids must be [B, T] int64 token ids, got ", ids.shape(), " ", ids.dtype()));
}

// h_0 = U W_e + W_p   (the paper's sqrt(d_model) on the embedding unless scale_embedding is off, as in GPT-2)
Variable DecoderOnly::embed_tokens(const Tensor& ids, int64_t start) const {
  check_ids(ids);
  return positional_encoding->forward(scaled_embedding(embed->forward(ids), config_), start);  // [B, T, d]
}

// h_l = transformer_block(h_{l-1});  logits = h_n W_e^T (tied) or h_n W_out^T
Variable DecoderOnly::forward(const Tensor& ids, const Tensor& mask) const {
  check_ids(ids);
  const int64_t B = ids.size(0), T = ids.size(1);
  if (!mask.defined() || mask.dtype() != DType::Bool || mask.dim() != 3 || (mask.size(0) != B && mask.size(0) != 1) ||
      mask.size(1) != T || mask.size(2) != T)
    throw ShapeError(message("DecoderOnly: mask must be [", B == 1 ? std::string("1") : message(B, " or 1"), ", ", T,
                             ", ", T, "] bool (causal), got ",
                             mask.defined() ? message(mask.shape(), " ", mask.dtype()) : std::string("none")));
  return output_projection->forward(decoder->forward(embed_tokens(ids), mask));  // [B, T, V]
}

DecoderOnlyCache DecoderOnly::start_cache() const { return {std::vector<KVCache>(decoder->layers->size()), 0}; }

Variable DecoderOnly::forward_step(const Tensor& ids, DecoderOnlyCache& cache) const {
  const Variable h = decoder->forward_step(embed_tokens(ids, cache.length), cache.layers);  // [B, Tn, d]
  cache.length += ids.size(1);
  return output_projection->forward(h);  // [B, Tn, V]
}

}  // namespace gradformer
