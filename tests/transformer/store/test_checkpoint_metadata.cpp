// Checkpoints whose metadata asks for a model far too large to build. Found by fuzzing
// (tests/fuzz/fuzz_checkpoint_meta):
// load_checkpoint validated the configuration, which accepted any positive size, and then built
// the model, which overflowed int64 (max_len * d_model in sinusoidal_encoding), let a
// std::length_error escape, asked for hundreds of gigabytes, or built 2^55 layers.
//
// TransformerConfig::validate now bounds every size before anything is built; each case asks for a
// CheckpointError, whatever the bound's exact wording. The reproducers also replay as the fuzz
// harness's corpus (tests/fuzz/corpus/checkpoint_meta).
#include <filesystem>
#include <map>
#include <string>

#include "../train/training_helpers.h"
#include "catch.h"
#include "transformer/data/hub_tokenizer.h"
#include "transformer/model/decoder_only.h"
#include "transformer/store/checkpoint.h"

using namespace gradformer;

namespace {

// A valid tiny checkpoint with one metadata entry replaced, written to a file of its own.
std::string checkpoint_with(const std::string& key, const std::string& value, const std::string& name) {
  TransformerConfig config;
  config.src_vocab = 5, config.tgt_vocab = 5, config.d_model = 4, config.d_ff = 8, config.heads = 2, config.layers = 1;
  config.max_len = 16, config.dropout = 0.0;
  const EncoderDecoder model(config, 1);
  CheckpointInfo info;
  info.config = config;
  info.source_tokenizer = Vocab::build({{"a"}});
  info.target_tokenizer = Vocab::build({{"z"}});
  const std::string path =
      (std::filesystem::temp_directory_path() / ("gradformer-test-" + name + ".safetensors")).string();
  save_checkpoint(path, model, {}, info);
  SafetensorsFile file = load_safetensors(path);
  file.metadata.at(key) = value;
  save_safetensors(path, file.tensors, file.metadata);
  return path;
}

}  // namespace

TEST_CASE("checkpoint: config.max_len 2^63 - 1 is a CheckpointError, not an overflow", "[validate-bounds]") {
  CHECK_THROWS_AS(load_checkpoint(checkpoint_with("config.max_len", "9223372036854775807", "max-len-max")),
                  CheckpointError);
}

TEST_CASE("checkpoint: config.max_len 2^61 - 1 is a CheckpointError, not a std::length_error", "[validate-bounds]") {
  CHECK_THROWS_AS(load_checkpoint(checkpoint_with("config.max_len", "2305843009213693951", "max-len-2e61")),
                  CheckpointError);
}

TEST_CASE("checkpoint: config.d_ff 2^35 is a CheckpointError before any allocation", "[validate-bounds]") {
  CHECK_THROWS_AS(load_checkpoint(checkpoint_with("config.d_ff", "34359738368", "d-ff-2e35")), CheckpointError);
}

TEST_CASE("checkpoint: config.layers 2^55 is a CheckpointError before any layer is built", "[validate-bounds]") {
  CHECK_THROWS_AS(load_checkpoint(checkpoint_with("config.layers", "36028797018963968", "layers-2e55")),
                  CheckpointError);
}

// ---- the tensors against the configuration, before anything is built --------------------------
//
// A hostile tester's 84 KB checkpoint whose metadata said config.d_model 8192 made translate
// allocate 3.1 GB and take 8 s (6.2 GB and 14 s with config.dtype float64; generate and classify
// 1 to 1.6 GB) before refusing it: the model was built from the configuration, then the tensors
// were found not to fit it. read_checkpoint_file now checks every tensor's name, shape and dtype
// against what the configuration implies, and it never builds a model: a refusal there is a
// refusal before any allocation. The same files replay in tests/fuzz/corpus/checkpoint.

namespace {

Vocab words(std::initializer_list<const char*> tokens) {
  std::vector<std::string> sentence(tokens.begin(), tokens.end());
  return Vocab::build({sentence});
}

// A valid tiny checkpoint of `arch` (d_model 4, d_ff 8, 2 heads, 1 layer, 5-token vocabularies;
// the encoder-only one a classifier of 2 classes) with metadata entries replaced.
std::string crafted(const test::TempDir& dir, Architecture arch, const std::map<std::string, std::string>& edits,
                    const std::string& name) {
  const std::string path = dir / (name + ".safetensors");
  if (arch == Architecture::EncoderOnly) {
    EncoderOnlyConfig c;
    c.vocab = 5, c.d_model = 4, c.d_ff = 8, c.heads = 2, c.layers = 1, c.max_len = 16, c.classes = 2;
    save_encoder_only_checkpoint(path, EncoderOnly(c, 1), {}, {c, words({"a"}), {"no", "yes"}, {}});
  } else {
    TransformerConfig c;
    c.arch = arch, c.src_vocab = 5, c.tgt_vocab = 5, c.d_model = 4, c.d_ff = 8, c.heads = 2, c.layers = 1;
    c.max_len = 16, c.dropout = 0.0;
    const Vocab source = words({"a"}), target = arch == Architecture::EncoderDecoder ? words({"z"}) : source;
    if (arch == Architecture::EncoderDecoder)
      save_checkpoint(path, EncoderDecoder(c, 1), {}, {c, source, target, {}});
    else
      save_checkpoint(path, DecoderOnly(c, 1), c, {}, {c, source, target, {}});
  }
  SafetensorsFile file = load_safetensors(path);
  for (const auto& [key, value] : edits) file.metadata[key] = value;
  save_safetensors(path, file.tensors, file.metadata);
  return path;
}

}  // namespace

TEST_CASE("checkpoint: config.d_model 8192 over tensors of width 4 is refused from the header, naming the tensor",
          "[tensors-fit]") {
  const test::TempDir dir("checkpoint-fit");
  const std::string path = crafted(dir, Architecture::EncoderDecoder, {{"config.d_model", "8192"}}, "d-model-8192");
  const std::string expected =
      path +
      ": the tensors do not fit the stored configuration:\n"
      "  mismatched: src_embed.weight is [5, 8192] float32 by the configuration, [5, 4] float32 in the file\n"
      "  mismatched: tgt_embed.weight is [5, 8192] float32 by the configuration, [5, 4] float32 in the file\n";
  // The reader, which builds no model, refuses it; so does every loader, with its message.
  CHECK(test::error_message<CheckpointError>([&] { read_checkpoint_file(path); }).rfind(expected, 0) == 0);
  CHECK(test::error_message<CheckpointError>([&] { load_checkpoint(path); }).rfind(expected, 0) == 0);
  CHECK(test::error_message<CheckpointError>([&] { read_checkpoint(path); }).rfind(expected, 0) == 0);
  // The first ten problems, then a count: a message of lines, not of megabytes.
  CHECK(test::error_message<CheckpointError>([&] { load_checkpoint(path); }).find("\n  ... and ") != std::string::npos);
}

TEST_CASE("checkpoint: config.dtype float64 over float32 tensors is refused naming both dtypes", "[tensors-fit]") {
  const test::TempDir dir("checkpoint-fit");
  const std::string path = crafted(dir, Architecture::EncoderDecoder, {{"config.dtype", "float64"}}, "dtype-float64");
  CHECK_THROWS_MSG(read_checkpoint_file(path), CheckpointError,
                   path +
                       ": the tensors do not fit the stored configuration:\n"
                       "  mismatched: src_embed.weight is [5, 4] float64 by the configuration, [5, 4] float32 in the "
                       "file\n");
  const std::string both = crafted(dir, Architecture::EncoderDecoder,
                                   {{"config.d_model", "8192"}, {"config.dtype", "float64"}}, "both-8192");
  CHECK_THROWS_MSG(
      load_checkpoint(both), CheckpointError,
      "mismatched: src_embed.weight is [5, 8192] float64 by the configuration, [5, 4] float32 in the file");
}

TEST_CASE("checkpoint: a decoder-only and an encoder-only checkpoint claiming d_model 8192 are refused alike",
          "[tensors-fit]") {
  const test::TempDir dir("checkpoint-fit");
  const std::string lm = crafted(dir, Architecture::DecoderOnly, {{"config.d_model", "8192"}}, "lm-8192");
  CHECK_THROWS_MSG(load_decoder_only_checkpoint(lm), CheckpointError,
                   lm + ": the tensors do not fit the stored configuration:\n"
                        "  mismatched: embed.weight is [5, 8192] float32 by the configuration, [5, 4] float32 in the "
                        "file\n");
  const std::string classifier =
      crafted(dir, Architecture::EncoderOnly, {{"config.d_model", "8192"}}, "classifier-8192");
  CHECK_THROWS_MSG(load_encoder_only_checkpoint(classifier, "classify"), CheckpointError,
                   classifier +
                       ": the tensors do not fit the stored configuration:\n"
                       "  mismatched: tok_embed.weight is [5, 8192] float32 by the configuration, [5, 4] float32 in "
                       "the file\n");
  // The classifier's own tensors are checked too: one class more than the file's classifier has.
  const std::string classes =
      crafted(dir, Architecture::EncoderOnly, {{"config.classes", "3"}, {"labels", "no\nyes\nmaybe\n"}}, "classes-3");
  CHECK_THROWS_MSG(read_checkpoint_file(classes), CheckpointError,
                   "  mismatched: classifier.weight is [3, 4] float32 by the configuration, [2, 4] float32 in the "
                   "file\n  mismatched: classifier.bias is [3] float32 by the configuration, [2] float32 in the file");
}

TEST_CASE("checkpoint: missing and unexpected tensors are named before anything is built", "[tensors-fit]") {
  const test::TempDir dir("checkpoint-fit");
  const std::string path = crafted(dir, Architecture::DecoderOnly, {}, "lm-valid");
  SafetensorsFile file = load_safetensors(path);
  file.tensors.erase("decoder.layers.0.norm2.bias");
  file.tensors.emplace("decoder.layers.7.norm2.bias", zeros({4}));
  save_safetensors(path, file.tensors, file.metadata);
  CHECK_THROWS_MSG(read_checkpoint_file(path), CheckpointError,
                   path +
                       ": the tensors do not fit the stored configuration:\n"
                       "  missing: decoder.layers.0.norm2.bias [4]\n"
                       "  unexpected: decoder.layers.7.norm2.bias [4]");
  // A valid file of each kind reads, and loads with its own loader.
  CHECK(read_checkpoint_file(crafted(dir, Architecture::EncoderDecoder, {}, "ed-valid")).arch ==
        Architecture::EncoderDecoder);
  CHECK(load_decoder_only_checkpoint(crafted(dir, Architecture::DecoderOnly, {}, "lm-valid")).model->config().d_model ==
        4);
  CHECK(load_encoder_only_checkpoint(crafted(dir, Architecture::EncoderOnly, {}, "eo-valid")).info.labels ==
        std::vector<std::string>{"no", "yes"});
}

TEST_CASE("checkpoint: an encoder-only config.max_len of 2^40 is a CheckpointError, not a 2^43-number table",
          "[validate-bounds]") {
  const test::TempDir dir("checkpoint-fit");
  const std::string path = crafted(dir, Architecture::EncoderOnly, {{"config.max_len", "1099511627776"}}, "eo-max-len");
  CHECK_THROWS_MSG(load_encoder_only_checkpoint(path), CheckpointError,
                   path + ": the stored configuration is invalid: EncoderOnlyConfig: max_len must be at most 1048576");
}

TEST_CASE(
    "checkpoint: GPT-2's configuration (gelu-tanh, no sqrt(d) on the embedding, its epsilon) round-trips; "
    "a model without it writes none of the new entries") {
  TransformerConfig c = decoder_only_config(7);
  c.d_model = 8, c.d_ff = 16, c.heads = 2, c.layers = 1, c.max_len = 12, c.positions = Positions::Learned;
  const std::map<std::string, std::string> plain = config_to_metadata(c);
  CHECK(plain.count("config.scale_embedding") == 0);
  CHECK(plain.count("config.norm_eps") == 0);
  CHECK(config_from_metadata(plain, "plain").scale_embedding);
  c.activation = Activation::GELUTanh, c.scale_embedding = false, c.norm_eps = 1e-6;
  const std::map<std::string, std::string> gpt2 = config_to_metadata(c);
  CHECK(gpt2.at("config.activation") == "gelu-tanh");
  CHECK(gpt2.at("config.scale_embedding") == "false");
  const TransformerConfig back = config_from_metadata(gpt2, "gpt2");
  CHECK(back.activation == Activation::GELUTanh);
  CHECK_FALSE(back.scale_embedding);
  CHECK(back.norm_eps == 1e-6);
  std::map<std::string, std::string> bad = gpt2;
  bad["config.scale_embedding"] = "no";
  CHECK_THROWS_MSG(config_from_metadata(bad, "f"), CheckpointError,
                   "f: config.scale_embedding must be true or false, got 'no'");
  bad = gpt2, bad["config.activation"] = "swish";
  CHECK_THROWS_MSG(config_from_metadata(bad, "f"), CheckpointError,
                   "f: config.activation must be one of relu, gelu, gelu-tanh, swiglu, got 'swish'");
  bad = gpt2, bad["config.norm_eps"] = "-1";
  CHECK_THROWS_MSG(config_from_metadata(bad, "f"), CheckpointError, "norm_eps must be in (0, 1], got -1");
}

TEST_CASE("checkpoint: a decoder-only model with GPT-2's tokenizer keeps its ids exactly, with no vocab.* entry") {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.emplace_back(1, static_cast<char>(255 - b));  // not byte order
  tokens.push_back("ab");
  const Tokenizer gpt2 = Tokenizer::gpt2(BytePairEncoding(tokens, {{"a", "b"}}));
  TransformerConfig c = decoder_only_config(gpt2.size());
  c.d_model = 8, c.d_ff = 16, c.heads = 2, c.layers = 1, c.max_len = 12, c.positions = Positions::Learned;
  c.tie_embeddings = true, c.scale_embedding = false, c.activation = Activation::GELUTanh;
  const DecoderOnly model(c, 2);
  CheckpointInfo info;
  info.config = c, info.source_tokenizer = gpt2, info.target_tokenizer = gpt2;
  const std::string path =
      (std::filesystem::temp_directory_path() / "gradformer-test-gpt2-tokenizer.safetensors").string();
  save_checkpoint(path, model, c, {}, info);
  const SafetensorsFile file = load_safetensors(path);
  CHECK(file.metadata.count("vocab.target") == 0);
  CHECK(file.metadata.at("tokenizer.target.kind") == "gpt2");
  CHECK(file.metadata.count("tokenizer.source.kind") == 0);  // one side: a source given is not written
  const LoadedDecoderOnly loaded = load_decoder_only_checkpoint(path);
  CHECK(loaded.info.target_tokenizer == gpt2);
  CHECK(loaded.info.target_tokenizer.encode("xab") == std::vector<int64_t>{255 - 'x', 256});
  CHECK_FALSE(loaded.info.config.scale_embedding);
  CHECK(loaded.info.config.activation == Activation::GELUTanh);
}

TEST_CASE("checkpoint: a decoder-only model with a hub tokenizer keeps its tokenizer.json, with no vocab.* entry") {
  // A tokenizer.json of four ids: h 0, i 1, hi 2 (the merge "h i"), the added <|endoftext|> 3.
  const std::string json =
      R"({"version":"1.0","added_tokens":[{"id":3,"content":"<|endoftext|>","single_word":false,"lstrip":false,)"
      R"("rstrip":false,"normalized":false,"special":true}],"normalizer":null,"pre_tokenizer":{"type":"ByteLevel",)"
      R"("add_prefix_space":false,"use_regex":true},"post_processor":null,"decoder":{"type":"ByteLevel"},)"
      R"("model":{"type":"BPE","dropout":null,"unk_token":null,"vocab":{"h":0,"i":1,"hi":2},"merges":["h i"]}})";
  const Tokenizer tokenizer = Tokenizer::hub(HubTokenizer::parse(json, "tokenizer.json"));
  TransformerConfig c = decoder_only_config(tokenizer.size());
  c.d_model = 8, c.d_ff = 16, c.heads = 2, c.layers = 1, c.max_len = 12, c.positions = Positions::Learned;
  const DecoderOnly model(c, 3);
  CheckpointInfo info;
  info.config = c, info.target_tokenizer = tokenizer;
  const std::string path = (std::filesystem::temp_directory_path() / "gradformer-test-load-hub.safetensors").string();
  save_checkpoint(path, model, c, {}, info);
  const CheckpointFile header = read_checkpoint_header(path);
  CHECK(header.metadata.count("vocab.target") == 0);
  CHECK(header.metadata.at("tokenizer.target.kind") == "hub");
  const LoadedDecoderOnly loaded = load_decoder_only_checkpoint(path);
  CHECK(loaded.info.target_tokenizer == tokenizer);
  CHECK(loaded.info.target_tokenizer.encode("hi<|endoftext|>") == std::vector<int64_t>{2, 3});
  CHECK(loaded.info.target_tokenizer.special("<|endoftext|>") == 3);
  std::filesystem::remove(path);
}
