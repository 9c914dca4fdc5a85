// parameter_specs (transformer/model/parameter_specs.h): the parameters a configuration implies,
// computed without building the model, must be exactly those the built model has, name for name,
// in order, with their shapes and dtypes, in every variant of the three architectures. A checkpoint
// reader trusts these lists to refuse a file before it builds anything.
#include <string>
#include <vector>

#include "catch.h"
#include "transformer/model/decoder_only.h"
#include "transformer/model/encoder_decoder.h"
#include "transformer/model/parameter_specs.h"

using namespace gradformer;

namespace {

// "name [shape] dtype" a line, so a difference shows where it is.
std::string listed(const std::vector<ParameterSpec>& specs) {
  std::string out;
  for (const ParameterSpec& s : specs) out += message(s.name, " ", s.shape, " ", s.dtype, "\n");
  return out;
}

TransformerConfig small(Architecture arch, NormPlacement norm, bool tie, Positions positions, DType dtype) {
  TransformerConfig c;
  c.arch = arch, c.src_vocab = 9, c.tgt_vocab = arch == Architecture::EncoderDecoder && !tie ? 11 : 9;
  c.d_model = 8, c.d_ff = 12, c.heads = 2, c.layers = 2, c.max_len = 6, c.dropout = 0.0;
  c.norm = norm, c.tie_embeddings = tie, c.positions = positions, c.dtype = dtype;
  return c;
}

}  // namespace

TEST_CASE("parameter_specs: an encoder-decoder's and a decoder-only model's, as the built models list them") {
  for (const Architecture arch : {Architecture::EncoderDecoder, Architecture::DecoderOnly})
    for (const NormPlacement norm : {NormPlacement::Post, NormPlacement::Pre})
      for (const bool tie : {false, true})
        for (const Positions positions : {Positions::Sinusoidal, Positions::Learned})
          for (const DType dtype : {DType::Float32, DType::Float64}) {
            const TransformerConfig c = small(arch, norm, tie, positions, dtype);
            INFO(architecture_name(arch) << (norm == NormPlacement::Pre ? " pre-LN" : " post-LN")
                                         << (tie ? " tied" : " untied")
                                         << (positions == Positions::Learned ? " learned" : " sinusoidal") << " "
                                         << dtype);
            const std::string built = arch == Architecture::EncoderDecoder
                                          ? listed(EncoderDecoder(c, 1, skip_init).parameter_specs())
                                          : listed(DecoderOnly(c, 1, skip_init).parameter_specs());
            CHECK(listed(parameter_specs(c)) == built);
          }
  // Spot values: the list is what ARCHITECTURE.md's table says, not only what the model says.
  const std::vector<ParameterSpec> specs = parameter_specs(
      small(Architecture::EncoderDecoder, NormPlacement::Post, false, Positions::Sinusoidal, DType::Float32));
  REQUIRE(specs.size() == 2 + 2 * 12 + 2 * 18 + 2);  // embeddings, 2 encoder and 2 decoder layers, generator
  CHECK(listed({specs.front()}) == "src_embed.weight [9, 8] float32\n");
  CHECK(listed({specs[2]}) == "encoder.layers.0.self_attn.in_proj_weight [24, 8] float32\n");
  CHECK(listed({specs.back()}) == "generator.bias [11] float32\n");
}

TEST_CASE("parameter_specs: an encoder-only model's, the MLM head's and the classifier's included") {
  for (const NormPlacement norm : {NormPlacement::Post, NormPlacement::Pre})
    for (const bool tie : {false, true})
      for (const Positions positions : {Positions::Sinusoidal, Positions::Learned})
        for (const int64_t types : {0, 2})
          for (const bool embed_norm : {false, true}) {
            EncoderOnlyConfig c;
            c.vocab = 10, c.d_model = 8, c.d_ff = 12, c.heads = 2, c.layers = 2, c.max_len = 6, c.classes = 3;
            c.norm = norm, c.tie_embeddings = tie, c.positions = positions, c.types = types, c.embed_norm = embed_norm;
            INFO((norm == NormPlacement::Pre ? "pre-LN" : "post-LN")
                 << (tie ? " tied" : " untied") << (positions == Positions::Learned ? " learned" : " sinusoidal")
                 << " types " << types << (embed_norm ? " embed_norm" : ""));
            CHECK(listed(parameter_specs(c)) == listed(EncoderOnly(c, 1, skip_init).parameter_specs()));
          }
}

TEST_CASE("parameter_specs: a configuration that does not validate is refused before any list is made") {
  TransformerConfig c =
      small(Architecture::EncoderDecoder, NormPlacement::Post, false, Positions::Sinusoidal, DType::Float32);
  c.layers = 59999;
  CHECK_THROWS_MSG(parameter_specs(c), ValueError, "TransformerConfig: layers must be at most 1024, got 59999");
  c.layers = 1, c.arch = Architecture::EncoderOnly, c.tgt_vocab = c.src_vocab;
  CHECK_THROWS_MSG(parameter_specs(c), ValueError, "an encoder-only model has its own configuration");
}
