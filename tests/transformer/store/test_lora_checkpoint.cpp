// LoRA in checkpoints: the configuration's adapters in the metadata and back, a checkpoint with
// adapters beside its weights read as it was written, and merge_lora folding them in.
#include <string>

#include "catch.h"
#include "transformer/store/checkpoint.h"

using namespace gradformer;

namespace lora_checkpoint_test {

// d 8, 4 heads, 2 key/value heads, d_ff 12, 2 layers, vocabulary 9, with adapters of rank 3.
TransformerConfig small(const std::string& targets) {
  TransformerConfig c;
  c.arch = Architecture::DecoderOnly, c.src_vocab = c.tgt_vocab = 9;
  c.d_model = 8, c.heads = 4, c.d_ff = 12, c.layers = 2, c.max_len = 6, c.dropout = 0, c.norm = NormPlacement::Pre;
  c.block.kv_heads = 2, c.block.lora.rank = 3, c.block.lora.alpha = 6;
  c.block.lora = parse_lora_targets(targets, c.block.lora);
  return c;
}

}  // namespace lora_checkpoint_test

TEST_CASE("LoRA settings: the checkpoint's metadata carries them, and nothing when there are none") {
  const TransformerConfig c = lora_checkpoint_test::small("k,o,ffn");
  std::map<std::string, std::string> m = config_to_metadata(c);
  CHECK(m.at("config.lora.rank") == "3");
  CHECK(m.at("config.lora.alpha") == "6");
  CHECK(m.at("config.lora.targets") == "k,o,ffn");
  CHECK(config_from_metadata(m, "x.safetensors").block.lora == c.block.lora);
  CHECK(config_to_metadata(TransformerConfig::tutorial(9, 9)).count("config.lora.rank") == 0);
  m["config.lora.targets"] = "k,w";
  CHECK_THROWS_MSG(config_from_metadata(m, "x.safetensors"), CheckpointError,
                   "x.safetensors: config.lora.targets: LoRA targets: 'w' in 'k,w' is not one of q, k, v, o, ffn");
  m.erase("config.lora.targets");
  CHECK_THROWS_MSG(config_from_metadata(m, "x.safetensors"), CheckpointError, "config.lora.targets");
}

