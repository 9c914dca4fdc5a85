#include "transformer/model/encoder_only.h"

#include <cmath>

#include "autograd/all.h"
#include "nn/functional.h"
#include "transformer/model/config.h"
#include "transformer/model/masks.h"

namespace gradformer {

// ---- configuration ------------------------------------------------------------------------------------

EncoderOnlyConfig EncoderOnlyConfig::bert_base() {
  EncoderOnlyConfig c;
  c.vocab = 30522, c.d_model = 768, c.d_ff = 3072, c.heads = 12, c.layers = 12, c.dropout = 0.1;
  c.max_len = 512, c.positions = Positions::Learned, c.activation = Activation::GELU, c.types = 2, c.embed_norm = true,
  c.tie_embeddings = true;
  return c;
}

void EncoderOnlyConfig::validate() const {
  auto positive = [](const char* name, int64_t v) {
    if (v <= 0) throw ValueError(message("EncoderOnlyConfig: ", name, " must be positive, got ", v));
  };
  positive("vocab", vocab), positive("d_model", d_model), positive("d_ff", d_ff), positive("heads", heads);
  positive("layers", layers), positive("max_len", max_len), positive("classes", classes);
  if (types < 0) throw ValueError(message("EncoderOnlyConfig: types must be at least 0, got ", types));
  // The encoder-decoder's bounds (TransformerConfig::validate says why): a typo or a hostile
  // checkpoint fails here, by name, rather than in an allocation of terabytes, and the products
  // below stay far from overflowing int64.
  using Bounds = TransformerConfig;
  auto at_most = [](const char* name, int64_t v, int64_t bound) {
    if (v > bound) throw ValueError(message("EncoderOnlyConfig: ", name, " must be at most ", bound, ", got ", v));
  };
  at_most("vocab", vocab, Bounds::max_vocab), at_most("d_model", d_model, Bounds::max_d_model);
  at_most("d_ff", d_ff, Bounds::max_d_ff), at_most("heads", heads, Bounds::max_heads);
  at_most("layers", layers, Bounds::max_layers), at_most("max_len", max_len, Bounds::max_max_len);
  at_most("types", types, Bounds::max_vocab), at_most("classes", classes, Bounds::max_vocab);
  // parameter_count's formula (it calls validate(), so it cannot be called here), with the
  // positional table, learned or computed.
  validate_block("EncoderOnlyConfig", layer());
  const int64_t d = d_model, norms = 2 * d;
  const int64_t parameters = vocab * d + types * d + (embed_norm ? norms : 0) +
                             layers * layer_parameter_count(layer(), false).total() +
                             (norm == NormPlacement::Pre ? norm_parameter_count(layer()) : 0) + 2 * (d * d + d) +
                             norms + vocab + (tie_embeddings ? 0 : vocab * d) + classes * d + classes;
  if (parameters + max_len * d > Bounds::max_numbers)
    throw ValueError(message("EncoderOnlyConfig: the model would hold ", parameters, " parameters and a ", max_len,
                             " x ", d, " positional table, more than the ", Bounds::max_numbers,
                             " numbers allowed (d_model ", d, ", d_ff ", d_ff, ", layers ", layers, ", vocabulary ",
                             vocab, ", max_len ", max_len, ")"));
  if (positions == Positions::Sinusoidal && d_model % 2 != 0)
    throw ValueError(message("EncoderOnlyConfig: d_model must be even for sinusoidal positions, got ", d_model));
  if (!(dropout >= 0 && dropout < 1))
    throw ValueError(message("EncoderOnlyConfig: dropout must be in [0, 1), got ", dropout));
  if (dtype != DType::Float32 && dtype != DType::Float64)
    throw DTypeError(message("EncoderOnlyConfig: dtype must be float32 or float64, got ", dtype));
}

EncoderOnlyCount parameter_count(const EncoderOnlyConfig& c) {
  c.validate();
  const int64_t d = c.d_model, norm = 2 * d;  // LayerNorm's (the embedding's and the MLM head's)
  EncoderOnlyCount n;
  n.embeddings =
      c.vocab * d + (c.positions == Positions::Learned ? c.max_len * d : 0) + c.types * d + (c.embed_norm ? norm : 0);
  n.encoder = c.layers * layer_parameter_count(c.layer(), false).total() +
              (c.norm == NormPlacement::Pre ? norm_parameter_count(c.layer()) : 0);
  n.pooler = d * d + d;
  n.mlm_head = d * d + d + norm + c.vocab + (c.tie_embeddings ? 0 : c.vocab * d);
  n.classifier = c.classes * d + c.classes;
  return n;
}

// ---- the heads ----------------------------------------------------------------------------------------

MlmHead::MlmHead(int64_t d_model, int64_t vocab, DType dtype, Variable tied_weight) {
  dense = register_module("dense", std::make_shared<Linear>(d_model, d_model, skip_init, true, dtype));
  norm = register_module("norm", std::make_shared<LayerNorm>(d_model, 1e-5, dtype));
  if (tied_weight.defined()) {
    if (tied_weight.shape() != Shape{vocab, d_model})
      throw ShapeError(
          message("MlmHead: a tied weight must be [", vocab, ", ", d_model, "], got ", tied_weight.shape()));
    weight = tied_weight;
  } else {
    weight = register_parameter("weight", zeros({vocab, d_model}, dtype));
  }
  bias = register_parameter("bias", zeros({vocab}, dtype));
}

// [..., d] -> [..., d] -> [..., V]
Variable MlmHead::forward(const Variable& h) const {
  return linear(norm->forward(gelu(dense->forward(h))), weight, bias);
}

// ---- the model ----------------------------------------------------------------------------------------

EncoderOnly::EncoderOnly(const EncoderOnlyConfig& config, uint64_t seed, SkipInit)
    : config_(config), dropout_gen_(std::make_shared<Generator>(seed, 1)) {
  config_.validate();
  const EncoderOnlyConfig& c = config_;
  tok_embed = register_module("tok_embed", std::make_shared<Embedding>(c.vocab, c.d_model, skip_init, c.dtype));
  // Its own dropout off: embed_dropout below does it once, after the types and the norm.
  pos_embed = register_module(
      "pos_embed", std::make_shared<PositionalEncoding>(c.d_model, c.max_len, 0.0, dropout_gen_, c.dtype, c.positions));
  if (c.types > 0)
    type_embed = register_module("type_embed", std::make_shared<Embedding>(c.types, c.d_model, skip_init, c.dtype));
  if (c.embed_norm) embed_norm = register_module("embed_norm", std::make_shared<LayerNorm>(c.d_model, 1e-5, c.dtype));
  embed_dropout = register_module("embed_dropout", std::make_shared<Dropout>(c.dropout, dropout_gen_));
  encoder = register_module("encoder", std::make_shared<Encoder>(c.layer(), c.layers, skip_init, dropout_gen_));
  mlm_head = register_module("mlm_head", std::make_shared<MlmHead>(c.d_model, c.vocab, c.dtype,
                                                                   c.tie_embeddings ? tok_embed->weight : Variable()));
  pooler = register_module("pooler", std::make_shared<Linear>(c.d_model, c.d_model, skip_init, true, c.dtype));
  class_dropout = register_module("class_dropout", std::make_shared<Dropout>(c.dropout, dropout_gen_));
  classifier = register_module("classifier", std::make_shared<Linear>(c.d_model, c.classes, skip_init, true, c.dtype));
}

EncoderOnly::EncoderOnly(const EncoderOnlyConfig& config, uint64_t seed) : EncoderOnly(config, seed, skip_init) {
  Generator init(seed, 0);
  reset_parameters(init);
}

void EncoderOnly::reset_parameters(Generator& init_gen) {
  // One pass in name order: every matrix Xavier-uniform, every vector 0, then the LayerNorm gains 1.
  for (const auto& [name, p] : named_parameters()) {
    if (name == "pos_embed.weight")
      pos_embed->reset_parameters(init_gen);  // N(0, 0.02), as BERT's
    else if (p.dim() >= 2)
      xavier_uniform_(p, init_gen);
    else
      fill_(p, 0.0);
  }
  for (const auto& layer : *encoder->layers) layer->norm1->reset_parameters(), layer->norm2->reset_parameters();
  if (encoder->norm) encoder->norm->reset_parameters();
  if (embed_norm) embed_norm->reset_parameters();
  mlm_head->norm->reset_parameters();
  reset_lora_adapters(*this, init_gen);  // A drawn, B zero: a fine-tuning's adapters start at nothing
}

Variable EncoderOnly::embed(const Tensor& ids, const Tensor& types) const {
  if (ids.dtype() != DType::Int64 || ids.dim() != 2)
    throw ShapeError(message("EncoderOnly: ids must be [B, S] int64 token ids, got ", ids.shape(), " ", ids.dtype()));
  const int64_t S = ids.size(1);
  if (S > config_.max_len)
    throw ShapeError(message("EncoderOnly: a sequence of ", S, " tokens is longer than max_len ", config_.max_len));
  // [B, S, d]: the token vectors, scaled as in the encoder-decoder ("we multiply those weights by sqrt(d_model)")
  Variable x = tok_embed->forward(ids) * std::sqrt(static_cast<double>(config_.d_model));
  // "We use learned positional embeddings with supported sequence lengths up to 512 tokens." (BERT, 2018, section 3.2)
  x = pos_embed->forward(x);  // + the learned table's or the sinusoids' rows 0 .. S-1
  if (type_embed) {
    const Tensor t = types.defined() ? types : zeros(ids.shape(), DType::Int64);
    if (t.shape() != ids.shape())
      throw ShapeError(message("EncoderOnly: types ", t.shape(), " do not match ids ", ids.shape()));
    x = x + type_embed->forward(t);
  }
  if (embed_norm) x = embed_norm->forward(x);
  return embed_dropout->forward(x);
}

Variable EncoderOnly::encode(const Tensor& ids, const Tensor& types) const {
  // Bidirectional: the padding mask [B, 1, S] only; every real position sees every other.
  const Variable x = embed(ids, types);  // first: it checks the ids
  return encoder->forward(x, padding_mask(ids, /*pad=*/0));
}

Variable EncoderOnly::class_logits(const Variable& h) const {
  if (h.dim() != 3 || h.size(2) != config_.d_model)
    throw ShapeError(message("EncoderOnly: class_logits needs h [B, S, ", config_.d_model, "], got ", h.shape()));
  const Variable first = select(h, 1, 0);  // [B, d]: the <s> ([CLS]) position
  // BERT's pooler (its released code; the paper counts it but does not describe it): dense, then tanh
  return classifier->forward(class_dropout->forward(tanh(pooler->forward(first))));  // [B, C]
}

}  // namespace gradformer
