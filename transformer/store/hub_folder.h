// A Hugging Face hub model folder of the Llama family (Llama, Qwen2, Mistral), read as files: what
// its config.json says and where each of its tensors is. The importer builds the model from these;
// nothing here builds a model or holds a weight.
//
// The folder, as `save_pretrained` writes it (transformers' names):
//   config.json                        the architecture: model_type and the sizes below
//   model.safetensors                  every tensor, or, for a large model, the shards:
//   model.safetensors.index.json       {"metadata": {...}, "weight_map": {tensor name: shard file}}
//   model-00001-of-00002.safetensors   ... each tensor in exactly one shard
//   tokenizer.json                     the tokenizer (read by the tokenizer's reader, not here)
// model.safetensors is read when it is there (as transformers does), else the index and its shards.
//
// config.json, by the definitions of transformers' LlamaConfig, Qwen2Config and MistralConfig (the
// defaults below are theirs) and what their models read of it. A key the model's code never reads
// (architectures, transformers_version, initializer_range, use_cache, pad_token_id, pretraining_tp:
// its sliced matmuls sum to the same product, attention_dropout: training only, ...) changes nothing
// computed and is ignored. A key that changes what is computed and that gradformer does not compute
// is refused in one line naming the key and its value: rotary scaling other than llama3, a partial
// rotary embedding (partial_rotary_factor != 1), mixture-of-experts keys, an activation other than
// silu, sliding-window attention (Qwen2's use_sliding_window or layer_types; Mistral's
// sliding_window shorter than max_position_embeddings: its default, 4096, when absent), quantized
// weights (quantization_config).
//
// The tensors of a model with V tokens, d = hidden_size, H heads, N key/value heads of hd = head_dim,
// ff = intermediate_size ([out, in] as nn.Linear stores them):
//   model.embed_tokens.weight [V, d]
//   model.layers.{i}.input_layernorm.weight [d]           (RMSNorm: a weight, no bias)
//   model.layers.{i}.self_attn.q_proj.weight [H*hd, d]    .bias [H*hd] (Qwen2; Llama's attention_bias)
//   model.layers.{i}.self_attn.k_proj.weight [N*hd, d]    .bias [N*hd] (likewise)
//   model.layers.{i}.self_attn.v_proj.weight [N*hd, d]    .bias [N*hd] (likewise)
//   model.layers.{i}.self_attn.o_proj.weight [d, H*hd]    .bias [d]    (Llama's attention_bias only)
//   model.layers.{i}.post_attention_layernorm.weight [d]
//   model.layers.{i}.mlp.gate_proj.weight [ff, d]  up_proj.weight [ff, d]  down_proj.weight [d, ff]
//                                                         .bias each (Llama's mlp_bias)
//   model.norm.weight [d]
//   lm_head.weight [V, d]     untied only; a tied model's folder may hold it too, equal to the embedding
//   *.rotary_emb.inv_freq     the rotary frequencies as buffers, in older files: ignored
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nn/safetensors.h"

namespace gradformer {

/// The model types config.json's model_type may name: the Llama family, and GPT-2, recognised so
/// that a caller can hand the folder to the GPT-2 importer (import_gpt2.h).
enum class HubModelType { Llama, Qwen2, Mistral, Gpt2 };
/// "llama", "qwen2", "mistral", "gpt2": model_type as config.json writes it.
const char* hub_model_type_name(HubModelType type);

/// Llama 3.1's rotary scaling (rope_type "llama3"): the low frequencies divided by factor, the high
/// ones kept, a smooth blend between, by wavelength against original_max_position_embeddings.
struct Llama3RopeScaling {
  double factor = 0, low_freq_factor = 0, high_freq_factor = 0;
  int64_t original_max_position_embeddings = 0;
};

/// What a Llama-family config.json says, every default filled in. For model_type gpt2 only
/// `source` and `model_type` are set: read the file with read_gpt2_config.
struct HubConfig {
  std::string source;  // the file, for messages
  HubModelType model_type = HubModelType::Llama;
  int64_t vocab_size = 0, hidden_size = 0, intermediate_size = 0, num_hidden_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_key_value_heads = 0;  // absent: Llama's is num_attention_heads, Mistral's 8, Qwen2's 32
                                    // (their defaults); null: num_attention_heads
  int64_t head_dim = 0;             // absent or null: hidden_size / num_attention_heads
  int64_t max_position_embeddings = 0;
  double rms_norm_eps = 1e-6;                     // absent: 1e-6
  double rope_theta = 10000.0;                    // absent: 10000
  std::optional<Llama3RopeScaling> rope_scaling;  // null, absent or rope_type "default": none
  bool tie_word_embeddings = false;               // absent: false
  bool qkv_bias = false;  // q_proj, k_proj, v_proj have biases: Qwen2 always, Llama's attention_bias
  bool o_bias = false;    // o_proj has a bias: Llama's attention_bias
  bool mlp_bias = false;  // gate_proj, up_proj, down_proj have biases: Llama's mlp_bias
  std::optional<int64_t> bos_token_id;
  std::vector<int64_t> eos_token_ids;     // eos_token_id: one id or a list, every one kept
  std::string torch_dtype;                // the weights' dtype as saved ("bfloat16"), informational;
                                          // torch_dtype or transformers 5's dtype; "" when absent
  std::vector<std::string> ignored_keys;  // keys read and found to change nothing computed
};

/// The configuration in `json`, read from `source` (named in every message). CheckpointError in one
/// line naming the key and its value for: text that is not a JSON object, a key given twice, a
/// model_type missing or not one of llama, qwen2, mistral, gpt2; a size (vocab_size, hidden_size,
/// intermediate_size, num_hidden_layers, num_attention_heads, max_position_embeddings) missing, and
/// any size not an integer, not positive or beyond gradformer's limits (TransformerConfig's);
/// num_attention_heads not dividing hidden_size when head_dim is absent, num_key_value_heads not
/// dividing num_attention_heads; a number (rms_norm_eps, rope_theta, the scaling's) not positive;
/// a boolean that is not true or false; and every key refused in the header comment above.
HubConfig parse_hub_config(std::string_view json, const std::string& source);
/// parse_hub_config of the file at `path`; CheckpointError naming it when it cannot be read (no such
/// file, not a regular file, over 1 MiB).
HubConfig read_hub_config(const std::string& path);

/// The tensors of a hub folder: each tensor's name mapped to the reader of the file that holds it,
/// whose header is read and checked, its elements still in the file. The importer reads each tensor
/// straight into its destination (read_into), so the model is never held twice. F16 and BF16 are
/// widened exactly to float32 (SafetensorsReader), so specs() says float32 for them.
class HubTensors {
 public:
  const std::string& folder() const { return folder_; }
  /// The index file, or "" when the folder's model.safetensors holds everything.
  const std::string& index_file() const { return index_file_; }
  /// The safetensors files read: model.safetensors, or the shards in the order the index names them.
  std::vector<std::string> files() const;
  /// Every tensor's name, shape and dtype as read, in name order.
  const std::vector<ParameterSpec>& specs() const { return specs_; }
  bool contains(const std::string& name) const { return shard_of_.count(name) > 0; }
  /// The file holding `name`; CheckpointError naming the folder when no file holds it.
  const std::string& file_of(const std::string& name) const;
  /// The reader of the file holding `name`; CheckpointError naming the folder when no file holds it.
  const SafetensorsReader& reader_of(const std::string& name) const;
  /// reader_of(name).read_into(name, destination): its errors name the file and the tensor.
  void read_into(const std::string& name, const Tensor& destination) const;
  Tensor read(const std::string& name) const;

 private:
  friend HubTensors open_hub_tensors(const std::string& dir);
  struct Shard {
    std::string path;
    SafetensorsReader reader;
  };
  std::string folder_, index_file_;
  std::vector<Shard> shards_;
  std::map<std::string, size_t> shard_of_;  // tensor name -> its shard in shards_
  std::vector<ParameterSpec> specs_;
};

/// The tensors in `dir`: model.safetensors if it is there, else the shards
/// model.safetensors.index.json names. CheckpointError naming the file for: `dir` not a directory;
/// neither file there (the message lists the files the folder holds that look like weights or
/// configuration); an index that is not JSON or has no weight_map object, a shard name that is not
/// a string, that is absolute or escapes the folder ("../x"), a shard that does not exist or is not
/// a regular file, a tensor named twice in the index, a tensor the index names that its shard
/// lacks, a tensor a shard holds that the index names in another shard (the same tensor in two
/// shards) or not at all; and every error of SafetensorsReader.
HubTensors open_hub_tensors(const std::string& dir);

/// Every file an import of `dir` reads: config.json, model.safetensors or the index and every shard
/// it names, tokenizer.json; what an import's output must not be. The index is read to name the
/// shards: CheckpointError as open_hub_tensors for an index it cannot read.
std::vector<std::string> hub_folder_paths(const std::string& dir);

/// The tensors a model of `config` has, in the order of the table in the header comment, each of
/// `dtype` (the dtype the folder's tensors were read as); lm_head.weight when `with_lm_head`
/// (always needed untied; a tied model's folder may hold it).
std::vector<ParameterSpec> hub_tensor_specs(const HubConfig& config, DType dtype, bool with_lm_head);

/// What check_hub_tensors found besides the expected tensors.
struct HubTensorCheck {
  DType dtype = DType::Float32;      // the dtype every tensor was read as
  bool lm_head_in_folder = false;    // lm_head.weight is there (tied: compare it, see below)
  std::vector<std::string> ignored;  // the rotary_emb.inv_freq buffers left out
};

/// Checks the folder's tensors against `config` by their headers alone, before anything is read:
/// CheckpointError naming the folder and listing the missing, unexpected and mis-shaped tensors
/// together (as import_gpt2 does); also for a tensor read as neither float32 nor float64, and a
/// config of model_type gpt2. A tied model's lm_head.weight is checked for its shape here; whether it
/// equals the embedding is require_lm_head_is_embedding's question, once the importer has the
/// embedding in hand.
HubTensorCheck check_hub_tensors(const HubConfig& config, const HubTensors& tensors);

/// For a tied model whose folder holds lm_head.weight: CheckpointError naming its file unless it is
/// bit for bit `embedding` (model.embed_tokens.weight as the importer read it), naming the first
/// element that differs. Reads lm_head.weight once.
void require_lm_head_is_embedding(const HubTensors& tensors, const Tensor& embedding);

}  // namespace gradformer
