#include "transformer/model/decoder.h"

#include "autograd/all.h"
#include "transformer/model/feed_forward.h"
#include "transformer/model/layer_parts.h"

namespace gradformer {

DecoderLayer::DecoderLayer(const LayerConfig& c, SkipInit, std::shared_ptr<Generator> dropout_gen,
                           std::shared_ptr<const RotaryTables> rotary)
    : norm_placement(c.norm), activation(c.activation) {
  self_attn = register_module("self_attn", make_attention(c, dropout_gen));
  if (c.rotary) self_attn->use_rotary(layer_rotary(c, std::move(rotary)));  // cross-attention: no positions
  multihead_attn = register_module("multihead_attn", make_attention(c, dropout_gen));
  linear1 = register_module("linear1", make_feed_forward_linear(c, c.d_model, c.d_ff));
  linear2 = register_module("linear2", make_feed_forward_linear(c, c.d_ff, c.d_model));
  if (c.activation == Activation::SwiGLU)
    linear3 = register_module("linear3", make_feed_forward_linear(c, c.d_model, c.d_ff));
  norm1 = register_module("norm1", make_norm(c));
  norm2 = register_module("norm2", make_norm(c));
  norm3 = register_module("norm3", make_norm(c));
  dropout = register_module("dropout", std::make_shared<Dropout>(c.dropout, dropout_gen));
  dropout1 = register_module("dropout1", std::make_shared<Dropout>(c.dropout, dropout_gen));
  dropout2 = register_module("dropout2", std::make_shared<Dropout>(c.dropout, dropout_gen));
  dropout3 = register_module("dropout3", std::make_shared<Dropout>(c.dropout, dropout_gen));
}

DecoderLayer::DecoderLayer(const LayerConfig& c, Generator& init_gen, std::shared_ptr<Generator> dropout_gen)
    : DecoderLayer(c, skip_init, std::move(dropout_gen)) {
  reset_parameters(init_gen);
}

void DecoderLayer::reset_parameters(Generator& init_gen) {
  self_attn->reset_parameters(init_gen);
  multihead_attn->reset_parameters(init_gen);
  linear1->reset_parameters(init_gen);
  linear2->reset_parameters(init_gen);
  if (linear3) linear3->reset_parameters(init_gen);
  norm1->reset_parameters();
  norm2->reset_parameters();
  norm3->reset_parameters();
}

// The three sub-layers with their residual connections and norms; `self` and `cross` compute the
// two attentions (the full sequence in forward, the new positions against a cache in forward_step).
template <class SelfAttention, class CrossAttention>
Variable DecoderLayer::layer(const Variable& x, SelfAttention self, CrossAttention cross) const {
  auto self_block = [&](const Variable& h) {
    Attention a = self(h);
    if (keep_attention) self_attention = a.weights;
    return dropout1->forward(a.output);
  };
  auto cross_block = [&](const Variable& h) {
    Attention a = cross(h);
    if (keep_attention) cross_attention = a.weights;
    return dropout2->forward(a.output);
  };
  auto ffn = [&](const Variable& h) {
    return dropout3->forward(feed_forward(h, *linear1, *linear2, *dropout, activation, linear3.get()));
  };
  if (norm_placement == NormPlacement::Post) {
    // LayerNorm(x + Sublayer(x)), three times
    const Variable h1 = norm1->forward(x + self_block(x));
    const Variable h2 = norm2->forward(h1 + cross_block(h1));
    return norm3->forward(h2 + ffn(h2));
  }
  // x + Sublayer(LayerNorm(x)), three times
  const Variable h1 = x + self_block(norm1->forward(x));
  const Variable h2 = h1 + cross_block(norm2->forward(h1));
  return h2 + ffn(norm3->forward(h2));
}

Variable DecoderLayer::forward(const Variable& x, const Variable& memory, const Tensor& src_mask,
                               const Tensor& tgt_mask) const {
  return layer(
      x, [&](const Variable& h) { return self_attn->forward(h, h, h, tgt_mask); },
      [&](const Variable& h) { return multihead_attn->forward(h, memory, memory, src_mask); });
}

Variable DecoderLayer::forward_step(const Variable& x, const Tensor& src_mask, LayerCache& cache) const {
  if (cache.memory.empty())
    throw ValueError("DecoderLayer: forward_step needs the memory's keys and values in the cache");
  return layer(
      x, [&](const Variable& h) { return self_attn->forward_step(h, cache.self); },
      [&](const Variable& h) {
        return multihead_attn->attend(multihead_attn->project_query(h), cache.memory, src_mask);
      });
}

Decoder::Decoder(const LayerConfig& c, int64_t num_layers, SkipInit, std::shared_ptr<Generator> dropout_gen) {
  if (num_layers <= 0) throw ValueError(message("Decoder: the number of layers must be positive, got ", num_layers));
  layers = register_module("layers", std::make_shared<ModuleList<DecoderLayer>>());
  const auto rotary = layer_rotary(c, nullptr);  // one table for every layer
  for (int64_t i = 0; i < num_layers; ++i)
    layers->push_back(std::make_shared<DecoderLayer>(c, skip_init, dropout_gen, rotary));
  if (c.norm == NormPlacement::Pre) norm = register_module("norm", make_norm(c));
}

Decoder::Decoder(const LayerConfig& c, int64_t num_layers, Generator& init_gen, std::shared_ptr<Generator> dropout_gen)
    : Decoder(c, num_layers, skip_init, std::move(dropout_gen)) {
  reset_parameters(init_gen);
}

void Decoder::reset_parameters(Generator& init_gen) {
  for (const auto& layer : *layers) layer->reset_parameters(init_gen);
  if (norm) norm->reset_parameters();
}

Variable Decoder::forward(const Variable& x, const Variable& memory, const Tensor& src_mask,
                          const Tensor& tgt_mask) const {
  Variable h = x;
  for (const auto& layer : *layers) h = layer->forward(h, memory, src_mask, tgt_mask);
  return norm ? norm->forward(h) : h;
}

DecoderCache Decoder::start_cache(const Variable& memory) const {
  DecoderCache cache;
  for (const auto& layer : *layers)
    cache.layers.push_back({KVCache{}, layer->multihead_attn->project_key_value(memory)});
  return cache;
}

Variable Decoder::forward_step(const Variable& x, const Tensor& src_mask, DecoderCache& cache) const {
  if (cache.layers.size() != layers->size())
    throw ValueError(message("Decoder: the cache has ", cache.layers.size(), " layers, the decoder ", layers->size(),
                             " (make it with start_cache)"));
  Variable h = x;
  for (size_t i = 0; i < layers->size(); ++i) h = (*layers)[i].forward_step(h, src_mask, cache.layers[i]);
  cache.length += x.size(1);
  return norm ? norm->forward(h) : h;
}

}  // namespace gradformer
