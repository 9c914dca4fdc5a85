// LoRA as a setting of the block (config.h's LoraOptions): in the three architectures the built model
// holds exactly the adapters parameter_specs lists and the formula counts (a count worked out by
// hand), the adapters start as nothing (the model computes what it computed without them),
// freezing leaves only them to train, and the settings a model cannot take are refused by name.
#include <algorithm>
#include <string>
#include <vector>

#include "autograd/all.h"
#include "catch.h"
#include "transformer/model/decoder_only.h"
#include "transformer/model/encoder_decoder.h"
#include "transformer/model/masks.h"
#include "transformer/model/parameter_specs.h"

using namespace gradformer;

namespace lora_config_test {

std::string listed(const std::vector<ParameterSpec>& specs) {
  std::string out;
  for (const ParameterSpec& s : specs) out += message(s.name, " ", s.shape, "\n");
  return out;
}

int64_t numbers(const Module& m) {
  int64_t n = 0;
  for (const auto& [name, p] : m.named_parameters()) n += p.numel();
  return n;
}

// d 8, 4 heads, 2 key/value heads (d_k 2), d_ff 12, 2 layers, vocabulary 9, SwiGLU, no biases.
TransformerConfig small(Architecture arch, const LoraOptions& lora) {
  TransformerConfig c;
  c.arch = arch, c.src_vocab = c.tgt_vocab = 9;
  c.d_model = 8, c.heads = 4, c.d_ff = 12, c.layers = 2, c.max_len = 6, c.dropout = 0;
  c.norm = NormPlacement::Pre, c.activation = Activation::SwiGLU, c.positions = Positions::Rotary;
  c.block.normalization = Normalization::RMSNorm, c.block.bias = Bias::None, c.block.kv_heads = 2;
  c.block.lora = lora;
  return c;
}

LoraOptions lora(int64_t rank, const std::string& targets) {
  LoraOptions l;
  l.rank = rank, l.alpha = 2.0 * static_cast<double>(rank);
  return parse_lora_targets(targets, l);
}

}  // namespace lora_config_test

namespace lc = lora_config_test;

TEST_CASE("LoRA settings: the built models hold the adapters the specs list and the formulas count") {
  for (const std::string targets : {"q", "k,v", "q,k,v,o", "o,ffn", "q,k,v,o,ffn"}) {
    for (Bias bias : {Bias::All, Bias::None})
      for (Activation activation : {Activation::ReLU, Activation::SwiGLU}) {
        INFO(targets << " bias " << bias_name(bias) << " " << activation_name(activation));
        TransformerConfig lm = lc::small(Architecture::DecoderOnly, lc::lora(2, targets));
        lm.block.bias = bias, lm.activation = activation;
        const DecoderOnly decoder_only(lm, 1, skip_init);
        CHECK(lc::numbers(decoder_only) == decoder_only_parameter_count(lm));
        CHECK(lc::listed(parameter_specs(lm)) == lc::listed(decoder_only.parameter_specs()));
        TransformerConfig translator = lm;
        translator.arch = Architecture::EncoderDecoder;
        const EncoderDecoder encoder_decoder(translator, 1, skip_init);
        CHECK(lc::numbers(encoder_decoder) == parameter_count(translator));
        CHECK(lc::listed(parameter_specs(translator)) == lc::listed(encoder_decoder.parameter_specs()));
        EncoderOnlyConfig classifier;
        classifier.vocab = 10, classifier.d_model = 8, classifier.heads = 4, classifier.d_ff = 12;
        classifier.layers = 2, classifier.max_len = 6, classifier.classes = 3, classifier.activation = activation;
        classifier.block = lm.block;
        const EncoderOnly encoder_only(classifier, 1, skip_init);
        CHECK(lc::numbers(encoder_only) == parameter_count(classifier).total());
        CHECK(lc::listed(parameter_specs(classifier)) == lc::listed(encoder_only.parameter_specs()));
      }
  }
}

TEST_CASE("LoRA settings: one layer's adapters counted by hand") {
  // d 8, H 4, N 2, d_k 2, d_ff 12, SwiGLU, rank 2; an adapter beside in -> out holds 2 (in + out):
  //   W^Q 8 -> 8: 32   W^K, W^V 8 -> 4: 24 each   W^O 8 -> 8: 32   = 112 for an attention
  //   the feed-forward's 8 -> 12, 12 -> 8, 8 -> 12: 40 each = 120
  const TransformerConfig c = lc::small(Architecture::DecoderOnly, lc::lora(2, "q,k,v,o,ffn"));
  CHECK(layer_parameter_count(c.layer(), false).lora == 112 + 120);
  CHECK(layer_parameter_count(c.layer(), true).lora == 2 * 112 + 120);  // a decoder layer's cross-attention too
  CHECK(layer_parameter_count(lc::small(Architecture::DecoderOnly, lc::lora(2, "q,v")).layer(), false).lora == 32 + 24);
  const TransformerConfig without = lc::small(Architecture::DecoderOnly, {});
  CHECK(decoder_only_parameter_count(c) - decoder_only_parameter_count(without) == 2 * 232);
  // Their names, in one attention: W^O's beside out_proj, the others beside in_proj's rows.
  const DecoderOnly model(c, 1, skip_init);
  std::vector<std::string> adapters;
  for (const auto& [name, p] : model.named_parameters())
    if (is_lora_parameter(name) && name.rfind("decoder.layers.0.", 0) == 0) adapters.push_back(name.substr(17));
  CHECK(adapters == std::vector<std::string>{"self_attn.out_proj.lora.A", "self_attn.out_proj.lora.B",
                                             "self_attn.lora_q.A", "self_attn.lora_q.B", "self_attn.lora_k.A",
                                             "self_attn.lora_k.B", "self_attn.lora_v.A", "self_attn.lora_v.B",
                                             "linear1.lora.A", "linear1.lora.B", "linear2.lora.A", "linear2.lora.B",
                                             "linear3.lora.A", "linear3.lora.B"});
}

TEST_CASE("LoRA settings: a model drawn with adapters computes what its base computes, B zero and A drawn") {
  const TransformerConfig with = lc::small(Architecture::DecoderOnly, lc::lora(2, "q,k,v,o,ffn"));
  TransformerConfig base_config = with;
  base_config.block.lora = {};
  const DecoderOnly model(with, 7);
  const DecoderOnly base(base_config, 7, skip_init);
  StateDict weights;
  for (const auto& [name, p] : model.named_parameters()) {
    if (!is_lora_parameter(name)) {
      weights[name] = p.value();
      continue;
    }
    const std::vector<float> v = p.value().to_vector<float>();
    const bool any = std::any_of(v.begin(), v.end(), [](float x) { return x != 0; });
    CHECK(any == (name.back() == 'A'));  // A drawn, B zero
  }
  const_cast<DecoderOnly&>(base).load_state_dict(weights);
  const Tensor ids = from_vector(std::vector<int64_t>{1, 4, 2, 8, 3}, {1, 5});
  const Tensor mask = causal_mask(5).unsqueeze(0);
  CHECK(model.forward(ids, mask).value().to_vector<float>() == base.forward(ids, mask).value().to_vector<float>());
}

TEST_CASE("LoRA settings: freezing leaves the adapters alone to train, and backward reaches only them") {
  const TransformerConfig c = lc::small(Architecture::DecoderOnly, lc::lora(2, "q,v"));
  DecoderOnly model(c, 3);
  const int64_t trained = freeze_all_but_lora(model);
  CHECK(trained == c.layers * layer_parameter_count(c.layer(), false).lora);
  const Tensor ids = from_vector(std::vector<int64_t>{1, 4, 2, 8, 3}, {1, 5});
  sum(model.forward(ids, causal_mask(5).unsqueeze(0))).backward();
  for (const auto& [name, p] : model.named_parameters()) {
    INFO(name);
    CHECK(p.requires_grad() == is_lora_parameter(name));
    CHECK(p.grad().defined() == is_lora_parameter(name));
  }
}

TEST_CASE("LoRA settings: a rank wider than a projection, no target, a bad alpha or target list refused by name") {
  // W^K and W^V are 8 -> 4 (2 key/value heads of width 2): rank 5 fits W^Q but not them
  CHECK_NOTHROW(lc::small(Architecture::DecoderOnly, lc::lora(5, "q,o")).validate());
  CHECK_THROWS_MSG(lc::small(Architecture::DecoderOnly, lc::lora(5, "q,k")).validate(), ValueError,
                   "TransformerConfig: lora rank 5 is more than the narrower side of a 8 -> 4 projection it would "
                   "sit beside (targets q,k)");
  CHECK_THROWS_MSG(lc::small(Architecture::DecoderOnly, lc::lora(-1, "q")).validate(), ValueError,
                   "lora rank must be 0 (none) or positive, got -1");
  LoraOptions zero_alpha = lc::lora(2, "q");
  zero_alpha.alpha = 0;
  CHECK_THROWS_MSG(lc::small(Architecture::DecoderOnly, zero_alpha).validate(), ValueError,
                   "lora alpha must be in (0, 1e6], got 0");
  LoraOptions none = lc::lora(2, "q");
  none.q = false, none.embed = true;  // the embedding trained is no adapter
  CHECK_THROWS_MSG(lc::small(Architecture::DecoderOnly, none).validate(), ValueError,
                   "lora rank 2 with no projection to sit beside (q, k, v, o, ffn)");
  CHECK_THROWS_MSG(parse_lora_targets("q,q"), ValueError, "'q' in 'q,q' is named twice");
  CHECK_THROWS_MSG(parse_lora_targets(""), ValueError, "'' in '' is not one of q, k, v, o, ffn, embed");
  CHECK_THROWS_MSG(parse_lora_targets("q,,v"), ValueError, "'' in 'q,,v' is not one of");
  CHECK(lora_targets_name(parse_lora_targets("ffn,v,q")) == "q,v,ffn");
  CHECK(lora_targets_name(parse_lora_targets("embed,o")) == "o,embed");
}
