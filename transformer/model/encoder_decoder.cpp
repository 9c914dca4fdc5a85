#include "transformer/model/encoder_decoder.h"

#include <cmath>

#include "autograd/all.h"
#include "nn/functional.h"

namespace gradformer {

// ---- counting ----------------------------------------------------------------------------------------

int64_t parameter_count(const TransformerConfig& c) {
  c.validate();
  const int64_t d = c.d_model;
  const int64_t embeddings = c.tie_embeddings ? c.src_vocab * d : (c.src_vocab + c.tgt_vocab) * d;
  const int64_t output_projection = c.tie_embeddings ? c.tgt_vocab : d * c.tgt_vocab + c.tgt_vocab;
  const int64_t encoder_layer = layer_parameter_count(c.layer(), false).total();
  const int64_t decoder_layer = layer_parameter_count(c.layer(), true).total();
  const int64_t final_norms = c.norm == NormPlacement::Pre ? 2 * norm_parameter_count(c.layer()) : 0;
  const int64_t positions = c.positions == Positions::Learned ? c.max_len * d : 0;
  return embeddings + positions + output_projection + c.layers * (encoder_layer + decoder_layer) + final_norms;
}

FlopCount flop_count(const TransformerConfig& c, int64_t src_len, int64_t tgt_len) {
  c.validate();
  if (src_len <= 0 || tgt_len <= 0)
    throw ValueError(message("flop_count: lengths must be positive, got src_len ", src_len, ", tgt_len ", tgt_len));
  const double d = static_cast<double>(c.d_model), ff = static_cast<double>(c.d_ff), S = static_cast<double>(src_len),
               T = static_cast<double>(tgt_len), N = static_cast<double>(c.layers);
  FlopCount f;
  f.src_len = src_len, f.tgt_len = tgt_len;
  f.encoder = N * S * (8 * d * d + 4 * S * d + 4 * d * ff);
  f.decoder = N * (T * (8 * d * d + 4 * T * d + 4 * d * d + 4 * S * d + 4 * d * ff) + S * 4 * d * d);
  f.output_projection = T * 2 * d * static_cast<double>(c.tgt_vocab);
  return f;
}

// ---- the model ------------------------------------------------------------------------------------

EncoderDecoder::EncoderDecoder(const TransformerConfig& config, uint64_t seed, SkipInit)
    : config_(config), dropout_gen_(std::make_shared<Generator>(seed, 1)) {
  config_.validate();
  if (config_.arch != Architecture::EncoderDecoder)
    throw ValueError(
        message("EncoderDecoder: the configuration is ", architecture_name(config_.arch), ", not encoder-decoder"));
  const TransformerConfig& c = config_;
  src_embed = register_module("src_embed", std::make_shared<Embedding>(c.src_vocab, c.d_model, skip_init, c.dtype));
  tgt_embed =
      c.tie_embeddings
          ? src_embed
          : register_module("tgt_embed", std::make_shared<Embedding>(c.tgt_vocab, c.d_model, skip_init, c.dtype));
  positional_encoding = register_module(
      "positional_encoding",
      std::make_shared<PositionalEncoding>(c.d_model, c.max_len, c.dropout, dropout_gen_, c.dtype, c.positions));
  encoder = register_module("encoder", std::make_shared<Encoder>(c.layer(), c.layers, skip_init, dropout_gen_));
  decoder = register_module("decoder", std::make_shared<Decoder>(c.layer(), c.layers, skip_init, dropout_gen_));
  output_projection = register_module(
      "generator", std::make_shared<VocabProjection>(c.d_model, c.tgt_vocab, c.dtype,
                                                     c.tie_embeddings ? src_embed->weight : Variable()));
}

EncoderDecoder::EncoderDecoder(const TransformerConfig& config, uint64_t seed)
    : EncoderDecoder(config, seed, skip_init) {
  Generator init(seed, 0);
  reset_parameters(init);
}

void EncoderDecoder::reset_parameters(Generator& init_gen) {
  // "Xavier-uniform for every parameter with 2 or more dimensions", as the Annotated Transformer:
  // embeddings, W^Q W^K W^V (stacked, as one matrix), W^O, W_1, W_2 and the output projection.
  for (const auto& [name, p] : named_parameters())
    if (p.dim() >= 2 && name != "positional_encoding.weight") xavier_uniform_(p, init_gen);
  // The vectors keep what each layer's own PyTorch initialisation gives them.
  auto attention_biases = [](const MultiheadAttention& a) {
    if (a.in_proj_bias.defined()) fill_(a.in_proj_bias, 0.0);
    if (a.out_proj->bias.defined()) fill_(a.out_proj->bias, 0.0);
  };
  auto feed_forward_biases = [&](const Linear& linear1, const Linear& linear2) {
    if (!linear1.bias.defined()) return;                              // a block without biases
    linear_default_(linear1.bias, linear1.weight.size(1), init_gen);  // fan_in d
    linear_default_(linear2.bias, linear2.weight.size(1), init_gen);  // fan_in d_ff
  };
  for (const auto& layer : *encoder->layers) {
    attention_biases(*layer->self_attn);
    feed_forward_biases(*layer->linear1, *layer->linear2);
    layer->norm1->reset_parameters(), layer->norm2->reset_parameters();
  }
  for (const auto& layer : *decoder->layers) {
    attention_biases(*layer->self_attn);
    attention_biases(*layer->multihead_attn);
    feed_forward_biases(*layer->linear1, *layer->linear2);
    layer->norm1->reset_parameters(), layer->norm2->reset_parameters(), layer->norm3->reset_parameters();
  }
  if (encoder->norm) encoder->norm->reset_parameters();
  if (decoder->norm) decoder->norm->reset_parameters();
  linear_default_(output_projection->bias, config_.d_model, init_gen);
  positional_encoding->reset_parameters(init_gen);  // learned positions: N(0, 0.02), not Xavier
  reset_lora_adapters(*this, init_gen);             // A drawn, B zero: a fine-tuning's adapters start at nothing
}

// Ids outside [0, vocab) are an IndexError of the embedding lookup.
void EncoderDecoder::check_ids(const char* what, const Tensor& ids) const {
  if (ids.dtype() != DType::Int64 || ids.dim() != 2)
    throw ShapeError(
        message("EncoderDecoder: ", what, " must be [B, T] int64 token ids, got ", ids.shape(), " ", ids.dtype()));
}

Variable EncoderDecoder::embed_source(const Tensor& src) const {
  check_ids("src", src);
  return positional_encoding->forward(scaled_embedding(src_embed->forward(src), config_));
}

Variable EncoderDecoder::embed_target(const Tensor& tgt, int64_t start) const {
  check_ids("tgt", tgt);
  return positional_encoding->forward(scaled_embedding(tgt_embed->forward(tgt), config_), start);
}

static void check_mask(const char* what, const Tensor& mask, int64_t batch, int64_t queries, int64_t keys) {
  if (!mask.defined()) return;
  if (mask.dtype() != DType::Bool)
    throw DTypeError(
        message("EncoderDecoder: ", what, " must be bool (true where attention is allowed), got ", mask.dtype()));
  if (mask.dim() != 3 || (mask.size(0) != batch && mask.size(0) != 1) ||
      (mask.size(1) != queries && mask.size(1) != 1) || mask.size(2) != keys)
    throw ShapeError(message("EncoderDecoder: ", what, " ", mask.shape(), " does not fit [", batch, ", ", queries,
                             " or 1, ", keys, "]"));
}

Variable EncoderDecoder::encode(const Tensor& src, const Tensor& src_mask) const {
  check_ids("src", src);
  check_mask("src_mask", src_mask, src.size(0), 1, src.size(1));
  return encoder->forward(embed_source(src), src_mask);
}

Variable EncoderDecoder::decode(const Variable& memory, const Tensor& src_mask, const Tensor& tgt_in,
                                const Tensor& tgt_mask) const {
  check_ids("tgt_in", tgt_in);
  if (memory.dim() != 3 || memory.size(0) != tgt_in.size(0) || memory.size(2) != config_.d_model)
    throw ShapeError(message("EncoderDecoder: memory ", memory.shape(), " does not fit tgt_in ", tgt_in.shape(),
                             " and d_model ", config_.d_model));
  check_mask("src_mask", src_mask, memory.size(0), 1, memory.size(1));
  check_mask("tgt_mask", tgt_mask, tgt_in.size(0), tgt_in.size(1), tgt_in.size(1));
  return decoder->forward(embed_target(tgt_in), memory, src_mask, tgt_mask);
}

Variable EncoderDecoder::logits(const Variable& decoded) const { return output_projection->forward(decoded); }

Variable EncoderDecoder::log_probs(const Variable& decoded) const { return log_softmax(logits(decoded), -1); }

Variable EncoderDecoder::forward(const Tensor& src, const Tensor& tgt_in, const Tensor& src_mask,
                                 const Tensor& tgt_mask) const {
  return logits(decode(encode(src, src_mask), src_mask, tgt_in, tgt_mask));
}

DecoderCache EncoderDecoder::start_decoding(const Variable& memory) const {
  if (memory.dim() != 3 || memory.size(2) != config_.d_model)
    throw ShapeError(message("EncoderDecoder: memory must be [B, S, ", config_.d_model, "], got ", memory.shape()));
  return decoder->start_cache(memory);
}

Variable EncoderDecoder::decode_step(const Tensor& tgt, const Tensor& src_mask, DecoderCache& cache) const {
  check_ids("tgt", tgt);
  return decoder->forward_step(embed_target(tgt, cache.length), src_mask, cache);
}

}  // namespace gradformer
