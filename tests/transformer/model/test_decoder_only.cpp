// The decoder-only model (transformer/model/decoder_only.h) and generation (sampling.h): gradient
// checks in float64, causality to the bit, tied weights sharing one gradient, the cache agreeing
// with the full forward pass, the parameter formula term by term, and sampling's knobs.
#include <algorithm>
#include <cmath>
#include <map>

#include "model_helpers.h"
#include "transformer/model/decoder_only.h"
#include "transformer/model/masks.h"
#include "transformer/model/sampling.h"

using namespace gradformer;
using test::values;

namespace {

TransformerConfig tiny_lm(NormPlacement norm, Positions positions = Positions::Sinusoidal, bool tied = false) {
  TransformerConfig c = test::tiny_config(norm, 2);
  c.arch = Architecture::DecoderOnly, c.positions = positions, c.tie_embeddings = tied, c.activation = Activation::GELU;
  return c;
}

Tensor causal(int64_t t) { return test::lower_triangle(t).unsqueeze(0); }

}  // namespace

TEST_CASE("gradcheck: the decoder-only model, post-LN and pre-LN, sinusoidal and learned positions, tied and not") {
  const Tensor ids = test::ids({1, 4, 5, 6, 1, 3, 2, 5}, 2);
  for (NormPlacement norm : {NormPlacement::Post, NormPlacement::Pre})
    for (Positions pos : {Positions::Sinusoidal, Positions::Learned})
      for (bool tied : {false, true}) {
        DecoderOnly model(tiny_lm(norm, pos, tied), 3);
        test::perturb_norms(model, 17);
        CHECK_GRADCHECK([&] { return model.forward(ids, causal(4)); }, model.parameters());
      }
}

TEST_CASE("gradcheck: the decoder-only model as GPT-2 computes it: GELU's tanh form, no sqrt(d), LayerNorm eps 1e-3") {
  const Tensor ids = test::ids({1, 4, 5, 6, 1, 3, 2, 5}, 2);
  TransformerConfig c = tiny_lm(NormPlacement::Pre, Positions::Learned, true);
  c.activation = Activation::GELUTanh, c.scale_embedding = false, c.norm_eps = 1e-3;
  DecoderOnly model(c, 3);
  test::perturb_norms(model, 17);
  CHECK_GRADCHECK([&] { return model.forward(ids, causal(4)); }, model.parameters());
}

TEST_CASE("decoder-only: scale_embedding off adds the embedding row to the position unscaled, on times sqrt(d)") {
  TransformerConfig c = tiny_lm(NormPlacement::Pre, Positions::Learned);
  c.dropout = 0;
  for (bool scale : {true, false}) {
    c.scale_embedding = scale;
    DecoderOnly model(c, 5);
    const Tensor ids = test::ids({3, 4}, 1);
    const std::vector<double> h = values(model.embed_tokens(ids, 1).value());  // positions 1 and 2
    const std::vector<double> e = values(model.embed->weight.value()),
                              p = values(model.positional_encoding->weight.value());
    const int64_t d = c.d_model;
    const double factor = scale ? std::sqrt(static_cast<double>(d)) : 1.0;
    for (int64_t t = 0; t < 2; ++t)
      for (int64_t j = 0; j < d; ++j)
        CHECK(h[t * d + j] == Approx(e[(3 + t) * d + j] * factor + p[(1 + t) * d + j]).epsilon(1e-12));
  }
}

TEST_CASE("decoder-only: LayerNorm's epsilon comes from the configuration") {
  TransformerConfig c = tiny_lm(NormPlacement::Pre);
  c.norm_eps = 0.25;
  const DecoderOnly model(c, 1);
  CHECK((*model.decoder->layers)[0].norm1->eps == 0.25);
  CHECK(model.decoder->norm->eps == 0.25);
  c.norm_eps = 0;
  CHECK_THROWS_MSG(DecoderOnly(c, 1), ValueError, "TransformerConfig: norm_eps must be in (0, 1], got 0");
}

TEST_CASE("decoder-only: changing a later token leaves every earlier position's logits unchanged, to the bit") {
  TransformerConfig c = tiny_lm(NormPlacement::Pre);
  c.dtype = DType::Float32;
  DecoderOnly model(c, 5);
  model.eval();
  const Tensor a = test::ids({1, 4, 5, 6, 3, 2}, 1), b = test::ids({1, 4, 5, 6, 6, 4}, 1);  // positions 4 and 5 differ
  const std::vector<float> la = model.forward(a, causal(6)).value().contiguous().to_vector<float>();
  const std::vector<float> lb = model.forward(b, causal(6)).value().contiguous().to_vector<float>();
  const size_t V = 7;
  for (size_t i = 0; i < 4 * V; ++i) CHECK(la[i] == lb[i]);  // positions 0..3: bit for bit
  bool later_differs = false;
  for (size_t i = 4 * V; i < 6 * V; ++i) later_differs = later_differs || la[i] != lb[i];
  CHECK(later_differs);
}

TEST_CASE(
    "decoder-only: tied weights are one parameter whose gradient is the sum of the embedding's and the output's") {
  DecoderOnly tied(tiny_lm(NormPlacement::Pre, Positions::Sinusoidal, true), 7);
  CHECK(tied.output_projection->weight.impl() == tied.embed->weight.impl());
  std::map<std::string, Variable> named;
  for (const auto& [n, p] : tied.named_parameters()) named[n] = p;
  CHECK(named.count("embed.weight") == 1);
  CHECK(named.count("generator.weight") == 0);
  CHECK(named.count("generator.bias") == 0);
  const Tensor ids = test::ids({1, 4, 5, 6}, 1);
  // The gradient through the output alone: the logits with the embedding's weight treated as a constant.
  Variable loss = sum(tied.forward(ids, causal(4)) * Variable(test::rnd({1, 4, 7}, 3)));
  loss.backward();
  const std::vector<double> both = values(tied.embed->weight.grad());
  // Untied copy with the same values: the two gradients separately.
  TransformerConfig c = tiny_lm(NormPlacement::Pre);
  DecoderOnly untied(c, 7);
  for (const auto& [n, p] : untied.named_parameters()) {
    const std::string from = n == "generator.weight" ? "embed.weight" : n;
    Tensor v = p.value();
    v.copy_(named.at(from).value());
  }
  Variable loss2 = sum(untied.forward(ids, causal(4)) * Variable(test::rnd({1, 4, 7}, 3)));
  loss2.backward();
  const std::vector<double> e = values(untied.embed->weight.grad()),
                            o = values(untied.output_projection->weight.grad());
  REQUIRE(both.size() == e.size());
  for (size_t i = 0; i < both.size(); ++i) CHECK(std::abs(both[i] - (e[i] + o[i])) <= 1e-12);
}

TEST_CASE("decoder-only: the cached steps give the full forward pass's logits, one token or several at a time") {
  for (Positions pos : {Positions::Sinusoidal, Positions::Learned}) {
    DecoderOnly model(tiny_lm(NormPlacement::Post, pos), 9);
    model.eval();
    const Tensor ids = test::ids({1, 4, 5, 6, 3, 2}, 1);
    const std::vector<double> full = values(model.forward(ids, causal(6)).value());
    DecoderOnlyCache cache = model.start_cache();
    std::vector<double> stepped = values(model.forward_step(ids.narrow(1, 0, 3).contiguous(), cache).value());
    for (int64_t t = 3; t < 6; ++t)
      for (double v : values(model.forward_step(ids.narrow(1, t, 1).contiguous(), cache).value())) stepped.push_back(v);
    CHECK(cache.length == 6);
    REQUIRE(stepped.size() == full.size());
    for (size_t i = 0; i < full.size(); ++i) CHECK(std::abs(stepped[i] - full[i]) <= 1e-12);
  }
}

TEST_CASE("decoder-only: the parameter formula, term by term, against an instantiated model") {
  TransformerConfig c = decoder_only_config(11);
  c.d_model = 16, c.d_ff = 24, c.heads = 2, c.layers = 3, c.max_len = 20;
  c.positions = Positions::Learned, c.tie_embeddings = true;
  DecoderOnly model(c, 1);
  std::map<std::string, int64_t> by_group;
  for (const auto& [n, p] : model.named_parameters()) {
    const std::string group = n.rfind("decoder.layers.", 0) == 0 ? "layers" : n.substr(0, n.find('.'));
    by_group[group] += p.numel();
  }
  const int64_t d = 16, V = 11, ff = 24;
  CHECK(by_group["embed"] == V * d);
  CHECK(by_group["positional_encoding"] == 20 * d);
  CHECK(by_group["layers"] == 3 * ((4 * d * d + 4 * d) + (2 * d * ff + ff + d) + 4 * d));
  CHECK(by_group["decoder"] == 2 * d);      // decoder.norm, pre-LN
  CHECK(by_group.count("generator") == 0);  // tied, no bias
  CHECK(model.parameter_count() == decoder_only_parameter_count(c));
  c.tie_embeddings = false, c.positions = Positions::Sinusoidal, c.norm = NormPlacement::Post;
  CHECK(DecoderOnly(c, 1).parameter_count() == decoder_only_parameter_count(c));
  CHECK(decoder_only_parameter_count(c) == V * d + 3 * ((4 * d * d + 4 * d) + (2 * d * ff + ff + d) + 4 * d) + V * d);
}

TEST_CASE("GPT-2 small: the formula gives the released model's 124,439,808 parameters") {
  const TransformerConfig c = gpt2_small_config();
  // wte 50257 x 768, wpe 1024 x 768, 12 blocks (c_attn 768 x 2304 + 2304, c_proj 768 x 768 + 768,
  // c_fc 768 x 3072 + 3072, mlp c_proj 3072 x 768 + 768, ln_1 and ln_2 2 x 768 each), ln_f 2 x 768
  const int64_t block = 768 * 2304 + 2304 + 768 * 768 + 768 + 768 * 3072 + 3072 + 3072 * 768 + 768 + 4 * 768;
  CHECK(50257 * 768 + 1024 * 768 + 12 * block + 2 * 768 == 124439808);
  CHECK(decoder_only_parameter_count(c) == 124439808);
  CHECK(c.activation == Activation::GELUTanh);
  CHECK_FALSE(c.scale_embedding);
  CHECK(c.norm_eps == 1e-5);
}

TEST_CASE("sampling: temperature 0 is the argmax, top-k keeps k, top-p the fewest reaching p, each renormalised") {
  const Tensor logits =
      from_vector(std::vector<double>{std::log(0.1), std::log(0.5), std::log(0.15), std::log(0.25)}, {4});
  auto dist = [&](SamplingOptions o) { return next_token_distribution(logits, o); };
  CHECK(dist({.temperature = 0}) == std::vector<double>{0, 1, 0, 0});
  const std::vector<double> t1 = dist({});
  CHECK(std::abs(t1[1] - 0.5) < 1e-12);
  const std::vector<double> k2 = dist({.top_k = 2});  // 0.5 and 0.25, renormalised
  CHECK((std::abs(k2[1] - 0.5 / 0.75) < 1e-12 && std::abs(k2[3] - 0.25 / 0.75) < 1e-12 && k2[0] == 0 && k2[2] == 0));
  const std::vector<double> p8 = dist({.top_p = 0.8});  // 0.5 + 0.25 = 0.75 < 0.8, so 0.15 joins
  CHECK((p8[0] == 0 && std::abs(p8[2] - 0.15 / 0.9) < 1e-12));
  const std::vector<double> t2 = dist({.temperature = 2});  // p^(1/2), renormalised
  const double z = std::sqrt(0.1) + std::sqrt(0.5) + std::sqrt(0.15) + std::sqrt(0.25);
  CHECK(std::abs(t2[0] - std::sqrt(0.1) / z) < 1e-12);
  CHECK_THROWS_AS(dist({.top_p = 0}), ValueError);
  CHECK_THROWS_AS(dist({.temperature = -1}), ValueError);
}

TEST_CASE("generate: the same seed gives the same tokens, the cache does not change them, temperature 0 is greedy") {
  TransformerConfig c = tiny_lm(NormPlacement::Pre);
  c.dtype = DType::Float32;
  DecoderOnly model(c, 11);
  auto run = [&](SamplingOptions o, uint64_t seed) {
    Generator gen(seed);
    o.eos = -1, o.max_tokens = 10;
    return generate(model, {1, 4}, o, gen);
  };
  CHECK(run({}, 3) == run({}, 3));
  CHECK(run({.top_k = 3}, 5) == run({.top_k = 3, .use_cache = false}, 5));
  CHECK(run({.top_p = 0.9}, 5) == run({.top_p = 0.9, .use_cache = false}, 5));
  // greedy by hand: the argmax of the full forward pass, token by token
  std::vector<int64_t> seq{1, 4}, greedy;
  for (int i = 0; i < 10; ++i) {
    NoGradGuard no_grad;
    model.eval();
    const Tensor ids = from_vector(seq, {1, static_cast<int64_t>(seq.size())});
    const std::vector<float> l = model.forward(ids, causal(ids.size(1)))
                                     .value()
                                     .select(0, 0)
                                     .select(0, ids.size(1) - 1)
                                     .contiguous()
                                     .to_vector<float>();
    const int64_t best = static_cast<int64_t>(std::max_element(l.begin(), l.end()) - l.begin());
    greedy.push_back(best), seq.push_back(best);
  }
  CHECK(run({.temperature = 0}, 1) == greedy);
  CHECK(run({.temperature = 0}, 2) == greedy);  // the seed does not matter
  CHECK(run({}, 3) != run({}, 4));  // but it does when sampling (ten tokens of seven: a coincidence is unlikely)
}

TEST_CASE("generate stops on scores that are not finite, naming the position, with or without sampling") {
  // Every weight finite, the final LayerNorm's gain 3e38: the logits overflow to infinities and NaN.
  TransformerConfig c = tiny_lm(NormPlacement::Pre);
  c.dtype = DType::Float32;
  DecoderOnly model(c, 11);
  bool found = false;
  for (auto& [name, p] : model.named_parameters())
    if (name == "decoder.norm.weight") Tensor(p.value()).fill_(3e38), found = true;  // a view: the same storage
  REQUIRE(found);
  for (const double temperature : {0.0, 1.0}) {
    Generator gen(1);
    CHECK_THROWS_MSG(generate(model, {1, 4}, {.max_tokens = 5, .temperature = temperature}, gen), ValueError,
                     "generate: the model's scores for the token at position 2 hold ");
  }
}

TEST_CASE("decoder-only: without a gradient the cache grows in place, with the same logits, truncated and copied") {
  TransformerConfig c = tiny_lm(NormPlacement::Pre, Positions::Learned);
  c.max_len = 40;
  DecoderOnly model(c, 11);
  model.eval();
  std::vector<int64_t> tokens;
  for (int64_t t = 0; t < 40; ++t) tokens.push_back((t * 5 + 2) % 7);
  const Tensor ids = test::ids(tokens, 1);
  auto step_all = [&](DecoderOnlyCache& cache, int64_t from, int64_t to) {  // logits of positions [from, to)
    std::vector<double> out;
    for (int64_t t = from; t < to; ++t)
      for (double v : values(model.forward_step(ids.narrow(1, t, 1).contiguous(), cache).value())) out.push_back(v);
    return out;
  };
  const std::vector<double> full = values(model.forward(ids, causal(40)).value());  // [1, 40, 7]
  DecoderOnlyCache recorded = model.start_cache();  // recording a gradient: concatenation
  const std::vector<double> concatenated = step_all(recorded, 0, 40);
  NoGradGuard no_grad;
  DecoderOnlyCache cache = model.start_cache();  // 40 steps: the storage outgrows 16 positions, then 32
  const std::vector<double> in_place = step_all(cache, 0, 40);
  CHECK(in_place == concatenated);  // the same keys and values, so the same bits
  REQUIRE(in_place.size() == full.size());
  for (size_t i = 0; i < full.size(); ++i) CHECK(std::abs(in_place[i] - full[i]) <= 1e-12);
  CHECK(cache.layers[0].k.value().shares_storage_with(cache.layers[0].storage.k));

  // back to 25 positions: the next steps write over the dropped ones and give the same logits again
  for (KVCache& layer : cache.layers) layer.truncate(25);
  cache.length = 25;
  CHECK(step_all(cache, 25, 40) == std::vector<double>(in_place.begin() + 25 * 7, in_place.end()));
  CHECK_THROWS_AS(cache.layers[0].truncate(41), ValueError);

  // a copy taken at 30 positions, both stepped on: neither changes what the other holds
  for (KVCache& layer : cache.layers) layer.truncate(30);
  cache.length = 30;
  DecoderOnlyCache copy = cache;
  const std::vector<double> from_original = step_all(cache, 30, 40), from_copy = step_all(copy, 30, 40);
  CHECK(from_original == std::vector<double>(in_place.begin() + 30 * 7, in_place.end()));
  CHECK(from_copy == from_original);
  CHECK_FALSE(copy.layers[0].k.value().shares_storage_with(cache.layers[0].k.value()));
}

TEST_CASE("DecoderOnly's forward names the mask it needs, B or 1 by T by T, or 1 by T by T for one sequence") {
  const DecoderOnly model(tiny_lm(NormPlacement::Pre), 1);
  const Tensor one = from_vector(std::vector<int64_t>{1, 4, 2}, {1, 3});
  CHECK_THROWS_MSG(model.forward(one, causal_mask(3)), ShapeError,
                   "DecoderOnly: mask must be [1, 3, 3] bool (causal), got [3, 3] bool");
  const Tensor two = from_vector(std::vector<int64_t>{1, 4, 2, 3, 5, 6}, {2, 3});
  CHECK_THROWS_MSG(model.forward(two, causal_mask(2).unsqueeze(0)), ShapeError,
                   "DecoderOnly: mask must be [2 or 1, 3, 3] bool (causal), got [1, 2, 2] bool");
}
