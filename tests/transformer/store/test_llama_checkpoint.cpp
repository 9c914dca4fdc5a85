// Checkpoints of models with Llama's settings: every new setting saved and read back, the model's
// logits bit for bit; the paper's settings writing none of the new config.* entries (so a checkpoint
// of an earlier model is what it always was); a bad value a CheckpointError naming entry and value.
#include <algorithm>
#include <array>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "autograd/helpers.h"
#include "nn/safetensors.h"
#include "transformer/model/decoder_only.h"
#include "transformer/model/encoder_decoder.h"
#include "transformer/model/encoder_only.h"
#include "transformer/store/checkpoint.h"

using namespace gradformer;

namespace llama_checkpoint_test {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("gradformer-test-llama-" + name + ".safetensors")).string();
}

// The entries the block's settings add, and the prefix of the rotary scaling's four.
const std::vector<std::string> kBlockKeys{"config.normalization", "config.kv_heads", "config.head_dim", "config.bias",
                                          "config.rope_theta"};
std::vector<std::string> block_keys_in(const std::map<std::string, std::string>& metadata) {
  std::vector<std::string> found;
  for (const auto& [key, value] : metadata)
    if (std::find(kBlockKeys.begin(), kBlockKeys.end(), key) != kBlockKeys.end() ||
        key.rfind("config.rope_scaling", 0) == 0)
      found.push_back(key);
  return found;
}

// A vocabulary of exactly `size` ids (the four specials and size - 4 words).
Vocab vocab_of(int64_t size) {
  std::vector<std::string> words;
  for (int64_t i = 4; i < size; ++i) words.push_back("w" + std::to_string(i));
  Vocab v = Vocab::build({words});
  REQUIRE(v.size() == size);
  return v;
}

// Every setting Llama's block adds, none of them the paper's.
TransformerConfig everything_changed() {
  TransformerConfig c = llama_config(9);
  c.d_model = 16, c.heads = 4, c.d_ff = 20, c.layers = 2, c.max_len = 12, c.dtype = DType::Float64;
  c.block.kv_heads = 2, c.block.head_dim = 6, c.block.bias = Bias::QKV, c.block.rope_theta = 5000;
  c.block.rope_scaling = {.factor = 8, .low_freq_factor = 1.5, .high_freq_factor = 6, .original_max_len = 64};
  c.norm_eps = 1e-6;
  return c;
}

std::string save_lm(const DecoderOnly& model, const std::string& name) {
  CheckpointInfo info;
  info.config = model.config(), info.target_tokenizer = vocab_of(model.config().tgt_vocab);
  const std::string path = temp_path(name);
  save_checkpoint(path, model, model.config(), {}, info);
  return path;
}

// The saved file with one metadata entry set to `value`, written back.
std::string with_entry(const std::string& path, const std::string& key, const std::string& value) {
  SafetensorsFile file = load_safetensors(path);
  file.metadata[key] = value;
  save_safetensors(path, file.tensors, file.metadata);
  return path;
}

}  // namespace llama_checkpoint_test

TEST_CASE("Llama checkpoint: every new setting saved and loaded back, the logits bit for bit") {
  const TransformerConfig c = llama_checkpoint_test::everything_changed();
  DecoderOnly model(c, 3);
  uint64_t seed = 5;
  for (const auto& [name, p] : model.named_parameters())  // the gains and q/k/v biases off 1 and 0
    if (p.dim() == 1) {
      Tensor v = p.value();
      v.copy_(v + test::rnd(v.shape(), seed++, -0.3, 0.3));
    }
  const std::string path = llama_checkpoint_test::save_lm(model, "roundtrip");
  const std::map<std::string, std::string> metadata = load_safetensors(path).metadata;
  CHECK(metadata.at("config.normalization") == "rmsnorm");
  CHECK(metadata.at("config.kv_heads") == "2");
  CHECK(metadata.at("config.head_dim") == "6");
  CHECK(metadata.at("config.bias") == "qkv");
  CHECK(metadata.at("config.rope_theta") == "5000");
  CHECK(metadata.at("config.rope_scaling.factor") == "8");
  CHECK(metadata.at("config.rope_scaling.low_freq_factor") == "1.5");
  CHECK(metadata.at("config.rope_scaling.high_freq_factor") == "6");
  CHECK(metadata.at("config.rope_scaling.original_max_len") == "64");
  CHECK(metadata.at("config.positions") == "rope");
  CHECK(metadata.at("config.activation") == "swiglu");
  const LoadedDecoderOnly loaded = load_decoder_only_checkpoint(path);
  const TransformerConfig& back = loaded.model->config();
  CHECK(back.block == c.block);
  CHECK(back.block.rope_scaling == c.block.rope_scaling);
  CHECK(back.positions == Positions::Rotary);
  CHECK(back.activation == Activation::SwiGLU);
  CHECK(back.norm == NormPlacement::Pre);
  CHECK(back.norm_eps == 1e-6);
  CHECK_FALSE(back.scale_embedding);
  CHECK(back.d_model == 16);
  CHECK(back.dtype == DType::Float64);
  CHECK(loaded.model->parameter_specs().size() == model.parameter_specs().size());
  const Tensor ids = test::ids({1, 5, 6, 7, 8, 2, 3, 4}, 2);
  const Tensor mask = test::lower_triangle(4).unsqueeze(0);
  model.eval(), loaded.model->eval();
  CHECK(test::values(loaded.model->forward(ids, mask).value()) == test::values(model.forward(ids, mask).value()));
  std::filesystem::remove(path);
}

TEST_CASE("Llama checkpoint: an encoder-decoder's and an encoder-only model's block settings round-trip") {
  TransformerConfig c = llama_checkpoint_test::everything_changed();
  c.arch = Architecture::EncoderDecoder, c.src_vocab = 7, c.block.bias = Bias::Attention;
  const EncoderDecoder translator(c, 4);
  CheckpointInfo info;
  info.config = c, info.source_tokenizer = llama_checkpoint_test::vocab_of(7);
  info.target_tokenizer = llama_checkpoint_test::vocab_of(9);
  const std::string path = llama_checkpoint_test::temp_path("encoder-decoder");
  save_checkpoint(path, translator, {}, info);
  const LoadedCheckpoint loaded = load_checkpoint(path);
  CHECK(loaded.info.config.block == c.block);
  CHECK(loaded.info.config.block.bias == Bias::Attention);
  std::filesystem::remove(path);

  EncoderOnlyConfig e;
  e.vocab = 10, e.d_model = 16, e.heads = 4, e.d_ff = 20, e.layers = 1, e.max_len = 8, e.classes = 2;
  e.positions = Positions::Rotary, e.activation = Activation::SwiGLU;
  e.block.normalization = Normalization::RMSNorm, e.block.kv_heads = 1, e.block.bias = Bias::None;
  e.block.rope_theta = 20000;
  const std::string classifier = llama_checkpoint_test::temp_path("encoder-only");
  save_encoder_only_checkpoint(classifier, EncoderOnly(e, 5), {},
                               {e, llama_checkpoint_test::vocab_of(10), {"no", "yes"}, {}});
  const LoadedEncoderOnly back = load_encoder_only_checkpoint(classifier);
  CHECK(back.info.config.block == e.block);
  CHECK(back.info.config.positions == Positions::Rotary);
  CHECK(back.info.config.activation == Activation::SwiGLU);
  std::filesystem::remove(classifier);
}

TEST_CASE("Llama checkpoint: the paper's settings write none of the new entries, each other one only its own") {
  TransformerConfig paper = TransformerConfig::tutorial(9, 9);
  CHECK(llama_checkpoint_test::block_keys_in(config_to_metadata(paper)).empty());
  paper.arch = Architecture::DecoderOnly;
  CHECK(llama_checkpoint_test::block_keys_in(config_to_metadata(paper)).empty());
  CHECK(llama_checkpoint_test::block_keys_in(config_to_metadata(gpt2_small_config())).empty());
  CHECK(llama_checkpoint_test::block_keys_in(config_to_metadata(EncoderOnlyConfig::bert_base())).empty());
  // in a written file too
  TransformerConfig tiny = decoder_only_config(9);
  tiny.d_model = 8, tiny.d_ff = 16, tiny.heads = 2, tiny.layers = 1, tiny.max_len = 8;
  const std::string path = llama_checkpoint_test::save_lm(DecoderOnly(tiny, 1), "paper");
  CHECK(llama_checkpoint_test::block_keys_in(load_safetensors(path).metadata).empty());
  std::filesystem::remove(path);
  // each setting changed alone adds its own entry and no other
  const std::vector<std::pair<std::string, std::function<void(BlockOptions&)>>> one_each{
      {"config.normalization", [](BlockOptions& b) { b.normalization = Normalization::RMSNorm; }},
      {"config.kv_heads", [](BlockOptions& b) { b.kv_heads = 1; }},
      {"config.head_dim", [](BlockOptions& b) { b.head_dim = 4; }},
      {"config.bias", [](BlockOptions& b) { b.bias = Bias::None; }},
      {"config.rope_theta", [](BlockOptions& b) { b.rope_theta = 500000; }}};
  for (const auto& [key, change] : one_each) {
    TransformerConfig c = TransformerConfig::tutorial(9, 9);
    change(c.block);
    CHECK(llama_checkpoint_test::block_keys_in(config_to_metadata(c)) == std::vector<std::string>{key});
  }
}

TEST_CASE("Llama checkpoint: the first checkpoints' configuration entries are written today exactly as they were") {
  // Checkpoints written before Llama's block (the fuzz corpus keeps some): their configuration read
  // and written again gives back every config.* entry they hold, and none of the block's.
  auto config_entries = [](const std::map<std::string, std::string>& metadata) {
    std::map<std::string, std::string> out;
    for (const auto& [key, value] : metadata)
      if (key.rfind("config.", 0) == 0) out[key] = value;
    return out;
  };
  auto stored = [](const std::string& name) {
    const std::string path = std::string(GRADFORMER_SOURCE_DIR) + "/tests/fuzz/corpus/checkpoint/" + name;
    return load_safetensors(path).metadata;
  };
  // written since the Transformer family: every entry, so today's are exactly those
  const std::map<std::string, std::string> lm = stored("decoder_only_learned.safetensors");
  CHECK(config_to_metadata(config_from_metadata(lm, "lm")) == config_entries(lm));
  const std::map<std::string, std::string> bert = stored("encoder_only_classifier.safetensors");
  CHECK(encoder_only_config_to_metadata(encoder_only_config_from_metadata(bert, "bert")) == config_entries(bert));
  // the very first (no config.arch, activation or positions): those three added, the rest as stored
  for (const char* name : {"post_f32.safetensors", "pre_tied.safetensors"}) {
    INFO(name);
    const std::map<std::string, std::string> old = config_entries(stored(name));
    REQUIRE(old.size() == 11);
    std::map<std::string, std::string> now = config_to_metadata(config_from_metadata(stored(name), name));
    CHECK(now.at("config.arch") == "encoder-decoder");
    CHECK(now.at("config.activation") == "relu");
    CHECK(now.at("config.positions") == "sinusoidal");
    now.erase("config.arch"), now.erase("config.activation"), now.erase("config.positions");
    CHECK(now == old);
  }
}

TEST_CASE("Llama checkpoint: a bad value of a new entry is a CheckpointError naming the entry and the value") {
  DecoderOnly model(llama_checkpoint_test::everything_changed(), 2);
  const std::string path = llama_checkpoint_test::save_lm(model, "bad-values");
  const std::vector<std::pair<std::string, std::string>> bad{{"config.bias", "maybe"},
                                                             {"config.normalization", "batchnorm"}};
  for (const auto& [key, value] : bad) {
    INFO(key);
    llama_checkpoint_test::save_lm(model, "bad-values");
    llama_checkpoint_test::with_entry(path, key, value);
    const std::string error = test::error_message<CheckpointError>([&] { load_decoder_only_checkpoint(path); });
    CHECK(error.find(key) != std::string::npos);
    CHECK(error.find("'" + value + "'") != std::string::npos);
    CHECK(error.find(path) != std::string::npos);
  }
  // numbers the configuration refuses: 3 key/value heads for 4 heads, a scaling factor below 1, a word
  const std::vector<std::array<std::string, 3>> refused{{"config.kv_heads", "3", "kv_heads 3 must divide heads 4"},
                                                        {"config.rope_scaling.factor", "0.5", "got factor 0.5"},
                                                        {"config.kv_heads", "two", "config.kv_heads"}};
  for (const auto& [key, value, expected] : refused) {
    INFO(key << " " << value);
    llama_checkpoint_test::save_lm(model, "bad-values");
    llama_checkpoint_test::with_entry(path, key, value);
    CHECK_THROWS_MSG(load_decoder_only_checkpoint(path), CheckpointError, expected);
  }
  std::filesystem::remove(path);
}
