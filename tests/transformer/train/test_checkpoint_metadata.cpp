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

#include "catch.h"
#include "transformer/train/checkpoint.h"

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
  info.source_vocab = Vocab::build({{"a"}});
  info.target_vocab = Vocab::build({{"z"}});
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
