// Parameter counts and lists with Llama's settings: for every combination of the norm, the
// activation, the biases, the key/value heads, the head width and the positions, in the three
// architectures, the built model holds exactly as many numbers as the formula says
// (decoder_only_parameter_count, parameter_count) and exactly the parameters, by name and shape,
// that parameter_specs lists from the configuration alone. Spot values worked out by hand.
#include <string>
#include <vector>

#include "catch.h"
#include "transformer/model/decoder_only.h"
#include "transformer/model/encoder_decoder.h"
#include "transformer/model/parameter_specs.h"

using namespace gradformer;

namespace llama_counts_test {

std::string listed(const std::vector<ParameterSpec>& specs) {
  std::string out;
  for (const ParameterSpec& s : specs) out += message(s.name, " ", s.shape, " ", s.dtype, "\n");
  return out;
}

int64_t numbers(const Module& m) {
  int64_t n = 0;
  for (const auto& [name, p] : m.named_parameters()) n += p.numel();
  return n;
}

struct Settings {
  Normalization normalization;
  Activation activation;
  Bias bias;
  int64_t kv_heads, head_dim;
  Positions positions;
  int index;  // which combination: picks post- or pre-LN and tied or not, alternately
  std::string describe() const {
    return message(normalization_name(normalization), " ", activation_name(activation), " bias ", bias_name(bias),
                   " kv_heads ", kv_heads, " head_dim ", head_dim, " ", positions_name(positions), " ",
                   index % 2 ? "pre" : "post", index % 4 >= 2 ? " tied" : "");
  }
};

std::vector<Settings> every_combination() {
  std::vector<Settings> all;
  for (Normalization n : {Normalization::LayerNorm, Normalization::RMSNorm})
    for (Activation a : {Activation::ReLU, Activation::SwiGLU})
      for (Bias b : {Bias::All, Bias::None, Bias::Attention, Bias::QKV})
        for (int64_t kv : {0, 2, 1})
          for (int64_t hd : {0, 6})
            for (Positions p : {Positions::Rotary, Positions::Learned})
              all.push_back({n, a, b, kv, hd, p, static_cast<int>(all.size())});
  return all;
}

// d 8, 4 heads (d_k 2 unless head_dim), d_ff 12, 2 layers, vocabularies 9 (and 11).
TransformerConfig transformer_config(const Settings& s, Architecture arch) {
  TransformerConfig c;
  c.arch = arch, c.src_vocab = 9;
  c.tie_embeddings = s.index % 4 >= 2;
  c.tgt_vocab = arch == Architecture::EncoderDecoder && !c.tie_embeddings ? 11 : 9;
  c.d_model = 8, c.heads = 4, c.d_ff = 12, c.layers = 2, c.max_len = 6, c.dropout = 0;
  c.norm = s.index % 2 ? NormPlacement::Pre : NormPlacement::Post;
  c.activation = s.activation, c.positions = s.positions;
  c.block.normalization = s.normalization, c.block.bias = s.bias, c.block.kv_heads = s.kv_heads;
  c.block.head_dim = s.head_dim;
  return c;
}

EncoderOnlyConfig encoder_only_config(const Settings& s) {
  EncoderOnlyConfig c;
  c.vocab = 10, c.d_model = 8, c.heads = 4, c.d_ff = 12, c.layers = 2, c.max_len = 6, c.classes = 3, c.dropout = 0;
  c.norm = s.index % 2 ? NormPlacement::Pre : NormPlacement::Post;
  c.tie_embeddings = s.index % 4 >= 2;
  c.activation = s.activation, c.positions = s.positions;
  c.block.normalization = s.normalization, c.block.bias = s.bias, c.block.kv_heads = s.kv_heads;
  c.block.head_dim = s.head_dim;
  return c;
}

}  // namespace llama_counts_test

using llama_counts_test::listed;
using llama_counts_test::numbers;

TEST_CASE("Llama's settings: every combination's built models hold what the formulas count and the specs list") {
  const std::vector<llama_counts_test::Settings> all = llama_counts_test::every_combination();
  REQUIRE(all.size() == 192);
  for (const llama_counts_test::Settings& s : all) {
    INFO(s.describe());
    const TransformerConfig lm = llama_counts_test::transformer_config(s, Architecture::DecoderOnly);
    const DecoderOnly decoder_only(lm, 1, skip_init);
    CHECK(numbers(decoder_only) == decoder_only_parameter_count(lm));
    CHECK(listed(parameter_specs(lm)) == listed(decoder_only.parameter_specs()));
    const TransformerConfig translator = llama_counts_test::transformer_config(s, Architecture::EncoderDecoder);
    const EncoderDecoder encoder_decoder(translator, 1, skip_init);
    CHECK(numbers(encoder_decoder) == parameter_count(translator));
    CHECK(listed(parameter_specs(translator)) == listed(encoder_decoder.parameter_specs()));
    const EncoderOnlyConfig classifier = llama_counts_test::encoder_only_config(s);
    const EncoderOnly encoder_only(classifier, 1, skip_init);
    CHECK(numbers(encoder_only) == parameter_count(classifier).total());
    CHECK(listed(parameter_specs(classifier)) == listed(encoder_only.parameter_specs()));
  }
}

TEST_CASE("Llama's settings: a decoder-only model's count and parameters, worked out by hand") {
  // llama_config at V 9, d 8, 4 heads, 2 key/value heads (d_k 2), d_ff 12, 2 layers, untied:
  //   embedding 9 x 8 = 72
  //   a layer: in_proj (4 + 2 x 2) x 2 = 16 rows x 8 = 128, W^O 8 x 8 = 64, no biases;
  //            SwiGLU 3 x 8 x 12 = 288; two RMSNorm gains 2 x 8 = 16: 496; two layers 992
  //   final RMSNorm 8, output 9 x 8 = 72 (no bias): 72 + 992 + 8 + 72 = 1144
  TransformerConfig c = llama_config(9);
  c.d_model = 8, c.heads = 4, c.d_ff = 12, c.layers = 2, c.max_len = 6, c.block.kv_heads = 2;
  const DecoderOnly model(c, 1, skip_init);
  CHECK(numbers(model) == 1144);
  CHECK(decoder_only_parameter_count(c) == 1144);
  const std::string specs = listed(parameter_specs(c));
  CHECK(specs ==
        "embed.weight [9, 8] float32\n"
        "decoder.layers.0.self_attn.in_proj_weight [16, 8] float32\n"
        "decoder.layers.0.self_attn.out_proj.weight [8, 8] float32\n"
        "decoder.layers.0.linear1.weight [12, 8] float32\n"
        "decoder.layers.0.linear2.weight [8, 12] float32\n"
        "decoder.layers.0.linear3.weight [12, 8] float32\n"
        "decoder.layers.0.norm1.weight [8] float32\n"
        "decoder.layers.0.norm2.weight [8] float32\n"
        "decoder.layers.1.self_attn.in_proj_weight [16, 8] float32\n"
        "decoder.layers.1.self_attn.out_proj.weight [8, 8] float32\n"
        "decoder.layers.1.linear1.weight [12, 8] float32\n"
        "decoder.layers.1.linear2.weight [8, 12] float32\n"
        "decoder.layers.1.linear3.weight [12, 8] float32\n"
        "decoder.layers.1.norm1.weight [8] float32\n"
        "decoder.layers.1.norm2.weight [8] float32\n"
        "decoder.norm.weight [8] float32\n"
        "generator.weight [9, 8] float32\n");
  // head_dim 6 and q/k/v biases (Qwen2's): in_proj (4 + 4) x 6 = 48 rows x 8 = 384 and 48 biases,
  // W^O 8 x 24 = 192: the attention 624 instead of 192, so each layer 496 - 192 + 624 = 928
  c.block.head_dim = 6, c.block.bias = Bias::QKV;
  CHECK(decoder_only_parameter_count(c) == 72 + 2 * 928 + 8 + 72);
  CHECK(numbers(DecoderOnly(c, 1, skip_init)) == 72 + 2 * 928 + 8 + 72);
  // multi-query (1 key/value head), LayerNorm, ReLU, every bias, learned positions 6 x 8 = 48:
  //   in_proj (4 + 2) x 2 = 12 rows: 96 + 12, W^O 64 + 8: 180; FFN 2 x 96 + 12 + 8 = 212; norms 32: 424
  //   final LayerNorm 16
  c.block = {}, c.block.kv_heads = 1, c.activation = Activation::ReLU, c.positions = Positions::Learned;
  CHECK(decoder_only_parameter_count(c) == 72 + 48 + 2 * 424 + 16 + 72);
  CHECK(numbers(DecoderOnly(c, 1, skip_init)) == 72 + 48 + 2 * 424 + 16 + 72);
}

TEST_CASE("Llama's settings: an encoder-decoder layer's cross-attention counted with its own key/value heads") {
  // d 8, H 4, N 2, d_k 2, d_ff 12, no biases, RMSNorm, SwiGLU, rotary, post-LN, vocabularies 9 and 11, untied:
  //   embeddings (9 + 11) x 8 = 160, generator 11 x 8 + 11 (the encoder-decoder's output has a bias) = 99
  //   encoder layer: attention 192, FFN 288, 2 gains 16: 496; decoder layer: + cross-attention 192
  //   and a third gain 8: 696. 2 + 2 layers: 992 + 1392
  llama_counts_test::Settings s{Normalization::RMSNorm, Activation::SwiGLU, Bias::None, 2, 0, Positions::Rotary, 0};
  const TransformerConfig c = llama_counts_test::transformer_config(s, Architecture::EncoderDecoder);
  CHECK(parameter_count(c) == 160 + 99 + 992 + 1392);
  CHECK(numbers(EncoderDecoder(c, 1, skip_init)) == 160 + 99 + 992 + 1392);
  const LayerCount layer = layer_parameter_count(c.layer(), true);
  CHECK(layer.attention == 192);
  CHECK(layer.cross_attention == 192);
  CHECK(layer.feed_forward == 288);
  CHECK(layer.norms == 24);
}
