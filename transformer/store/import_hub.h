// A Hugging Face hub model of the Llama family (Llama, Qwen2, Mistral; hub_folder.h reads its files)
// as a gradformer decoder-only model: the same computation, in this library's names.
//
// The configuration: llama_config (pre-LN with RMSNorm, rotary positions, SwiGLU, the embedding not
// scaled) with the folder's sizes; num_key_value_heads as kv_heads, head_dim, rms_norm_eps, rope_theta
// and llama3 rope_scaling as they are; tie_word_embeddings; the biases as the config says (Qwen2: q,
// k and v; Llama's attention_bias: the attention's four; with mlp_bias too: all). max_len is
// max_position_embeddings.
//
// The tensors ([out, in] in both, so nothing is transposed):
//   model.embed_tokens.weight                 -> embed.weight
//   model.layers.{i}.self_attn.q_proj.weight  -> decoder.layers.{i}.self_attn.in_proj_weight, rows [0, H hd)
//   model.layers.{i}.self_attn.k_proj.weight  ->   rows [H hd, (H + N) hd)
//   model.layers.{i}.self_attn.v_proj.weight  ->   rows [(H + N) hd, (H + 2N) hd)   (biases likewise)
//   model.layers.{i}.self_attn.o_proj.*       -> decoder.layers.{i}.self_attn.out_proj.*
//   model.layers.{i}.mlp.gate_proj.*          -> decoder.layers.{i}.linear1.*   (silu's input)
//   model.layers.{i}.mlp.up_proj.*            -> decoder.layers.{i}.linear3.*
//   model.layers.{i}.mlp.down_proj.*          -> decoder.layers.{i}.linear2.*
//   model.layers.{i}.input_layernorm.weight   -> decoder.layers.{i}.norm1.weight
//   model.layers.{i}.post_attention_layernorm -> decoder.layers.{i}.norm2.weight
//   model.norm.weight                         -> decoder.norm.weight
//   lm_head.weight                            -> generator.weight   (untied only)
// The hub's Llama stores q_proj and k_proj in the "rotate half" layout its rotary code reads (pair i
// is dimensions i and i + hd/2), which is gradformer's: the rows are taken as they are.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "transformer/model/decoder_only.h"
#include "transformer/store/checkpoint.h"
#include "transformer/store/hub_folder.h"

namespace gradformer {

/// The decoder-only configuration of a Llama-family config.json. CheckpointError naming its file
/// for biases gradformer's settings cannot say (mlp_bias without attention_bias, o_proj's bias
/// without q/k/v's) and for sizes the configuration refuses.
TransformerConfig hub_model_config(const HubConfig& config);

struct HubImport {
  CheckpointInfo info;  // the configuration; the tokenizer given, on the model's one side
  std::unique_ptr<DecoderOnly> model;
  HubTensorCheck check;  // the tensors' dtype as read, lm_head's presence, the buffers left out
};

/// The model in `tensors` (a folder opened by open_hub_tensors) with `config` and `tokenizer`,
/// each tensor read once, into the model's own parameters. CheckpointError as check_hub_tensors for
/// missing, unexpected or mis-shaped tensors, for a tied model whose lm_head.weight is not the
/// embedding, and for a tokenizer with more ids than the model's vocabulary (fewer is fine: the
/// hub pads some embeddings with rows no text becomes).
HubImport import_hub(const HubConfig& config, const HubTensors& tensors, const Tokenizer& tokenizer);

}  // namespace gradformer
