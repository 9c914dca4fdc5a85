// The options the Transformer family shares: the feed-forward network's activation (ReLU or GELU)
// and learned positions beside the sinusoids, each gradient-checked in float64 and compared with
// the formula computed by hand.
#include <cmath>
#include <memory>

#include "model_helpers.h"
#include "transformer/model/encoder_decoder.h"
#include "transformer/model/feed_forward.h"
#include "transformer/model/positional_encoding.h"

using namespace gradformer;
using test::rnd;
using test::values;

TEST_CASE("gradcheck: the feed-forward network with GELU, against x Phi(x) by hand") {
  Generator gen(4);
  const Linear linear1(8, 16, gen, true, DType::Float64), linear2(16, 8, gen, true, DType::Float64);
  const Dropout dropout(0.0, std::make_shared<Generator>(0));
  const auto ffn = [&](const Variable& x) { return feed_forward(x, linear1, linear2, dropout, Activation::GELU); };
  Variable x(rnd({2, 3, 8}, 8), true);
  CHECK_GRADCHECK([&] { return ffn(x); },
                  std::vector<Variable>{linear1.weight, linear1.bias, linear2.weight, linear2.bias, x});
  // GELU(u) = u (1 + erf(u / sqrt 2)) / 2, elementwise, by hand
  const Tensor u = matmul(x.value(), linear1.weight.value().transpose(0, 1)) + linear1.bias.value();
  std::vector<double> g = values(u);
  for (double& v : g) v = v * 0.5 * (1 + std::erf(v / std::sqrt(2.0)));
  const Tensor expected =
      matmul(from_vector(g, u.shape()), linear2.weight.value().transpose(0, 1)) + linear2.bias.value();
  const std::vector<double> got = values(ffn(x).value()), want = values(expected);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(std::abs(got[i] - want[i]) <= 1e-12);
  // and it is not ReLU: some hidden unit is negative, where GELU is not 0
  bool negative = false;
  for (double v : values(u)) negative = negative || v < -0.1;
  CHECK(negative);
}

TEST_CASE("gradcheck: learned positions, a max_len x d parameter drawn N(0, 0.02) whose rows are added") {
  PositionalEncoding pe(8, 64, 0.0, std::make_shared<Generator>(0), DType::Float64, Positions::Learned);
  REQUIRE(pe.learned());
  CHECK(pe.named_parameters().size() == 1);
  CHECK(pe.named_parameters()[0].first == "weight");
  CHECK(pe.weight.shape() == Shape{64, 8});
  Generator gen(3);
  pe.reset_parameters(gen);
  // mean ~ 0 and standard deviation ~ 0.02 over 512 draws (a 4-sigma band for each)
  const std::vector<double> w = values(pe.weight.value());
  double mean = 0, var = 0;
  for (double v : w) mean += v / static_cast<double>(w.size());
  for (double v : w) var += (v - mean) * (v - mean) / static_cast<double>(w.size());
  CHECK(std::abs(mean) < 4 * 0.02 / std::sqrt(512.0));
  CHECK(std::abs(std::sqrt(var) - 0.02) < 0.02 * 4 / std::sqrt(2 * 512.0));
  Variable x(rnd({2, 3, 8}, 9), true);
  CHECK_GRADCHECK([&] { return pe.forward(x, 5); }, {pe.weight, x});
  // x + W[5 : 8], by hand
  const std::vector<double> got = values(pe.forward(x, 5).value()), xs = values(x.value());
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t t = 0; t < 3; ++t)
      for (int64_t j = 0; j < 8; ++j) {
        const size_t i = static_cast<size_t>((b * 3 + t) * 8 + j);
        CHECK(got[i] == xs[i] + w[static_cast<size_t>((5 + t) * 8 + j)]);
      }
  CHECK_THROWS_AS(pe.forward(x, 62), ShapeError);
}

TEST_CASE("encoder-decoder with GELU and learned positions: gradcheck through the whole model, and the count") {
  TransformerConfig c = test::tiny_config(NormPlacement::Pre);
  c.activation = Activation::GELU, c.positions = Positions::Learned;
  EncoderDecoder model(c, 5);
  test::perturb_norms(model, 11);
  const Tensor src = test::ids({4, 5, 6, 2, 3, 2, 0, 0}, 2), tgt = test::ids({1, 4, 5, 1, 6, 0}, 2);
  CHECK_GRADCHECK([&] { return model.forward(src, tgt, test::pad_mask(src), test::tgt_mask(tgt)); },
                  model.parameters());
  CHECK(model.parameter_count() == parameter_count(c));
  c.positions = Positions::Sinusoidal;
  CHECK(parameter_count(c) + 16 * 8 == model.parameter_count());  // max_len d
}

TEST_CASE("architecture names round trip, and anything else is a ValueError listing the three") {
  for (Architecture a : {Architecture::EncoderDecoder, Architecture::DecoderOnly, Architecture::EncoderOnly})
    CHECK(parse_architecture(architecture_name(a)) == a);
  CHECK(std::string(architecture_name(Architecture::DecoderOnly)) == "decoder-only");
  CHECK(test::error_message<ValueError>([] { parse_architecture("gpt"); }) ==
        "architecture: expected encoder-decoder, decoder-only or encoder-only, got 'gpt'");
  TransformerConfig c = test::tiny_config(NormPlacement::Post);
  c.arch = Architecture::DecoderOnly;
  CHECK_THROWS_AS(EncoderDecoder(c, 1), ValueError);
}
