#include "transformer/model/encoder.h"

#include "autograd/all.h"
#include "transformer/model/feed_forward.h"
#include "transformer/model/layer_parts.h"

namespace gradformer {

EncoderLayer::EncoderLayer(const LayerConfig& c, SkipInit, std::shared_ptr<Generator> dropout_gen,
                           std::shared_ptr<const RotaryTables> rotary)
    : norm_placement(c.norm), activation(c.activation) {
  self_attn = register_module("self_attn", make_attention(c, dropout_gen));
  if (c.rotary) self_attn->use_rotary(layer_rotary(c, std::move(rotary)));
  linear1 = register_module("linear1", make_feed_forward_linear(c, c.d_model, c.d_ff));
  linear2 = register_module("linear2", make_feed_forward_linear(c, c.d_ff, c.d_model));
  if (c.activation == Activation::SwiGLU)
    linear3 = register_module("linear3", make_feed_forward_linear(c, c.d_model, c.d_ff));
  norm1 = register_module("norm1", make_norm(c));
  norm2 = register_module("norm2", make_norm(c));
  dropout = register_module("dropout", std::make_shared<Dropout>(c.dropout, dropout_gen));
  dropout1 = register_module("dropout1", std::make_shared<Dropout>(c.dropout, dropout_gen));
  dropout2 = register_module("dropout2", std::make_shared<Dropout>(c.dropout, dropout_gen));
}

EncoderLayer::EncoderLayer(const LayerConfig& c, Generator& init_gen, std::shared_ptr<Generator> dropout_gen)
    : EncoderLayer(c, skip_init, std::move(dropout_gen)) {
  reset_parameters(init_gen);
}

void EncoderLayer::reset_parameters(Generator& init_gen) {
  self_attn->reset_parameters(init_gen);
  linear1->reset_parameters(init_gen);
  linear2->reset_parameters(init_gen);
  if (linear3) linear3->reset_parameters(init_gen);
  norm1->reset_parameters();
  norm2->reset_parameters();
}

template <class SelfAttention>
Variable EncoderLayer::layer(const Variable& x, SelfAttention self) const {
  auto self_attention = [&](const Variable& h) {
    Attention a = self(h);
    if (keep_attention) attention = a.weights;
    return dropout1->forward(a.output);
  };
  auto ffn = [&](const Variable& h) {
    return dropout2->forward(feed_forward(h, *linear1, *linear2, *dropout, activation, linear3.get()));
  };
  if (norm_placement == NormPlacement::Post) {
    // LayerNorm(x + Sublayer(x))
    const Variable h = norm1->forward(x + self_attention(x));
    return norm2->forward(h + ffn(h));
  }
  // x + Sublayer(LayerNorm(x))
  const Variable h = x + self_attention(norm1->forward(x));
  return h + ffn(norm2->forward(h));
}

Variable EncoderLayer::forward(const Variable& x, const Tensor& src_mask) const {
  return layer(x, [&](const Variable& h) { return self_attn->forward(h, h, h, src_mask); });
}

Variable EncoderLayer::forward_step(const Variable& x, KVCache& cache) const {
  return layer(x, [&](const Variable& h) { return self_attn->forward_step(h, cache); });
}

Encoder::Encoder(const LayerConfig& c, int64_t num_layers, SkipInit, std::shared_ptr<Generator> dropout_gen) {
  if (num_layers <= 0) throw ValueError(message("Encoder: the number of layers must be positive, got ", num_layers));
  layers = register_module("layers", std::make_shared<ModuleList<EncoderLayer>>());
  const auto rotary = layer_rotary(c, nullptr);  // one table for every layer
  for (int64_t i = 0; i < num_layers; ++i)
    layers->push_back(std::make_shared<EncoderLayer>(c, skip_init, dropout_gen, rotary));
  if (c.norm == NormPlacement::Pre) norm = register_module("norm", make_norm(c));
}

Encoder::Encoder(const LayerConfig& c, int64_t num_layers, Generator& init_gen, std::shared_ptr<Generator> dropout_gen)
    : Encoder(c, num_layers, skip_init, std::move(dropout_gen)) {
  reset_parameters(init_gen);
}

void Encoder::reset_parameters(Generator& init_gen) {
  for (const auto& layer : *layers) layer->reset_parameters(init_gen);
  if (norm) norm->reset_parameters();
}

Variable Encoder::forward(const Variable& x, const Tensor& src_mask) const {
  Variable h = x;
  for (const auto& layer : *layers) h = layer->forward(h, src_mask);
  return norm ? norm->forward(h) : h;
}

Variable Encoder::forward_step(const Variable& x, std::vector<KVCache>& caches) const {
  if (caches.size() != layers->size())
    throw ValueError(message("Encoder::forward_step: ", caches.size(), " caches for ", layers->size(), " layers"));
  Variable h = x;
  for (size_t i = 0; i < caches.size(); ++i) h = (*layers)[i].forward_step(h, caches[i]);
  return norm ? norm->forward(h) : h;
}

}  // namespace gradformer
