// One tokenizer per side a model has: an encoder-decoder stores a source and a target tokenizer, a
// decoder-only model the target's alone, an encoder-only model its one vocabulary; checkpoints
// written before (a decoder-only model's tokenizer stored twice, as source and as target) still
// load and generate as they did; and a read builds each stored tokenizer once.
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "catch.h"
#include "nn/safetensors.h"
#include "transformer/model/decoder_only.h"
#include "transformer/model/encoder_decoder.h"
#include "transformer/model/sampling.h"
#include "transformer/store/average.h"
#include "transformer/store/checkpoint.h"

using namespace gradformer;

namespace {

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("gradformer-test-sides-" + name + ".safetensors")).string();
}

// The metadata keys that begin with `prefix`.
std::vector<std::string> keys_with(const std::map<std::string, std::string>& metadata, const std::string& prefix) {
  std::vector<std::string> keys;
  for (const auto& [key, value] : metadata)
    if (key.rfind(prefix, 0) == 0) keys.push_back(key);
  return keys;
}

// A tiny decoder-only model over byte-pair tokens learned from a short text.
struct TinyLm {
  Tokenizer tokenizer = Tokenizer::learn_bpe({"the cat sat on the mat, the cat sat"}, 270);
  DecoderOnly model{tiny_config(tokenizer.size()), 3};
  static TransformerConfig tiny_config(int64_t vocab) {
    TransformerConfig c = decoder_only_config(vocab);
    c.d_model = 8, c.d_ff = 16, c.heads = 2, c.layers = 1, c.max_len = 16, c.dropout = 0;
    return c;
  }
  std::string save(const std::string& name) const {
    CheckpointInfo info;
    info.config = model.config(), info.target_tokenizer = tokenizer;
    const std::string path = temp_path(name);
    save_checkpoint(path, model, model.config(), {}, info);
    return path;
  }
};

// The checkpoint at `path` rewritten as gradformer wrote decoder-only models before: the target's
// vocabulary and tokenizer entries copied to the source side.
std::string as_old_format(const std::string& path, const std::string& name) {
  SafetensorsFile file = load_safetensors(path);
  std::map<std::string, std::string> twins;
  for (const auto& [key, value] : file.metadata) {
    if (key == "vocab.target") twins["vocab.source"] = value;
    if (key.rfind("tokenizer.target.", 0) == 0) twins["tokenizer.source." + key.substr(17)] = value;
  }
  file.metadata.merge(twins);
  const std::string old = temp_path(name);
  save_safetensors(old, file.tensors, file.metadata);
  return old;
}

std::vector<int64_t> sampled(DecoderOnly& model, const Tokenizer& tokenizer) {
  Generator gen(11);
  const SamplingOptions options{.max_tokens = 8, .temperature = 1, .eos = -1};
  return generate(model, tokenizer.encode("the cat"), options, gen);
}

}  // namespace

TEST_CASE("checkpoint sides: a decoder-only checkpoint stores one tokenizer, the target's") {
  const TinyLm lm;
  const std::map<std::string, std::string> metadata = load_safetensors(lm.save("one")).metadata;
  CHECK(keys_with(metadata, "vocab.") == std::vector<std::string>{"vocab.target"});
  CHECK(keys_with(metadata, "tokenizer.source.").empty());
  // Every tokenizer entry is the target's, and they are exactly what the tokenizer itself writes.
  const std::map<std::string, std::string> own = lm.tokenizer.metadata("tokenizer.target");
  REQUIRE_FALSE(own.empty());
  CHECK(keys_with(metadata, "tokenizer.").size() == own.size());
  for (const auto& [key, value] : own) CHECK(metadata.at(key) == value);
}

TEST_CASE("checkpoint sides: an old decoder-only checkpoint, its tokenizer stored twice, loads and generates alike") {
  TinyLm lm;
  const std::string now = lm.save("now"), old = as_old_format(now, "old");
  REQUIRE(load_safetensors(old).metadata.count("vocab.source") == 1);
  REQUIRE(load_safetensors(old).metadata.size() > load_safetensors(now).metadata.size());
  LoadedDecoderOnly from_old = load_decoder_only_checkpoint(old), from_now = load_decoder_only_checkpoint(now);
  CHECK(from_old.info.target_tokenizer == lm.tokenizer);
  CHECK(from_now.info.target_tokenizer == lm.tokenizer);
  const std::vector<int64_t> expected = sampled(lm.model, lm.tokenizer);  // the model that was saved
  CHECK(sampled(*from_old.model, from_old.info.target_tokenizer) == expected);
  CHECK(sampled(*from_now.model, from_now.info.target_tokenizer) == expected);
  // Averaging old checkpoints writes the new format: the source twin is not copied.
  const std::string averaged = temp_path("averaged");
  average_checkpoints({old, old}, averaged);
  CHECK(keys_with(load_safetensors(averaged).metadata, "vocab.") == std::vector<std::string>{"vocab.target"});
  CHECK(keys_with(load_safetensors(averaged).metadata, "tokenizer.source.").empty());
}

TEST_CASE("checkpoint sides: absent_side_entry names a decoder-only model's source entries only") {
  CHECK(absent_side_entry(Architecture::DecoderOnly, "vocab.source"));
  CHECK(absent_side_entry(Architecture::DecoderOnly, "tokenizer.source.kind"));
  CHECK_FALSE(absent_side_entry(Architecture::DecoderOnly, "vocab.target"));
  CHECK_FALSE(absent_side_entry(Architecture::DecoderOnly, "tokenizer.target.kind"));
  CHECK_FALSE(absent_side_entry(Architecture::EncoderDecoder, "vocab.source"));
  CHECK_FALSE(absent_side_entry(Architecture::EncoderOnly, "vocab.source"));
}

TEST_CASE("checkpoint sides: an encoder-decoder stores both sides, an encoder-only model one vocabulary") {
  TransformerConfig config = TransformerConfig::tutorial(5, 6);
  config.d_model = 4, config.d_ff = 8, config.heads = 2, config.layers = 1, config.max_len = 16;
  CheckpointInfo info;
  info.config = config, info.source_tokenizer = Vocab::build({{"a"}}),
  info.target_tokenizer = Vocab::build({{"y", "z"}});
  const std::string translator = temp_path("translator");
  save_checkpoint(translator, EncoderDecoder(config, 1), {}, info);
  CHECK(keys_with(load_safetensors(translator).metadata, "vocab.") ==
        std::vector<std::string>{"vocab.source", "vocab.target"});
  const LoadedCheckpoint loaded = load_checkpoint(translator);
  CHECK(loaded.info.source_tokenizer == info.source_tokenizer);
  CHECK(loaded.info.target_tokenizer == info.target_tokenizer);

  EncoderOnlyConfig c;
  c.vocab = 5, c.d_model = 4, c.d_ff = 8, c.heads = 2, c.layers = 1, c.max_len = 8;
  const std::string classifier = temp_path("classifier");
  save_encoder_only_checkpoint(classifier, EncoderOnly(c, 1), {}, {c, Vocab::build({{"x"}}), {"no", "yes"}, {}});
  const std::map<std::string, std::string> metadata = load_safetensors(classifier).metadata;
  CHECK(keys_with(metadata, "vocab.") == std::vector<std::string>{"vocab.source"});
  CHECK(keys_with(metadata, "tokenizer.").empty());
  CHECK(load_encoder_only_checkpoint(classifier).info.vocab.size() == 5);
}

TEST_CASE("checkpoint sides: a read builds each tokenizer the model has exactly once") {
  TransformerConfig config = TransformerConfig::tutorial(5, 5);
  config.d_model = 4, config.d_ff = 8, config.heads = 2, config.layers = 1, config.max_len = 16;
  CheckpointInfo info;
  info.config = config, info.source_tokenizer = Vocab::build({{"a"}}), info.target_tokenizer = Vocab::build({{"z"}});
  const std::string translator = temp_path("count-translator");
  save_checkpoint(translator, EncoderDecoder(config, 1), {}, info);
  const std::string lm = as_old_format(TinyLm().save("count-lm"), "count-lm-old");
  EncoderOnlyConfig c;
  c.vocab = 5, c.d_model = 4, c.d_ff = 8, c.heads = 2, c.layers = 1, c.max_len = 8;
  const std::string classifier = temp_path("count-classifier");
  save_encoder_only_checkpoint(classifier, EncoderOnly(c, 1), {}, {c, Vocab::build({{"x"}}), {"no", "yes"}, {}});

  // Built while `read` runs: the counter's difference.
  auto built = [](const auto& read) {
    const int64_t before = checkpoint_tokenizers_built();
    read();
    return checkpoint_tokenizers_built() - before;
  };
  CHECK(built([&] { load_checkpoint(translator); }) == 2);  // source and target
  CHECK(built([&] { read_checkpoint(translator); }) == 2);
  CHECK(built([&] { load_decoder_only_checkpoint(lm); }) == 1);  // the target; the old source twin unread
  CHECK(built([&] { load_encoder_only_checkpoint(classifier); }) == 1);
  const CheckpointFile file = read_checkpoint_file(translator);
  CHECK(built([&] { load_checkpoint(file); }) == 0);  // a file already read builds nothing more
}
