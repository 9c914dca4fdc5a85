// A Llama-family config.json (hub_folder.h): its keys read by the definitions of transformers'
// LlamaConfig, Qwen2Config and MistralConfig, their defaults filled in, and every key that would
// change the computation in a way gradformer does not compute refused by name and value.
#include <cmath>
#include <cstdlib>
#include <set>

#include "tensor/support/json.h"
#include "transformer/data/line_reader.h"
#include "transformer/model/config.h"
#include "transformer/store/hub_folder.h"
#include "transformer/store/import_gpt2.h"

namespace gradformer {
namespace {

constexpr HubModelType kModelTypes[] = {HubModelType::Llama, HubModelType::Qwen2, HubModelType::Mistral,
                                        HubModelType::Gpt2};
constexpr const char* kSupportedTypes = "llama, qwen2, mistral, gpt2";

bool is_null(const Json& value) { return value.is_literal() && value.text() == "null"; }

// A value as a message shows it: a string in single quotes ('yarn'), anything else as JSON text,
// cut short past 80 characters (a quantization_config can be long).
std::string shown(const Json& value) {
  if (value.is_string()) return "'" + value.text() + "'";
  std::string text;
  try {
    text = value.dump();
  } catch (const JsonError&) {
    return "?";
  }
  return text.size() > 80 ? text.substr(0, 77) + "..." : text;
}

// The members of one JSON object of the file (the file itself, or rope_scaling), by key, each read
// at most once; a key's name in messages carries the object's prefix ("rope_scaling.factor").
class ConfigKeys {
 public:
  ConfigKeys(const Json& object, const std::string& source, std::string prefix = "")
      : source_(source), prefix_(std::move(prefix)) {
    for (const auto& [key, value] : object.members())
      if (!values_.emplace(key, &value).second)
        throw CheckpointError(message(source, ": ", prefix_, key, " is given twice"));
  }
  const std::string& source() const { return source_; }
  std::string name(const std::string& key) const { return prefix_ + key; }
  bool present(const std::string& key) const { return values_.count(key) > 0; }
  // The value of `key`, or nullptr when it is absent or null.
  const Json* get(const std::string& key) {
    const auto it = values_.find(key);
    if (it == values_.end()) return nullptr;
    read_.insert(key);
    return is_null(*it->second) ? nullptr : it->second;
  }
  // "SOURCE: KEY VALUE WHY", the one form of every refusal.
  [[noreturn]] void refuse(const std::string& key, const Json& value, const std::string& why) const {
    throw CheckpointError(message(source_, ": ", name(key), " ", shown(value), " ", why));
  }
  [[noreturn]] void refuse_missing(const std::string& key, const std::string& why) const {
    throw CheckpointError(message(source_, ": ", name(key), " is missing", why));
  }
  // The keys no reader asked for, in name order.
  std::vector<std::string> unread() const {
    std::vector<std::string> keys;
    for (const auto& [key, value] : values_)
      if (!read_.count(key)) keys.push_back(name(key));
    return keys;
  }

 private:
  const std::string& source_;
  std::string prefix_;
  std::map<std::string, const Json*> values_;
  std::set<std::string> read_;
};

std::optional<int64_t> integer(ConfigKeys& keys, const std::string& key) {
  const Json* value = keys.get(key);
  if (!value) return std::nullopt;
  if (!value->is_integer()) keys.refuse(key, *value, "is not an integer");
  return value->value();
}

// A size: an integer, positive, at most gradformer's `limit` (TransformerConfig's bounds).
std::optional<int64_t> size(ConfigKeys& keys, const std::string& key, int64_t limit) {
  const std::optional<int64_t> n = integer(keys, key);
  if (n && *n <= 0) keys.refuse(key, Json::integer(*n), "is not positive");
  if (n && *n > limit) keys.refuse(key, Json::integer(*n), message("is over gradformer's limit of ", limit));
  return n;
}

int64_t required_size(ConfigKeys& keys, const std::string& key, int64_t limit) {
  const std::optional<int64_t> n = size(keys, key, limit);
  if (!n) keys.refuse_missing(key, " or null: every Llama-family config.json gives it");
  return *n;
}

// A number (1e-05, 500000.0 or 10000), finite.
std::optional<double> number(ConfigKeys& keys, const std::string& key) {
  const Json* value = keys.get(key);
  if (!value) return std::nullopt;
  double x = 0;
  if (value->is_integer())
    x = static_cast<double>(value->value());
  else if (value->is_literal() && value->text() != "true" && value->text() != "false")
    x = std::strtod(value->text().c_str(), nullptr);  // JSON's grammar, checked by the parser
  else
    keys.refuse(key, *value, "is not a number");
  if (!std::isfinite(x)) keys.refuse(key, *value, "is not a finite number");
  return x;
}

std::optional<double> positive_number(ConfigKeys& keys, const std::string& key) {
  const std::optional<double> x = number(keys, key);
  if (x && !(*x > 0)) keys.refuse(key, *keys.get(key), "is not positive");
  return x;
}

std::optional<bool> boolean(ConfigKeys& keys, const std::string& key) {
  const Json* value = keys.get(key);
  if (!value) return std::nullopt;
  if (!value->is_literal() || (value->text() != "true" && value->text() != "false"))
    keys.refuse(key, *value, "is not true or false");
  return value->text() == "true";
}

std::optional<std::string> text(ConfigKeys& keys, const std::string& key) {
  const Json* value = keys.get(key);
  if (!value) return std::nullopt;
  if (!value->is_string()) keys.refuse(key, *value, "is not a string");
  return value->text();
}

HubModelType model_type(ConfigKeys& keys) {
  const Json* value = keys.get("model_type");
  if (!value) keys.refuse_missing("model_type", message(" (supported: ", kSupportedTypes, ")"));
  if (value->is_string())
    for (HubModelType type : kModelTypes)
      if (value->text() == hub_model_type_name(type)) return type;
  keys.refuse("model_type", *value, message("is not supported (supported: ", kSupportedTypes, ")"));
}

}  // namespace

const char* hub_model_type_name(HubModelType type) {
  switch (type) {
    case HubModelType::Llama:
      return "llama";
    case HubModelType::Qwen2:
      return "qwen2";
    case HubModelType::Mistral:
      return "mistral";
    case HubModelType::Gpt2:
      return "gpt2";
  }
  return "?";
}

namespace {

// The sizes, each bounded as TransformerConfig bounds the model's, and how they fit together.
void read_sizes(ConfigKeys& keys, HubConfig& c) {
  using Limits = TransformerConfig;
  c.vocab_size = required_size(keys, "vocab_size", Limits::max_vocab);
  c.hidden_size = required_size(keys, "hidden_size", Limits::max_d_model);
  c.intermediate_size = required_size(keys, "intermediate_size", Limits::max_d_ff);
  c.num_hidden_layers = required_size(keys, "num_hidden_layers", Limits::max_layers);
  c.num_attention_heads = required_size(keys, "num_attention_heads", Limits::max_heads);
  c.max_position_embeddings = required_size(keys, "max_position_embeddings", Limits::max_max_len);
  // Absent, each config class has its own default; null (or Llama's absent) means as many as heads.
  const int64_t default_kv_heads = c.model_type == HubModelType::Mistral ? 8
                                   : c.model_type == HubModelType::Qwen2 ? 32
                                                                         : c.num_attention_heads;
  const bool kv_present = keys.present("num_key_value_heads");
  c.num_key_value_heads = size(keys, "num_key_value_heads", Limits::max_heads)
                              .value_or(kv_present ? c.num_attention_heads : default_kv_heads);
  const std::optional<int64_t> head_dim = size(keys, "head_dim", Limits::max_d_model);
  if (!head_dim && c.hidden_size % c.num_attention_heads != 0)
    throw CheckpointError(message(keys.source(), ": num_attention_heads ", c.num_attention_heads,
                                  " does not divide hidden_size ", c.hidden_size, " (and head_dim is not given)"));
  c.head_dim = head_dim.value_or(c.hidden_size / c.num_attention_heads);
  if (c.head_dim % 2 != 0)
    throw CheckpointError(message(
        keys.source(), ": head_dim ", c.head_dim,
        head_dim ? "" : message(" (hidden_size ", c.hidden_size, " / num_attention_heads ", c.num_attention_heads, ")"),
        " is odd, but rotary positions turn pairs of a head's dimensions"));
  const std::string from_default =  // Llama's default, the heads, always divides them
      kv_present ? ""
                 : message(" (", c.model_type == HubModelType::Mistral ? "MistralConfig" : "Qwen2Config",
                           "'s default: the key is absent)");
  if (c.num_attention_heads % c.num_key_value_heads != 0)
    throw CheckpointError(message(keys.source(), ": num_key_value_heads ", c.num_key_value_heads, from_default,
                                  " does not divide num_attention_heads ", c.num_attention_heads));
}

// rope_scaling's llama3 numbers: all four given, each positive, low_freq_factor below high_freq_factor
// (the blend divides by their difference).
Llama3RopeScaling llama3_scaling(ConfigKeys& rope) {
  Llama3RopeScaling s;
  const auto required = [&](const std::string& key) {
    const std::optional<double> x = positive_number(rope, key);
    if (!x)
      rope.refuse_missing(key,
                          ": rope_type llama3 needs factor, low_freq_factor, high_freq_factor and "
                          "original_max_position_embeddings");
    return *x;
  };
  s.factor = required("factor"), s.low_freq_factor = required("low_freq_factor");
  s.high_freq_factor = required("high_freq_factor");
  const std::optional<int64_t> original =
      size(rope, "original_max_position_embeddings", TransformerConfig::max_max_len);
  if (!original) required("original_max_position_embeddings");  // refuses it as missing
  s.original_max_position_embeddings = *original;
  if (!(s.low_freq_factor < s.high_freq_factor))
    rope.refuse("high_freq_factor", *rope.get("high_freq_factor"),
                message("is not above low_freq_factor ", s.low_freq_factor));
  return s;
}

// "partial_rotary_factor" other than 1 turns only part of each head: refused wherever it is given.
void refuse_partial_rotary(ConfigKeys& keys) {
  const std::optional<double> factor = number(keys, "partial_rotary_factor");
  if (factor && *factor != 1.0)
    keys.refuse("partial_rotary_factor", *keys.get("partial_rotary_factor"),
                "is not supported: rotary positions on part of each head (supported: 1)");
}

// "rope_interleaved" true (configs exported by nanotron, SmolLM2's among them, write it false) pairs
// dimensions 2i and 2i + 1 where the hub's weights pair i and i + d_k / 2: refused.
void refuse_interleaved_rope(ConfigKeys& keys) {
  if (boolean(keys, "rope_interleaved").value_or(false))
    keys.refuse("rope_interleaved", *keys.get("rope_interleaved"),
                "is not supported: rotary pairs of neighbouring dimensions (supported: false, the rotate-half layout)");
}

// rope_theta and rope_scaling (transformers 4), or rope_parameters holding both (transformers 5).
void read_rope(ConfigKeys& keys, HubConfig& c) {
  refuse_interleaved_rope(keys);
  std::optional<double> theta = positive_number(keys, "rope_theta");
  refuse_partial_rotary(keys);
  const Json* scaling = keys.get("rope_scaling");
  const Json* parameters = keys.get("rope_parameters");
  if (scaling && parameters)
    throw CheckpointError(message(keys.source(), ": both rope_scaling and rope_parameters are given; give one"));
  const std::string key = scaling ? "rope_scaling" : "rope_parameters";
  const Json* rope = scaling ? scaling : parameters;
  if (rope) {
    if (!rope->is_object()) keys.refuse(key, *rope, "is not an object or null");
    ConfigKeys inner(*rope, keys.source(), key + ".");
    const std::optional<std::string> rope_type = text(inner, "rope_type"), old_type = text(inner, "type");
    if (rope_type && old_type && *rope_type != *old_type)
      inner.refuse("type", *inner.get("type"), message("disagrees with rope_type '", *rope_type, "'"));
    const std::string type = rope_type.value_or(old_type.value_or("default"));
    if (type == "llama3") c.rope_scaling = llama3_scaling(inner);
    if (type != "llama3" && type != "default")
      inner.refuse(rope_type ? "rope_type" : "type", Json::string(type), "is not supported (supported: llama3, null)");
    const std::optional<double> inner_theta = positive_number(inner, "rope_theta");
    if (theta && inner_theta && *theta != *inner_theta)
      inner.refuse("rope_theta", *inner.get("rope_theta"), message("disagrees with rope_theta ", *theta));
    if (inner_theta) theta = inner_theta;
    refuse_partial_rotary(inner);
    for (std::string& ignored : inner.unread()) c.ignored_keys.push_back(std::move(ignored));
  }
  c.rope_theta = theta.value_or(10000.0);
}

// Mixture-of-experts keys (Mixtral's, Qwen2-MoE's, DeepSeek's): a count of experts other than 0.
void refuse_experts(ConfigKeys& keys) {
  for (const char* key : {"num_local_experts", "num_experts", "num_experts_per_tok", "n_routed_experts",
                          "n_shared_experts", "moe_intermediate_size", "shared_expert_intermediate_size"}) {
    const Json* value = keys.get(key);
    if (value && !(value->is_integer() && value->value() == 0))
      keys.refuse(key, *value, "is not supported: mixture-of-experts layers (supported: 0 or absent)");
  }
}

// Sliding-window attention: Qwen2's when use_sliding_window is true or layer_types names a sliding
// layer; Mistral's whenever the window is shorter than the longest sequence (absent: MistralConfig's
// 4096). Llama's model reads neither key.
void refuse_sliding_window(ConfigKeys& keys, const HubConfig& c) {
  if (c.model_type == HubModelType::Qwen2) {
    if (boolean(keys, "use_sliding_window").value_or(false))
      keys.refuse("use_sliding_window", *keys.get("use_sliding_window"),
                  "is not supported: sliding-window attention (supported: false)");
    if (const Json* layers = keys.get("layer_types")) {
      if (!layers->is_array()) keys.refuse("layer_types", *layers, "is not a list");
      for (size_t i = 0; i < layers->items().size(); ++i)
        if (!layers->items()[i].is_string() || layers->items()[i].text() != "full_attention")
          keys.refuse(message("layer_types[", i, "]"), layers->items()[i],
                      "is not supported (supported: 'full_attention')");
    }
  }
  if (c.model_type != HubModelType::Mistral) return;
  const bool given = keys.present("sliding_window");
  const std::optional<int64_t> window = given ? size(keys, "sliding_window", INT64_MAX) : 4096;
  if (window && *window < c.max_position_embeddings)
    keys.refuse("sliding_window", Json::integer(*window),
                message(given ? "" : "(MistralConfig's default: the key is absent) ",
                        "is not supported: a sliding window shorter than max_position_embeddings ",
                        c.max_position_embeddings, " (supported: null, or a window at least that long)"));
}

// The activation (SwiGLU's gate): silu only, its default when absent.
void refuse_activation(ConfigKeys& keys) {
  const std::optional<std::string> act = text(keys, "hidden_act");
  if (act && *act != "silu") keys.refuse("hidden_act", Json::string(*act), "is not supported (supported: silu)");
}

// Which projections have biases: Qwen2's q, k, v always; Llama's attention_bias (q, k, v and o) and
// mlp_bias; Mistral's none (its model reads neither key).
void read_biases(ConfigKeys& keys, HubConfig& c) {
  if (c.model_type == HubModelType::Qwen2) c.qkv_bias = true;
  if (c.model_type != HubModelType::Llama) return;
  c.qkv_bias = c.o_bias = boolean(keys, "attention_bias").value_or(false);
  c.mlp_bias = boolean(keys, "mlp_bias").value_or(false);
}

int64_t token_id(ConfigKeys& keys, const std::string& key, const Json& value, int64_t vocab_size) {
  if (!value.is_integer()) keys.refuse(key, value, "is not a token id (an integer)");
  if (value.value() < 0 || value.value() >= vocab_size)
    keys.refuse(key, value, message("is not a token id below vocab_size ", vocab_size));
  return value.value();
}

// bos_token_id: an id or null; eos_token_id: an id, a list of ids (Llama 3's) or null.
void read_token_ids(ConfigKeys& keys, HubConfig& c) {
  if (const Json* bos = keys.get("bos_token_id")) c.bos_token_id = token_id(keys, "bos_token_id", *bos, c.vocab_size);
  const Json* eos = keys.get("eos_token_id");
  if (!eos) return;
  if (!eos->is_array()) return c.eos_token_ids.push_back(token_id(keys, "eos_token_id", *eos, c.vocab_size));
  for (size_t i = 0; i < eos->items().size(); ++i)
    c.eos_token_ids.push_back(token_id(keys, message("eos_token_id[", i, "]"), eos->items()[i], c.vocab_size));
}

HubConfig read_llama_family(ConfigKeys& keys, HubConfig c) {
  read_sizes(keys, c);
  c.rms_norm_eps = positive_number(keys, "rms_norm_eps").value_or(1e-6);
  read_rope(keys, c);
  c.tie_word_embeddings = boolean(keys, "tie_word_embeddings").value_or(false);
  read_biases(keys, c);
  read_token_ids(keys, c);
  c.torch_dtype = text(keys, "torch_dtype").value_or(text(keys, "dtype").value_or(""));
  refuse_activation(keys);
  refuse_experts(keys);
  refuse_sliding_window(keys, c);
  if (const Json* quantization = keys.get("quantization_config"))
    keys.refuse("quantization_config", *quantization, "is not supported: quantized weights (supported: null)");
  for (std::string& key : keys.unread()) c.ignored_keys.push_back(std::move(key));
  return c;
}

std::string read_config_text(const std::string& path) {
  require_regular_input(path, "a model's config.json");
  try {
    return read_whole_file(path, kMaxConfigBytes, "a configuration file");
  } catch (const DataError& e) {  // ReadError too
    throw CheckpointError(e.what());
  }
}

}  // namespace

HubConfig parse_hub_config(std::string_view json, const std::string& source) {
  Json parsed;
  try {
    parsed = Json::parse_config(json);
  } catch (const JsonError& e) {
    throw CheckpointError(message(source, ": not a JSON configuration: ", e.what()));
  }
  if (!parsed.is_object()) throw CheckpointError(message(source, ": expected a JSON object, a model's config.json"));
  ConfigKeys keys(parsed, source);
  HubConfig c;
  c.source = source;
  c.model_type = model_type(keys);
  if (c.model_type == HubModelType::Gpt2) return c;  // read_gpt2_config reads the rest
  return read_llama_family(keys, std::move(c));
}

HubConfig read_hub_config(const std::string& path) { return parse_hub_config(read_config_text(path), path); }

}  // namespace gradformer
