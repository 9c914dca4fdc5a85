// LoRA in checkpoints: the configuration's adapters in the metadata and back, a checkpoint with
// adapters beside its weights read as it was written, and merge_lora folding them in: the merged
// model without adapters computes the same logits as the model with them.
#include <filesystem>
#include <string>

#include "autograd/helpers.h"
#include "nn/safetensors.h"
#include "transformer/model/decoder_only.h"
#include "transformer/model/encoder_decoder.h"
#include "transformer/model/masks.h"
#include "transformer/store/average.h"
#include "transformer/store/checkpoint.h"
#include "transformer/store/merge_lora.h"

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

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("gradformer-test-lora-" + name + ".safetensors")).string();
}

// Every adapter's A and B drawn (B away from its zero start), as after some fine-tuning.
void draw_adapters(const Module& model) {
  uint64_t seed = 11;
  for (const auto& [name, p] : model.named_parameters())
    if (is_lora_parameter(name)) Tensor(p.value()).copy_(test::rnd(p.shape(), seed++, -0.5, 0.5));
}

// A vocabulary of exactly `size` ids (the four specials and size - 4 words).
Vocab vocab_of(int64_t size) {
  std::vector<std::string> words;
  for (int64_t i = 4; i < size; ++i) words.push_back("w" + std::to_string(i));
  return Vocab::build({words});
}

std::vector<double> logits(const DecoderOnly& model) {
  const Tensor ids = from_vector(std::vector<int64_t>{1, 4, 2, 8, 3, 7}, {1, 6});
  return model.forward(ids, causal_mask(6).unsqueeze(0)).value().to(DType::Float64).to_vector<double>();
}

}  // namespace lora_checkpoint_test

namespace lct = lora_checkpoint_test;

TEST_CASE("merge_lora: the merged model computes the adapted model's logits, in float64 to rounding") {
  for (const std::string targets : {"q,k,v,o,ffn", "k", "v,o", "q,ffn"}) {
    INFO(targets);
    TransformerConfig c = lct::small(targets);
    c.dtype = DType::Float64, c.activation = Activation::SwiGLU, c.block.bias = Bias::QKV;
    const DecoderOnly adapted(c, 4);
    lct::draw_adapters(adapted);
    TransformerConfig plain = c;
    plain.block.lora = {};
    DecoderOnly merged(plain, 4, skip_init);
    merged.load_state_dict(merge_lora(adapted.state_dict(), c.layer()));
    const std::vector<double> a = lct::logits(adapted), b = lct::logits(merged);
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) CHECK(a[i] == Approx(b[i]).margin(1e-12));
    // and the adapters did change the model: its logits are not the base's
    DecoderOnly base(plain, 4, skip_init);
    StateDict weights = adapted.state_dict();
    for (auto it = weights.begin(); it != weights.end();) it = is_lora_parameter(it->first) ? weights.erase(it) : ++it;
    base.load_state_dict(weights);
    CHECK(lct::logits(base) != a);
  }
}

TEST_CASE("merge_lora: an encoder-decoder's cross-attention adapters fold in too") {
  TransformerConfig c = lct::small("q,k,v,o");
  c.arch = Architecture::EncoderDecoder, c.dtype = DType::Float64;
  const EncoderDecoder adapted(c, 5);
  lct::draw_adapters(adapted);
  TransformerConfig plain = c;
  plain.block.lora = {};
  EncoderDecoder merged(plain, 5, skip_init);
  merged.load_state_dict(merge_lora(adapted.state_dict(), c.layer()));
  const Tensor src = from_vector(std::vector<int64_t>{1, 5, 6, 2}, {1, 4});
  const Tensor tgt = from_vector(std::vector<int64_t>{1, 7, 3}, {1, 3});
  const Tensor src_mask = padding_mask(src, 0), tgt_mask = target_mask(tgt, 0);
  const std::vector<double> a = adapted.forward(src, tgt, src_mask, tgt_mask).value().to_vector<double>(),
                            b = merged.forward(src, tgt, src_mask, tgt_mask).value().to_vector<double>();
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i] == Approx(b[i]).margin(1e-12));
}

TEST_CASE("merge-lora on a checkpoint: adapters gone, the logits kept in float32, the chat template kept") {
  const TransformerConfig c = lct::small("q,k,v,o,ffn");
  const DecoderOnly adapted(c, 6);
  lct::draw_adapters(adapted);
  CheckpointInfo info;
  info.config = c, info.target_tokenizer = lct::vocab_of(c.tgt_vocab);
  info.state = {{"chat.template", "chatml"}, {"train.step", "7"}};
  const std::string path = lct::temp_path("adapted"), out = lct::temp_path("merged");
  save_checkpoint(path, adapted, c, {}, info);
  const LoadedDecoderOnly reread = load_decoder_only_checkpoint(path);  // adapters beside the weights, read back
  CHECK(reread.model->config().block.lora == c.block.lora);
  CHECK(lct::logits(*reread.model) == lct::logits(adapted));
  merge_lora_checkpoint(path, out);
  const LoadedDecoderOnly merged = load_decoder_only_checkpoint(out);
  CHECK(merged.model->config().block.lora == LoraOptions{});
  CHECK(merged.info.state == std::map<std::string, std::string>{{"chat.template", "chatml"}});
  for (const auto& [name, p] : merged.model->named_parameters()) CHECK_FALSE(is_lora_parameter(name));
  const std::vector<double> a = lct::logits(adapted), b = lct::logits(*merged.model);
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i] == Approx(b[i]).margin(1e-5));
  CHECK_THROWS_MSG(merge_lora_checkpoint(out, lct::temp_path("twice")), CheckpointError,
                   "merge-lora: " + out + " has no LoRA adapters to merge (no config.lora.rank)");
  CHECK_THROWS_MSG(merge_lora_checkpoint(path, path), ValueError,
                   "merge-lora: the output " + path + " is the checkpoint");
}

TEST_CASE("LoRA settings: the checkpoint's metadata carries them, and nothing when there are none") {
  const TransformerConfig c = lora_checkpoint_test::small("k,o,ffn");
  std::map<std::string, std::string> m = config_to_metadata(c);
  CHECK(m.at("config.lora.rank") == "3");
  CHECK(m.at("config.lora.alpha") == "6");
  CHECK(m.at("config.lora.targets") == "k,o,ffn");
  CHECK(config_from_metadata(m, "x.safetensors").block.lora == c.block.lora);
  CHECK(config_to_metadata(TransformerConfig::tutorial(9, 9)).count("config.lora.rank") == 0);
  m["config.lora.targets"] = "k,w";
  CHECK_THROWS_MSG(
      config_from_metadata(m, "x.safetensors"), CheckpointError,
      "x.safetensors: config.lora.targets: LoRA targets: 'w' in 'k,w' is not one of q, k, v, o, ffn, embed");
  m.erase("config.lora.targets");
  CHECK_THROWS_MSG(config_from_metadata(m, "x.safetensors"), CheckpointError, "config.lora.targets");
}

TEST_CASE("a checkpoint whose chat template is unknown is refused when read, naming the file and the entry") {
  const TransformerConfig c = lct::small("q");
  const DecoderOnly model(c, 6);
  CheckpointInfo info;
  info.config = c, info.target_tokenizer = lct::vocab_of(c.tgt_vocab), info.state = {{"chat.template", "zephyr"}};
  const std::string path = lct::temp_path("zephyr");
  save_checkpoint(path, model, c, {}, info);
  CHECK_THROWS_MSG(load_decoder_only_checkpoint(path), CheckpointError,
                   path + ": state.chat.template: chat template: unknown zephyr (chatml, llama3)");
}

TEST_CASE("average keeps a fine-tuned model's chat template, as merge-lora does") {
  const TransformerConfig c = lct::small("q");
  CheckpointInfo info;
  info.config = c, info.target_tokenizer = lct::vocab_of(c.tgt_vocab), info.state = {{"chat.template", "llama3"}};
  const std::string a = lct::temp_path("avg-a"), b = lct::temp_path("avg-b"), out = lct::temp_path("avg-out");
  save_checkpoint(a, DecoderOnly(c, 1), c, {}, info);
  save_checkpoint(b, DecoderOnly(c, 2), c, {}, info);
  average_checkpoints({a, b}, out);
  CHECK(load_decoder_only_checkpoint(out).info.state.at("chat.template") == "llama3");
}
