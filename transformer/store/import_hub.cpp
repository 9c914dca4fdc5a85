#include "transformer/store/import_hub.h"

#include "tensor/all.h"

namespace gradformer {
namespace {

// The biases a Llama-family model has, as one of gradformer's Bias settings.
Bias hub_bias(const HubConfig& c) {
  if (!c.qkv_bias && !c.o_bias && !c.mlp_bias) return Bias::None;
  if (c.qkv_bias && !c.o_bias && !c.mlp_bias) return Bias::QKV;
  if (c.qkv_bias && c.o_bias && !c.mlp_bias) return Bias::Attention;
  if (c.qkv_bias && c.o_bias && c.mlp_bias) return Bias::All;
  throw CheckpointError(message(c.source, ": biases on ", c.mlp_bias ? "the feed-forward network (mlp_bias true)" : "",
                                c.mlp_bias && c.o_bias ? " and " : "", c.o_bias ? "o_proj" : "",
                                " without those on q, k and v are not a setting gradformer has (its biases: all, "
                                "none, the attention's four, or q, k and v)"));
}

// Reads `name` into `destination` (a parameter, or rows of one).
void read(const HubTensors& tensors, const std::string& name, const Tensor& destination) {
  tensors.read_into(name, destination);
}

// One layer's tensors, into layer i of the model.
void read_layer(const HubTensors& tensors, const TransformerConfig& c, int64_t i, const DecoderOnlyBlock& layer) {
  const std::string h = message("model.layers.", i, ".");
  const int64_t q = c.heads * c.layer().head_dim(), kv = c.layer().kv_heads() * c.layer().head_dim();
  const MultiheadAttention& a = *layer.self_attn;
  const Tensor w = a.in_proj_weight.value();
  read(tensors, h + "self_attn.q_proj.weight", w.narrow(0, 0, q));
  read(tensors, h + "self_attn.k_proj.weight", w.narrow(0, q, kv));
  read(tensors, h + "self_attn.v_proj.weight", w.narrow(0, q + kv, kv));
  if (a.in_proj_bias.defined()) {
    const Tensor b = a.in_proj_bias.value();
    read(tensors, h + "self_attn.q_proj.bias", b.narrow(0, 0, q));
    read(tensors, h + "self_attn.k_proj.bias", b.narrow(0, q, kv));
    read(tensors, h + "self_attn.v_proj.bias", b.narrow(0, q + kv, kv));
  }
  read(tensors, h + "self_attn.o_proj.weight", a.out_proj->weight.value());
  if (a.out_proj->bias.defined()) read(tensors, h + "self_attn.o_proj.bias", a.out_proj->bias.value());
  const std::pair<const char*, const Linear*> mlp[] = {
      {"gate_proj", layer.linear1.get()}, {"up_proj", layer.linear3.get()}, {"down_proj", layer.linear2.get()}};
  for (const auto& [name, linear] : mlp) {
    read(tensors, h + "mlp." + name + ".weight", linear->weight.value());
    if (linear->bias.defined()) read(tensors, h + "mlp." + name + ".bias", linear->bias.value());
  }
  read(tensors, h + "input_layernorm.weight", layer.norm1->weight.value());
  read(tensors, h + "post_attention_layernorm.weight", layer.norm2->weight.value());
}

}  // namespace

TransformerConfig hub_model_config(const HubConfig& h) {
  if (h.model_type == HubModelType::Gpt2)
    throw CheckpointError(message(h.source, ": model_type gpt2 is GPT-2's: import it with --gpt2"));
  TransformerConfig c = llama_config(h.vocab_size);
  c.d_model = h.hidden_size, c.d_ff = h.intermediate_size, c.layers = h.num_hidden_layers;
  c.heads = h.num_attention_heads, c.max_len = h.max_position_embeddings, c.norm_eps = h.rms_norm_eps;
  c.tie_embeddings = h.tie_word_embeddings;
  BlockOptions& b = c.block;
  b.kv_heads = h.num_key_value_heads == h.num_attention_heads ? 0 : h.num_key_value_heads;  // 0: as many as heads
  b.head_dim = h.head_dim * h.num_attention_heads == h.hidden_size ? 0 : h.head_dim;        // 0: d / heads
  b.bias = hub_bias(h), b.rope_theta = h.rope_theta;
  if (h.rope_scaling)
    b.rope_scaling = {.factor = h.rope_scaling->factor,
                      .low_freq_factor = h.rope_scaling->low_freq_factor,
                      .high_freq_factor = h.rope_scaling->high_freq_factor,
                      .original_max_len = h.rope_scaling->original_max_position_embeddings};
  try {
    c.validate();
  } catch (const Error& e) {
    throw CheckpointError(message(h.source, ": gradformer cannot build this model: ", e.what()));
  }
  return c;
}

HubImport import_hub(const HubConfig& config, const HubTensors& tensors, const Tokenizer& tokenizer) {
  HubImport out;
  out.check = check_hub_tensors(config, tensors);
  TransformerConfig c = hub_model_config(config);
  c.dtype = out.check.dtype;  // float32 (float16 and bfloat16 widened), or float64
  // A hub model's embedding may have rows past its tokenizer's ids (Qwen2 pads 151,665 tokens to
  // 151,936 rows): rows no text becomes, which generate never draws. More ids than rows cannot be.
  if (tokenizer.size() > c.tgt_vocab)
    throw CheckpointError(message(tensors.folder(), ": the tokenizer has ", tokenizer.size(),
                                  " ids, more than the model's vocabulary of ", c.tgt_vocab, " (vocab_size in ",
                                  config.source, ")"));
  out.model = std::make_unique<DecoderOnly>(c, /*seed=*/0, skip_init);
  DecoderOnly& m = *out.model;
  read(tensors, "model.embed_tokens.weight", m.embed->weight.value());
  for (int64_t i = 0; i < c.layers; ++i) read_layer(tensors, c, i, (*m.decoder->layers)[static_cast<size_t>(i)]);
  read(tensors, "model.norm.weight", m.decoder->norm->weight.value());
  if (!c.tie_embeddings)
    read(tensors, "lm_head.weight", m.output_projection->weight.value());
  else if (out.check.lm_head_in_folder)
    require_lm_head_is_embedding(tensors, m.embed->weight.value());
  out.info.config = c;
  out.info.target_tokenizer = tokenizer;
  for (int64_t id : config.eos_token_ids)
    if (id >= 0 && id < c.tgt_vocab) out.info.end_of_text.push_back(id);  // parse_hub_config checked the range
  return out;
}

}  // namespace gradformer
