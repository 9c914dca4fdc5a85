#include "transformer/model/parameter_specs.h"

#include <string>

namespace gradformer {
namespace {

// Appends the parameters of one part of a model, each name under a dotted prefix ("encoder.").
class SpecList {
 public:
  explicit SpecList(DType dtype) : dtype_(dtype) {}

  void add(const std::string& name, Shape shape) { specs_.push_back({name, std::move(shape), dtype_}); }
  // nn::Linear: weight [out, in], bias [out]
  void linear(const std::string& prefix, int64_t in, int64_t out, bool with_bias = true, int64_t lora_rank = 0) {
    add(prefix + "weight", {out, in});
    if (with_bias) add(prefix + "bias", {out});
    if (lora_rank > 0) lora(prefix + "lora.", in, out, lora_rank);
  }
  // nn::LoraAdapter: A [r, in], B [out, r]
  void lora(const std::string& prefix, int64_t in, int64_t out, int64_t rank) {
    add(prefix + "A", {rank, in}), add(prefix + "B", {out, rank});
  }
  // nn::LayerNorm: gain and bias [d]; nn::RMSNorm: gain [d]
  void norm(const std::string& prefix, const LayerConfig& c) {
    add(prefix + "weight", {c.d_model});
    if (c.block.normalization == Normalization::LayerNorm) add(prefix + "bias", {c.d_model});
  }
  void layer_norm(const std::string& prefix, int64_t d) { add(prefix + "weight", {d}), add(prefix + "bias", {d}); }
  // MultiheadAttention: W^Q [H d_k, d], W^K and W^V [N d_k, d] stacked, their bias, then W^O [d, H d_k]
  // (and its adapter), then the adapters of W^Q, W^K and W^V
  void attention(const std::string& prefix, const LayerConfig& c) {
    const int64_t q = c.heads * c.head_dim(), kv = c.kv_heads() * c.head_dim(), d = c.d_model;
    const LoraOptions& l = c.block.lora;
    add(prefix + "in_proj_weight", {q + 2 * kv, d});
    if (c.block.bias != Bias::None) add(prefix + "in_proj_bias", {q + 2 * kv});
    linear(prefix + "out_proj.", q, d, c.block.bias == Bias::All || c.block.bias == Bias::Attention, l.o ? l.rank : 0);
    if (l.rank == 0) return;
    if (l.q) lora(prefix + "lora_q.", d, q, l.rank);
    if (l.k) lora(prefix + "lora_k.", d, kv, l.rank);
    if (l.v) lora(prefix + "lora_v.", d, kv, l.rank);
  }
  // Encoder (decoder layers: with_cross_attention): N layers, then pre-LN's final norm.
  void stack(const std::string& prefix, const LayerConfig& c, int64_t layers, bool with_cross_attention) {
    const bool ffn_bias = c.block.bias == Bias::All;
    const int64_t ffn_lora = c.block.lora.ffn ? c.block.lora.rank : 0;
    for (int64_t i = 0; i < layers; ++i) {
      const std::string layer = prefix + "layers." + std::to_string(i) + ".";
      attention(layer + "self_attn.", c);
      if (with_cross_attention) attention(layer + "multihead_attn.", c);
      linear(layer + "linear1.", c.d_model, c.d_ff, ffn_bias, ffn_lora);
      linear(layer + "linear2.", c.d_ff, c.d_model, ffn_bias, ffn_lora);
      if (c.activation == Activation::SwiGLU) linear(layer + "linear3.", c.d_model, c.d_ff, ffn_bias, ffn_lora);
      norm(layer + "norm1.", c);
      norm(layer + "norm2.", c);
      if (with_cross_attention) norm(layer + "norm3.", c);
    }
    if (c.norm == NormPlacement::Pre) norm(prefix + "norm.", c);
  }
  // PositionalEncoding: a parameter only when learned (sinusoids are computed)
  void positions(const std::string& prefix, Positions positions, int64_t max_len, int64_t d) {
    if (positions == Positions::Learned) add(prefix + "weight", {max_len, d});
  }
  std::vector<ParameterSpec> take() { return std::move(specs_); }

 private:
  DType dtype_;
  std::vector<ParameterSpec> specs_;
};

}  // namespace

std::vector<ParameterSpec> parameter_specs(const TransformerConfig& c) {
  c.validate();
  const int64_t d = c.d_model;
  SpecList s(c.dtype);
  if (c.arch == Architecture::EncoderDecoder) {
    s.add("src_embed.weight", {c.src_vocab, d});
    if (!c.tie_embeddings) s.add("tgt_embed.weight", {c.tgt_vocab, d});
    s.positions("positional_encoding.", c.positions, c.max_len, d);
    s.stack("encoder.", c.layer(), c.layers, /*with_cross_attention=*/false);
    s.stack("decoder.", c.layer(), c.layers, /*with_cross_attention=*/true);
    if (!c.tie_embeddings) s.add("generator.weight", {c.tgt_vocab, d});
    s.add("generator.bias", {c.tgt_vocab});
  } else if (c.arch == Architecture::DecoderOnly) {
    s.add("embed.weight", {c.tgt_vocab, d});
    s.positions("positional_encoding.", c.positions, c.max_len, d);
    s.stack("decoder.", c.layer(), c.layers, /*with_cross_attention=*/false);
    if (!c.tie_embeddings) s.add("generator.weight", {c.tgt_vocab, d});  // no bias, as GPT-2
  } else {
    throw ValueError("parameter_specs: an encoder-only model has its own configuration (EncoderOnlyConfig)");
  }
  return s.take();
}

std::vector<ParameterSpec> parameter_specs(const EncoderOnlyConfig& c) {
  c.validate();
  const int64_t d = c.d_model;
  SpecList s(c.dtype);
  s.add("tok_embed.weight", {c.vocab, d});
  s.positions("pos_embed.", c.positions, c.max_len, d);
  if (c.types > 0) s.add("type_embed.weight", {c.types, d});
  if (c.embed_norm) s.layer_norm("embed_norm.", d);
  s.stack("encoder.", c.layer(), c.layers, /*with_cross_attention=*/false);
  // MlmHead: its own weight (untied only) and bias first, then dense and norm
  if (!c.tie_embeddings) s.add("mlm_head.weight", {c.vocab, d});
  s.add("mlm_head.bias", {c.vocab});
  s.linear("mlm_head.dense.", d, d);
  s.layer_norm("mlm_head.norm.", d);
  s.linear("pooler.", d, d);
  s.linear("classifier.", d, c.classes);
  return s.take();
}

}  // namespace gradformer
