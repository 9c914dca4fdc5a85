// A hub model's config.json read (transformer/store/hub_folder.h): its fields and transformers'
// defaults, and every refusal naming its key and value. Every value asserted is the test's own.
#include "hub_folder_files.h"
#include "transformer/store/hub_folder.h"

using namespace gradformer;
using namespace hub_test;

namespace {

HubConfig parsed(const Members& changes = {}, const std::vector<std::string>& removed = {}) {
  return parse_hub_config(config(changes, removed), "dir/config.json");
}

}  // namespace

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
  CHECK_THROWS_MSG(parsed({{"rope_interleaved", "true"}}), CheckpointError, "rope_interleaved true is not supported");
  CHECK(parsed({{"rope_interleaved", "false"}}).model_type == HubModelType::Llama);  // SmolLM2's config says false
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
