// A Hugging Face hub folder read as files (transformer/store/hub_folder.h): config.json's fields and
// defaults, every refusal naming its key and value, model.safetensors or shards and their index
// (one shard written by hand in BF16 and F16), each error of a folder, and the check of the tensors
// against the config. Every value asserted comes from the files this test writes.
#include <cstring>

#include "../train/training_helpers.h"
#include "transformer/store/hub_folder.h"

using namespace gradformer;
using test::TempDir;

namespace hub_test {

// ---- config.json ------------------------------------------------------------------------------

using Members = std::vector<std::pair<std::string, std::string>>;  // key, JSON text of its value

// A tiny Llama: V 8, d 4, 2 heads and 1 key/value head of 2, ff 6, 2 layers, untied.
const Members kLlama = {{"architectures", "[\"LlamaForCausalLM\"]"},
                        {"model_type", "\"llama\""},
                        {"vocab_size", "8"},
                        {"hidden_size", "4"},
                        {"intermediate_size", "6"},
                        {"num_hidden_layers", "2"},
                        {"num_attention_heads", "2"},
                        {"num_key_value_heads", "1"},
                        {"max_position_embeddings", "16"},
                        {"rms_norm_eps", "1e-05"},
                        {"rope_theta", "500000.0"},
                        {"tie_word_embeddings", "false"},
                        {"hidden_act", "\"silu\""},
                        {"bos_token_id", "1"},
                        {"eos_token_id", "[2, 7]"},
                        {"torch_dtype", "\"bfloat16\""},
                        {"transformers_version", "\"4.44.0\""},
                        {"initializer_range", "0.02"},
                        {"use_cache", "true"},
                        {"pretraining_tp", "1"},
                        {"attention_dropout", "0.0"},
                        {"pad_token_id", "null"},
                        {"attention_bias", "false"},
                        {"mlp_bias", "false"}};

// `base` with each change made (a key replaced, or added at the end) and the `removed` keys left out.
std::string config(const Members& changes = {}, const std::vector<std::string>& removed = {},
                   const Members& base = kLlama) {
  Members members = base;
  for (const auto& [key, value] : changes) {
    bool replaced = false;
    for (auto& member : members)
      if (member.first == key) member.second = value, replaced = true;
    if (!replaced) members.emplace_back(key, value);
  }
  std::string text = "{";
  for (const auto& [key, value] : members)
    if (std::find(removed.begin(), removed.end(), key) == removed.end())
      text += (text.size() > 1 ? ", \"" : "\"") + key + "\": " + value;
  return text + "}";
}

HubConfig parsed(const Members& changes = {}, const std::vector<std::string>& removed = {}) {
  return parse_hub_config(config(changes, removed), "dir/config.json");
}

// ---- safetensors files ------------------------------------------------------------------------

// Values a BF16 and an F16 hold exactly, with their bits in each.
struct Exact {
  float value;
  uint16_t bf16, f16;
};
constexpr Exact kExact[] = {{1.5f, 0x3FC0, 0x3E00},
                            {-2.0f, 0xC000, 0xC000},
                            {0.25f, 0x3E80, 0x3400},
                            {3.0f, 0x4040, 0x4200},
                            {0.0f, 0x0000, 0x0000}};
constexpr size_t kExactCount = sizeof(kExact) / sizeof(kExact[0]);

// The k-th element of a tensor whose elements start at kExact[start].
const Exact& element(size_t start, int64_t k) { return kExact[(start + static_cast<size_t>(k)) % kExactCount]; }

Tensor filled(const Shape& shape, size_t start) {
  Tensor t = Tensor::empty(shape);
  for (int64_t k = 0; k < t.numel(); ++k) t.data<float>()[k] = element(start, k).value;
  return t;
}

// One tensor of a file written by hand: its dtype's name as the format writes it, its bytes.
struct RawTensor {
  std::string name, dtype;
  std::vector<int64_t> shape;
  std::string bytes;
};

// The elements of filled(shape, start) in BF16 or F16, little-endian.
RawTensor half_tensor(const std::string& name, const std::string& dtype, std::vector<int64_t> shape, size_t start) {
  int64_t count = 1;
  for (int64_t n : shape) count *= n;
  std::string bytes;
  for (int64_t k = 0; k < count; ++k) {
    const uint16_t bits = dtype == "BF16" ? element(start, k).bf16 : element(start, k).f16;
    bytes += static_cast<char>(bits & 0xFF), bytes += static_cast<char>(bits >> 8);
  }
  return {name, dtype, std::move(shape), bytes};
}

// The safetensors format written out: the 8-byte length, the header padded to 8 bytes, the data.
void write_raw_safetensors(const std::string& path, const std::vector<RawTensor>& tensors) {
  std::string header = "{", data;
  for (const RawTensor& t : tensors) {
    std::string shape;
    for (int64_t n : t.shape) shape += (shape.empty() ? "" : ",") + std::to_string(n);
    header += (header.size() > 1 ? ",\"" : "\"") + t.name + "\":{\"dtype\":\"" + t.dtype + "\",\"shape\":[" + shape +
              "],\"data_offsets\":[" + std::to_string(data.size()) + "," +
              std::to_string(data.size() + t.bytes.size()) + "]}";
    data += t.bytes;
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string length(8, '\0');
  for (int i = 0; i < 8; ++i) length[i] = static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  test::write_text(path, length + header + data);
}

// The tiny Llama's tensors by name and shape, written out here from transformers' names.
std::vector<std::pair<std::string, Shape>> tiny_llama_tensors(bool lm_head, bool qkv_bias = false) {
  std::vector<std::pair<std::string, Shape>> out = {{"model.embed_tokens.weight", {8, 4}}};
  for (int i = 0; i < 2; ++i) {
    const std::string l = "model.layers." + std::to_string(i) + ".";
    out.push_back({l + "input_layernorm.weight", {4}});
    out.push_back({l + "self_attn.q_proj.weight", {4, 4}});
    out.push_back({l + "self_attn.k_proj.weight", {2, 4}});
    out.push_back({l + "self_attn.v_proj.weight", {2, 4}});
    if (qkv_bias) {
      out.push_back({l + "self_attn.q_proj.bias", {4}});
      out.push_back({l + "self_attn.k_proj.bias", {2}});
      out.push_back({l + "self_attn.v_proj.bias", {2}});
    }
    out.push_back({l + "self_attn.o_proj.weight", {4, 4}});
    out.push_back({l + "post_attention_layernorm.weight", {4}});
    out.push_back({l + "mlp.gate_proj.weight", {6, 4}});
    out.push_back({l + "mlp.up_proj.weight", {6, 4}});
    out.push_back({l + "mlp.down_proj.weight", {4, 6}});
  }
  out.push_back({"model.norm.weight", {4}});
  if (lm_head) out.push_back({"lm_head.weight", {8, 4}});
  return out;
}

StateDict tiny_llama_state(bool lm_head, bool qkv_bias = false) {
  StateDict state;
  size_t start = 0;
  for (const auto& [name, shape] : tiny_llama_tensors(lm_head, qkv_bias)) state[name] = filled(shape, start++);
  return state;
}

// A folder of config.json (the tiny Llama unless given) and model.safetensors of `state`.
void write_single_file_folder(const TempDir& dir, const StateDict& state, const std::string& config_text = config()) {
  test::write_text(dir / "config.json", config_text);
  save_safetensors(dir / "model.safetensors", state);
}

std::string index_json(const std::vector<std::pair<std::string, std::string>>& places) {
  std::string map;
  for (const auto& [tensor, shard] : places) map += (map.empty() ? "\"" : ", \"") + tensor + "\": \"" + shard + "\"";
  return "{\"metadata\": {\"total_size\": 1234}, \"weight_map\": {" + map + "}}";
}

constexpr const char* kShard1 = "model-00001-of-00002.safetensors";
constexpr const char* kShard2 = "model-00002-of-00002.safetensors";

// The tiny Llama in two shards: the embedding and layer 0 in float32 (the project's writer), layer
// 1, the final norm and lm_head by hand in BF16, the final norm in F16. Returns each tensor's shard.
std::vector<std::pair<std::string, std::string>> write_sharded_folder(const TempDir& dir) {
  test::write_text(dir / "config.json", config());
  StateDict first;
  std::vector<RawTensor> second;
  std::vector<std::pair<std::string, std::string>> places;
  size_t start = 0;
  for (const auto& [name, shape] : tiny_llama_tensors(true)) {
    const bool in_first = name.rfind("model.embed_tokens", 0) == 0 || name.rfind("model.layers.0.", 0) == 0;
    if (in_first) first[name] = filled(shape, start);
    if (!in_first)
      second.push_back(half_tensor(name, name == "model.norm.weight" ? "F16" : "BF16", shape.to_vector(), start));
    places.emplace_back(name, in_first ? kShard1 : kShard2);
    ++start;
  }
  save_safetensors(dir / kShard1, first);
  write_raw_safetensors(dir / kShard2, second);
  test::write_text(dir / "model.safetensors.index.json", index_json(places));
  return places;
}

}  // namespace hub_test

using namespace hub_test;

// ---- config.json: fields and defaults ---------------------------------------------------------

TEST_CASE("hub config: a Llama config.json's fields, as written") {
  const HubConfig c = parsed();
  CHECK(c.source == "dir/config.json");
  CHECK(c.model_type == HubModelType::Llama);
  CHECK(c.vocab_size == 8);
  CHECK(c.hidden_size == 4);
  CHECK(c.intermediate_size == 6);
  CHECK(c.num_hidden_layers == 2);
  CHECK(c.num_attention_heads == 2);
  CHECK(c.num_key_value_heads == 1);
  CHECK(c.head_dim == 2);  // 4 / 2
  CHECK(c.max_position_embeddings == 16);
  CHECK(c.rms_norm_eps == 1e-05);
  CHECK(c.rope_theta == 500000.0);
  CHECK(!c.rope_scaling);
  CHECK(!c.tie_word_embeddings);
  CHECK(!c.qkv_bias);
  CHECK(!c.o_bias);
  CHECK(!c.mlp_bias);
  CHECK(c.bos_token_id == 1);
  CHECK(c.eos_token_ids == std::vector<int64_t>{2, 7});
  CHECK(c.torch_dtype == "bfloat16");
  CHECK(c.ignored_keys == std::vector<std::string>{"architectures", "attention_dropout", "initializer_range",
                                                   "pad_token_id", "pretraining_tp", "transformers_version",
                                                   "use_cache"});
}

TEST_CASE("hub config: absent keys take transformers' defaults") {
  const HubConfig c =
      parsed({}, {"num_key_value_heads", "rms_norm_eps", "rope_theta", "tie_word_embeddings", "hidden_act",
                  "bos_token_id", "eos_token_id", "torch_dtype", "attention_bias", "mlp_bias"});
  CHECK(c.num_key_value_heads == 2);  // LlamaConfig: as many as the heads
  CHECK(c.head_dim == 2);
  CHECK(c.rms_norm_eps == 1e-6);
  CHECK(c.rope_theta == 10000.0);
  CHECK(!c.tie_word_embeddings);
  CHECK(!c.qkv_bias);
  CHECK(!c.mlp_bias);
  CHECK(!c.bos_token_id);
  CHECK(c.eos_token_ids.empty());
  CHECK(c.torch_dtype.empty());
  // null is absent too; a single eos id is a list of one; transformers 5's "dtype"
  const HubConfig d =
      parsed({{"num_key_value_heads", "null"}, {"head_dim", "null"}, {"eos_token_id", "2"}}, {"torch_dtype"});
  CHECK(d.num_key_value_heads == 2);
  CHECK(d.head_dim == 2);
  CHECK(d.eos_token_ids == std::vector<int64_t>{2});
  CHECK(parsed({{"dtype", "\"float32\""}}, {"torch_dtype"}).torch_dtype == "float32");
}

TEST_CASE("hub config: head_dim given, biases, tying") {
  const HubConfig c =
      parsed({{"head_dim", "4"}, {"attention_bias", "true"}, {"mlp_bias", "true"}, {"tie_word_embeddings", "true"}});
  CHECK(c.head_dim == 4);  // not d / H: Mistral's and Llama's head_dim may be anything even
  CHECK(c.qkv_bias);
  CHECK(c.o_bias);
  CHECK(c.mlp_bias);
  CHECK(c.tie_word_embeddings);
}

TEST_CASE("hub config: Qwen2: q, k, v biases always, no o bias, the sliding window off") {
  const HubConfig c = parsed({{"model_type", "\"qwen2\""},
                              {"use_sliding_window", "false"},
                              {"sliding_window", "4096"},
                              {"max_window_layers", "28"},
                              {"layer_types", "[\"full_attention\", \"full_attention\"]"}},
                             {"attention_bias", "mlp_bias"});
  CHECK(c.model_type == HubModelType::Qwen2);
  CHECK(c.qkv_bias);
  CHECK(!c.o_bias);
  CHECK(!c.mlp_bias);
  // Qwen2Config's default for an absent num_key_value_heads is 32
  const HubConfig d = parsed({{"model_type", "\"qwen2\""}, {"hidden_size", "128"}, {"num_attention_heads", "64"}},
                             {"num_key_value_heads"});
  CHECK(d.num_key_value_heads == 32);
}

TEST_CASE("hub config: Mistral: no biases, a window that masks nothing, 8 key/value heads by default") {
  const HubConfig c = parsed({{"model_type", "\"mistral\""}, {"sliding_window", "null"}, {"attention_bias", "true"}});
  CHECK(c.model_type == HubModelType::Mistral);
  CHECK(!c.qkv_bias);  // MistralAttention has no biases, whatever the key says
  CHECK(!c.o_bias);
  CHECK(parsed({{"model_type", "\"mistral\""}, {"sliding_window", "16"}}).model_type == HubModelType::Mistral);
  // absent: MistralConfig's 4096, no shorter than these 16 positions
  const HubConfig d = parsed({{"model_type", "\"mistral\""}, {"hidden_size", "32"}, {"num_attention_heads", "8"}},
                             {"num_key_value_heads"});
  CHECK(d.num_key_value_heads == 8);
}

TEST_CASE("hub config: rotary scaling: llama3's four numbers, and transformers 5's rope_parameters") {
  const HubConfig c = parsed({{"rope_scaling",
                               "{\"rope_type\": \"llama3\", \"factor\": 32.0, \"low_freq_factor\": 1.0, "
                               "\"high_freq_factor\": 4.0, \"original_max_position_embeddings\": 8192}"}});
  REQUIRE(c.rope_scaling);
  CHECK(c.rope_scaling->factor == 32.0);
  CHECK(c.rope_scaling->low_freq_factor == 1.0);
  CHECK(c.rope_scaling->high_freq_factor == 4.0);
  CHECK(c.rope_scaling->original_max_position_embeddings == 8192);
  const HubConfig old = parsed({{"rope_scaling",
                                 "{\"type\": \"llama3\", \"factor\": 8, \"low_freq_factor\": 1, "
                                 "\"high_freq_factor\": 4, \"original_max_position_embeddings\": 8192}"}});
  REQUIRE(old.rope_scaling);
  CHECK(old.rope_scaling->factor == 8.0);
  const HubConfig five =
      parsed({{"rope_parameters", "{\"rope_type\": \"default\", \"rope_theta\": 1000000.0}"}}, {"rope_theta"});
  CHECK(five.rope_theta == 1000000.0);
  CHECK(!five.rope_scaling);
  CHECK(!parsed({{"rope_scaling", "null"}}).rope_scaling);
}

TEST_CASE("hub config: model_type gpt2 is recognised, for the GPT-2 importer") {
  const HubConfig c = parse_hub_config("{\"model_type\": \"gpt2\", \"n_embd\": 768}", "g/config.json");
  CHECK(c.model_type == HubModelType::Gpt2);
  CHECK(std::string(hub_model_type_name(c.model_type)) == "gpt2");
}

// ---- config.json: refusals, each naming the key and the value -----------------------------------

TEST_CASE("hub config: a rotary scaling other than llama3 is refused by its type") {
  CHECK_THROWS_MSG(parsed({{"rope_scaling", "{\"rope_type\": \"yarn\", \"factor\": 4.0}"}}), CheckpointError,
                   "dir/config.json: rope_scaling.rope_type 'yarn' is not supported (supported: llama3, null)");
  CHECK_THROWS_MSG(parsed({{"rope_scaling", "{\"type\": \"linear\", \"factor\": 2.0}"}}), CheckpointError,
                   "rope_scaling.type 'linear' is not supported");
  CHECK_THROWS_MSG(parsed({{"rope_parameters", "{\"rope_type\": \"dynamic\", \"factor\": 2.0}"}}), CheckpointError,
                   "rope_parameters.rope_type 'dynamic' is not supported");
  CHECK_THROWS_MSG(parsed({{"rope_scaling", "{\"rope_type\": \"llama3\", \"factor\": 8.0}"}}), CheckpointError,
                   "rope_scaling.low_freq_factor is missing");
  CHECK_THROWS_MSG(parsed({{"rope_scaling",
                            "{\"rope_type\": \"llama3\", \"factor\": 8, \"low_freq_factor\": 4, "
                            "\"high_freq_factor\": 1, \"original_max_position_embeddings\": 8192}"}}),
                   CheckpointError, "rope_scaling.high_freq_factor 1 is not above low_freq_factor 4");
  CHECK_THROWS_MSG(parsed({{"rope_scaling", "\"llama3\""}}), CheckpointError,
                   "rope_scaling 'llama3' is not an object or null");
}

TEST_CASE("hub config: keys that change the computation are refused by name and value") {
  CHECK_THROWS_MSG(parsed({{"hidden_act", "\"gelu\""}}), CheckpointError,
                   "dir/config.json: hidden_act 'gelu' is not supported (supported: silu)");
  CHECK_THROWS_MSG(parsed({{"num_local_experts", "8"}}), CheckpointError, "num_local_experts 8 is not supported");
  CHECK_THROWS_MSG(parsed({{"num_experts_per_tok", "2"}}), CheckpointError, "num_experts_per_tok 2 is not supported");
  CHECK_THROWS_MSG(parsed({{"num_experts", "60"}}), CheckpointError, "num_experts 60 is not supported");
  CHECK(parsed({{"num_experts_per_tok", "0"}}).model_type == HubModelType::Llama);  // no experts: ignored
  CHECK_THROWS_MSG(parsed({{"partial_rotary_factor", "0.5"}}), CheckpointError,
                   "partial_rotary_factor 0.5 is not supported");
  CHECK(parsed({{"partial_rotary_factor", "1.0"}}).model_type == HubModelType::Llama);
  CHECK_THROWS_MSG(parsed({{"quantization_config", "{\"quant_method\": \"gptq\", \"bits\": 4}"}}), CheckpointError,
                   "quantization_config {\"quant_method\":\"gptq\",\"bits\":4} is not supported");
  CHECK_THROWS_MSG(parsed({{"model_type", "\"qwen2\""}, {"use_sliding_window", "true"}}), CheckpointError,
                   "use_sliding_window true is not supported");
  CHECK_THROWS_MSG(
      parsed({{"model_type", "\"qwen2\""}, {"layer_types", "[\"full_attention\", \"sliding_attention\"]"}}),
      CheckpointError, "layer_types[1] 'sliding_attention' is not supported");
  CHECK_THROWS_MSG(parsed({{"model_type", "\"mistral\""}, {"sliding_window", "4"}}), CheckpointError,
                   "sliding_window 4 is not supported: a sliding window shorter than max_position_embeddings 16");
  CHECK_THROWS_MSG(parsed({{"model_type", "\"mistral\""}, {"max_position_embeddings", "32768"}}), CheckpointError,
                   "sliding_window 4096 (MistralConfig's default: the key is absent) is not supported");
}

TEST_CASE("hub config: model types other than the four are refused") {
  CHECK_THROWS_MSG(parsed({{"model_type", "\"mixtral\""}}), CheckpointError,
                   "dir/config.json: model_type 'mixtral' is not supported (supported: llama, qwen2, mistral, gpt2)");
  CHECK_THROWS_MSG(parsed({}, {"model_type"}), CheckpointError, "dir/config.json: model_type is missing");
  CHECK_THROWS_MSG(parsed({{"model_type", "3"}}), CheckpointError, "model_type 3 is not supported");
}

TEST_CASE("hub config: sizes missing, not integers, not positive, too large or inconsistent") {
  CHECK_THROWS_MSG(parsed({}, {"hidden_size"}), CheckpointError, "dir/config.json: hidden_size is missing");
  CHECK_THROWS_MSG(parsed({}, {"max_position_embeddings"}), CheckpointError, "max_position_embeddings is missing");
  CHECK_THROWS_MSG(parsed({{"intermediate_size", "null"}}), CheckpointError, "intermediate_size is missing");
  CHECK_THROWS_MSG(parsed({{"hidden_size", "4.5"}}), CheckpointError, "hidden_size 4.5 is not an integer");
  CHECK_THROWS_MSG(parsed({{"vocab_size", "\"8\""}}), CheckpointError, "vocab_size '8' is not an integer");
  CHECK_THROWS_MSG(parsed({{"num_hidden_layers", "0"}}), CheckpointError, "num_hidden_layers 0 is not positive");
  CHECK_THROWS_MSG(parsed({{"num_key_value_heads", "-1"}}), CheckpointError, "num_key_value_heads -1 is not positive");
  CHECK_THROWS_MSG(parsed({{"vocab_size", "1000000000"}}), CheckpointError,
                   "vocab_size 1000000000 is over gradformer's limit of 16777216");
  CHECK_THROWS_MSG(parsed({{"num_attention_heads", "3"}}), CheckpointError,
                   "num_attention_heads 3 does not divide hidden_size 4 (and head_dim is not given)");
  CHECK(parsed({{"num_attention_heads", "3"}, {"head_dim", "2"}, {"num_key_value_heads", "3"}}).head_dim == 2);
  CHECK_THROWS_MSG(parsed({{"num_key_value_heads", "3"}, {"num_attention_heads", "4"}, {"hidden_size", "8"}}),
                   CheckpointError, "num_key_value_heads 3 does not divide num_attention_heads 4");
  CHECK_THROWS_MSG(parsed({{"model_type", "\"mistral\""}, {"hidden_size", "8"}, {"num_attention_heads", "4"}},
                          {"num_key_value_heads"}),
                   CheckpointError,
                   "num_key_value_heads 8 (MistralConfig's default: the key is absent) does not divide "
                   "num_attention_heads 4");
  CHECK_THROWS_MSG(parsed({{"head_dim", "3"}}), CheckpointError, "head_dim 3 is odd");
  CHECK_THROWS_MSG(parsed({{"hidden_size", "6"}}), CheckpointError,
                   "head_dim 3 (hidden_size 6 / num_attention_heads 2) is odd");
}

TEST_CASE("hub config: other values of the wrong kind, keys given twice, text that is not JSON") {
  CHECK_THROWS_MSG(parsed({{"rms_norm_eps", "0"}}), CheckpointError, "rms_norm_eps 0 is not positive");
  CHECK_THROWS_MSG(parsed({{"rope_theta", "\"big\""}}), CheckpointError, "rope_theta 'big' is not a number");
  CHECK_THROWS_MSG(parsed({{"tie_word_embeddings", "\"yes\""}}), CheckpointError,
                   "tie_word_embeddings 'yes' is not true or false");
  CHECK_THROWS_MSG(parsed({{"eos_token_id", "[2, \"x\"]"}}), CheckpointError, "eos_token_id[1] 'x' is not a token id");
  CHECK_THROWS_MSG(parsed({{"bos_token_id", "8"}}), CheckpointError,
                   "bos_token_id 8 is not a token id below vocab_size 8");
  CHECK_THROWS_MSG(parse_hub_config("{\"a\": 1}", "x.json"), CheckpointError, "x.json: model_type is missing");
  CHECK_THROWS_MSG(parse_hub_config("{\"model_type\": \"llama\", \"model_type\": \"qwen2\"}", "x.json"),
                   CheckpointError, "x.json: model_type is given twice");
  CHECK_THROWS_MSG(parse_hub_config("{\"model_type\": ", "x.json"), CheckpointError,
                   "x.json: not a JSON configuration");
  CHECK_THROWS_MSG(parse_hub_config("[1]", "x.json"), CheckpointError, "x.json: expected a JSON object");
}

TEST_CASE("hub config: read from a file, which must be there") {
  TempDir dir("hub-config");
  test::write_text(dir / "config.json", config({{"vocab_size", "9"}}));
  const HubConfig c = read_hub_config(dir / "config.json");
  CHECK(c.vocab_size == 9);
  CHECK(c.source == dir / "config.json");
  CHECK_THROWS_MSG(read_hub_config(dir / "absent.json"), CheckpointError, dir / "absent.json");
  CHECK_THROWS_MSG(read_hub_config(dir.path().string()), CheckpointError, "not a regular file");
}

// ---- the tensors: one file, or shards and their index ---------------------------------------------

TEST_CASE("hub tensors: model.safetensors alone, each tensor read where it is") {
  TempDir dir("hub-single");
  const StateDict state = tiny_llama_state(true);
  write_single_file_folder(dir, state);
  const HubTensors tensors = open_hub_tensors(dir.path().string());
  CHECK(tensors.index_file().empty());
  CHECK(tensors.files() == std::vector<std::string>{dir / "model.safetensors"});
  REQUIRE(tensors.specs().size() == state.size());
  for (const ParameterSpec& spec : tensors.specs()) {  // name order, as the state's map
    INFO(spec.name);
    REQUIRE(state.count(spec.name));
    CHECK(spec.shape == state.at(spec.name).shape());
    CHECK(spec.dtype == DType::Float32);
  }
  CHECK(tensors.file_of("model.norm.weight") == dir / "model.safetensors");
  const Tensor into = Tensor::empty({4, 6});
  tensors.read_into("model.layers.1.mlp.down_proj.weight", into);
  CHECK(test::bitwise_equal(into, state.at("model.layers.1.mlp.down_proj.weight")));
  CHECK_THROWS_MSG(tensors.file_of("model.layers.9.mlp.up_proj.weight"), CheckpointError,
                   "no file of the folder holds the tensor model.layers.9.mlp.up_proj.weight");
  CHECK(check_hub_tensors(read_hub_config(dir / "config.json"), tensors).lm_head_in_folder);
}

TEST_CASE("hub tensors: shards named by the index, one in BF16 and F16, widened exactly") {
  TempDir dir("hub-shards");
  const auto places = write_sharded_folder(dir);
  const HubTensors tensors = open_hub_tensors(dir.path().string());
  CHECK(tensors.index_file() == dir / "model.safetensors.index.json");
  CHECK(tensors.files() == std::vector<std::string>{dir / kShard1, dir / kShard2});
  CHECK(tensors.specs().size() == places.size());
  size_t start = 0;
  for (const auto& [name, shape] : tiny_llama_tensors(true)) {
    INFO(name);
    CHECK(tensors.file_of(name) == dir / places[start].second);
    const Tensor t = tensors.read(name);  // BF16 and F16 read as float32, every value exact
    CHECK(t.dtype() == DType::Float32);
    CHECK(test::bitwise_equal(t, filled(shape, start)));
    ++start;
  }
  for (const ParameterSpec& spec : tensors.specs()) CHECK(spec.dtype == DType::Float32);
  const HubTensorCheck check = check_hub_tensors(read_hub_config(dir / "config.json"), tensors);
  CHECK(check.dtype == DType::Float32);
  CHECK(check.ignored.empty());
}

TEST_CASE("hub tensors: model.safetensors is read when both it and an index are there") {
  TempDir dir("hub-both");
  write_sharded_folder(dir);
  save_safetensors(dir / "model.safetensors", tiny_llama_state(true));
  const HubTensors tensors = open_hub_tensors(dir.path().string());
  CHECK(tensors.files() == std::vector<std::string>{dir / "model.safetensors"});
  CHECK(tensors.index_file().empty());
}

TEST_CASE("hub tensors: an index and its shards that disagree are refused, naming the file") {
  TempDir dir("hub-bad-index");
  auto places = write_sharded_folder(dir);
  const std::string index = dir / "model.safetensors.index.json";
  const auto with_index = [&](const std::vector<std::pair<std::string, std::string>>& p) {
    test::write_text(index, index_json(p));
    return open_hub_tensors(dir.path().string());
  };
  auto missing_shard = places;
  missing_shard.back().second = "model-00003-of-00003.safetensors";
  CHECK_THROWS_MSG(
      with_index(missing_shard), CheckpointError,
      index + ": places lm_head.weight in " + (dir / "model-00003-of-00003.safetensors") + ", which is not there");
  auto misplaced = places;
  misplaced.front().second = kShard2;  // the embedding is in the first shard
  CHECK_THROWS_MSG(with_index(misplaced), CheckpointError,
                   (dir / kShard2) + ": no tensor model.embed_tokens.weight, which " + index + " places there");
  auto extra = places;
  extra.emplace_back("model.layers.2.input_layernorm.weight", kShard1);
  CHECK_THROWS_MSG(with_index(extra), CheckpointError,
                   (dir / kShard1) + ": no tensor model.layers.2.input_layernorm.weight");
  auto unnamed = places;
  unnamed.pop_back();
  CHECK_THROWS_MSG(with_index(unnamed), CheckpointError,
                   (dir / kShard2) + ": holds lm_head.weight, which " + index + " does not name");
  auto escaping = places;
  escaping.back().second = "../model-00002-of-00002.safetensors";
  CHECK_THROWS_MSG(with_index(escaping), CheckpointError,
                   index +
                       ": weight_map places lm_head.weight in '../model-00002-of-00002.safetensors', which is "
                       "not a file name inside the folder");
  escaping.back().second = "/etc/passwd";
  CHECK_THROWS_MSG(with_index(escaping), CheckpointError, "in '/etc/passwd', which is not a file name inside");
  auto twice = places;
  twice.push_back(places.front());
  CHECK_THROWS_MSG(with_index(twice), CheckpointError, index + ": weight_map names model.embed_tokens.weight twice");
  test::write_text(index, "{\"metadata\": {}}");
  CHECK_THROWS_MSG(open_hub_tensors(dir.path().string()), CheckpointError, index + ": no weight_map object");
  test::write_text(index, "{\"weight_map\": ");
  CHECK_THROWS_MSG(open_hub_tensors(dir.path().string()), CheckpointError, index + ": not a JSON index");
}

TEST_CASE("hub tensors: the same tensor in two shards is refused, naming both") {
  TempDir dir("hub-twice");
  auto places = write_sharded_folder(dir);
  StateDict first = load_safetensors(dir / kShard1).tensors;
  first["model.norm.weight"] = filled({4}, 0);  // also in the second shard
  save_safetensors(dir / kShard1, first);
  CHECK_THROWS_MSG(open_hub_tensors(dir.path().string()), CheckpointError,
                   "model.norm.weight is in two shards: " + (dir / kShard1) + " and " + (dir / kShard2));
}

TEST_CASE("hub tensors: a folder with neither file lists what it holds") {
  TempDir dir("hub-empty");
  test::write_text(dir / "config.json", config());
  test::write_text(dir / "pytorch_model.bin", "not read");
  test::write_text(dir / "README.md", "not listed");
  CHECK_THROWS_MSG(open_hub_tensors(dir.path().string()), CheckpointError,
                   dir.path().string() + ": neither model.safetensors nor model.safetensors.index.json");
  CHECK_THROWS_MSG(open_hub_tensors(dir.path().string()), CheckpointError, "it holds config.json, pytorch_model.bin");
  CHECK_THROWS_MSG(open_hub_tensors(dir / "absent"), CheckpointError, (dir / "absent") + ": no such directory");
  CHECK_THROWS_MSG(open_hub_tensors(dir / "config.json"), CheckpointError, (dir / "config.json") + ": not a directory");
}

TEST_CASE("hub folder paths: every file an import reads") {
  TempDir single("hub-paths-single"), sharded("hub-paths-sharded");
  write_single_file_folder(single, tiny_llama_state(true));
  CHECK(hub_folder_paths(single.path().string()) ==
        std::vector<std::string>{single / "config.json", single / "model.safetensors", single / "tokenizer.json"});
  write_sharded_folder(sharded);
  CHECK(hub_folder_paths(sharded.path().string()) ==
        std::vector<std::string>{sharded / "config.json", sharded / "model.safetensors.index.json", sharded / kShard1,
                                 sharded / kShard2, sharded / "tokenizer.json"});
}

// ---- the tensors against the config ---------------------------------------------------------------

TEST_CASE("hub tensors: missing, unexpected and mis-shaped tensors listed together, naming the folder") {
  TempDir dir("hub-mismatch");
  StateDict state = tiny_llama_state(true);
  state.erase("model.layers.1.self_attn.k_proj.weight");
  state["model.layers.0.mlp.up_proj.weight"] = filled({4, 6}, 0);  // transposed
  state["model.layers.0.self_attn.extra.weight"] = filled({2}, 0);
  write_single_file_folder(dir, state);
  const HubTensors tensors = open_hub_tensors(dir.path().string());
  const HubConfig c = read_hub_config(dir / "config.json");
  const std::string error = test::error_message<CheckpointError>([&] { check_hub_tensors(c, tensors); });
  CHECK(error.find(dir.path().string() + ": the tensors are not those of the model " + (dir / "config.json")) == 0);
  CHECK(error.find("missing: model.layers.1.self_attn.k_proj.weight [2, 4]") != std::string::npos);
  CHECK(error.find("mismatched: model.layers.0.mlp.up_proj.weight is [6, 4]") != std::string::npos);
  CHECK(error.find("unexpected: model.layers.0.self_attn.extra.weight [2]") != std::string::npos);
}

TEST_CASE("hub tensors: lm_head.weight: needed untied, accepted tied, compared with the embedding") {
  TempDir untied("hub-untied"), tied("hub-tied"), tied_bare("hub-tied-bare");
  write_single_file_folder(untied, tiny_llama_state(false));
  CHECK_THROWS_MSG(check_hub_tensors(read_hub_config(untied / "config.json"), open_hub_tensors(untied.path().string())),
                   CheckpointError, "missing: lm_head.weight [8, 4]");
  const std::string tied_config = config({{"tie_word_embeddings", "true"}});
  write_single_file_folder(tied_bare, tiny_llama_state(false), tied_config);
  CHECK(!check_hub_tensors(read_hub_config(tied_bare / "config.json"), open_hub_tensors(tied_bare.path().string()))
             .lm_head_in_folder);
  StateDict state = tiny_llama_state(true);
  state["lm_head.weight"] = state.at("model.embed_tokens.weight").clone();
  write_single_file_folder(tied, state, tied_config);
  const HubTensors tensors = open_hub_tensors(tied.path().string());
  CHECK(check_hub_tensors(read_hub_config(tied / "config.json"), tensors).lm_head_in_folder);
  const Tensor embedding = tensors.read("model.embed_tokens.weight");
  CHECK_NOTHROW(require_lm_head_is_embedding(tensors, embedding));
  Tensor other = embedding.clone();
  other.data<float>()[1 * 4 + 2] += 1.0f;  // row 1, column 2
  CHECK_THROWS_MSG(require_lm_head_is_embedding(tensors, other), CheckpointError,
                   (tied / "model.safetensors") +
                       ": tie_word_embeddings is true, but lm_head.weight is not "
                       "model.embed_tokens.weight: they differ first at [1, 2]");
}

TEST_CASE("hub tensors: Qwen2's q, k, v biases expected; rotary buffers ignored; integer tensors refused") {
  TempDir qwen("hub-qwen2"), buffers("hub-buffers"), ints("hub-ints");
  const std::string qwen_config = config({{"model_type", "\"qwen2\""}});
  write_single_file_folder(qwen, tiny_llama_state(true, true), qwen_config);
  CHECK_NOTHROW(check_hub_tensors(read_hub_config(qwen / "config.json"), open_hub_tensors(qwen.path().string())));
  write_single_file_folder(buffers, tiny_llama_state(true), qwen_config);  // no biases
  CHECK_THROWS_MSG(
      check_hub_tensors(read_hub_config(buffers / "config.json"), open_hub_tensors(buffers.path().string())),
      CheckpointError, "missing: model.layers.0.self_attn.q_proj.bias [4]");
  StateDict state = tiny_llama_state(true);
  state["model.layers.0.self_attn.rotary_emb.inv_freq"] = filled({1}, 0);
  write_single_file_folder(buffers, state);
  const HubTensorCheck check =
      check_hub_tensors(read_hub_config(buffers / "config.json"), open_hub_tensors(buffers.path().string()));
  CHECK(check.ignored == std::vector<std::string>{"model.layers.0.self_attn.rotary_emb.inv_freq"});
  state["model.norm.weight"] = Tensor::empty({4}, DType::Int64).fill_(1);
  write_single_file_folder(ints, state);
  CHECK_THROWS_MSG(check_hub_tensors(read_hub_config(ints / "config.json"), open_hub_tensors(ints.path().string())),
                   CheckpointError, "model.norm.weight is [4] int64, but a model's weights are floating point");
}
