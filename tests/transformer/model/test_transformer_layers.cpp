#include <cmath>
#include <memory>

#include "model_helpers.h"
#include "transformer/model/decoder.h"
#include "transformer/model/encoder.h"
#include "transformer/model/feed_forward.h"
#include "transformer/model/multihead_attention.h"
#include "transformer/model/positional_encoding.h"

using namespace gradformer;
using test::rnd;
using test::values;

namespace {

LayerConfig tiny_layer(NormPlacement norm) { return {8, 2, 16, 0.0, norm, DType::Float64}; }
std::shared_ptr<Generator> no_dropout() { return std::make_shared<Generator>(0); }

std::vector<std::string> names(const Module& m) {
  std::vector<std::string> out;
  for (const auto& [name, p] : m.named_parameters()) out.push_back(name);
  return out;
}

std::vector<Variable> with(std::vector<Variable> params, std::initializer_list<Variable> more) {
  params.insert(params.end(), more);
  return params;
}

void check_close(const Tensor& a, const Tensor& b, double tol) {
  const std::vector<double> x = values(a), y = values(b);
  REQUIRE(x.size() == y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    INFO("element " << i << ": " << x[i] << " vs " << y[i]);
    CHECK(std::abs(x[i] - y[i]) <= tol);
  }
}

}  // namespace

TEST_CASE("MultiheadAttention has PyTorch's parameter names and shapes") {
  Generator gen(0);
  MultiheadAttention mha(8, 2, 0.0, gen, no_dropout());
  CHECK(names(mha) == std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight", "out_proj.bias"});
  CHECK(mha.in_proj_weight.shape() == Shape{24, 8});
  CHECK(mha.in_proj_bias.shape() == Shape{24});
  CHECK(mha.out_proj->weight.shape() == Shape{8, 8});
  CHECK(max(mha.in_proj_bias.value()).item() == 0.0);  // PyTorch starts the attention biases at 0
  CHECK(min(mha.in_proj_bias.value()).item() == 0.0);
  CHECK_THROWS_MSG(MultiheadAttention(10, 3, 0.0, gen, no_dropout()), ValueError,
                   "d_model must be a positive multiple of heads, got d_model 10, heads 3");
  CHECK_THROWS_MSG(mha.forward(Variable(zeros({2, 3, 6})), Variable(zeros({2, 3, 6})), Variable(zeros({2, 3, 6}))),
                   ShapeError, "MultiheadAttention: query must be [B, T, 8], got [2, 3, 6]");
}

TEST_CASE("MultiheadAttention and the layers: built with a generator is skip_init then reset_parameters") {
  // PyTorch's nn.MultiheadAttention scheme, drawn in this order from the generator:
  // in_proj_weight Xavier-uniform over [3d, d], out_proj.weight U(-1/sqrt(d), 1/sqrt(d)), biases 0.
  Generator gen(11), expected(11);
  MultiheadAttention mha(8, 2, 0.0, gen, no_dropout(), DType::Float64);
  const double xavier = std::sqrt(6.0 / (24 + 8)), linear = 1 / std::sqrt(8.0);
  CHECK(values(mha.in_proj_weight.value()) == values(uniform({24, 8}, -xavier, xavier, expected, DType::Float64)));
  CHECK(values(mha.out_proj->weight.value()) == values(uniform({8, 8}, -linear, linear, expected, DType::Float64)));
  CHECK(values(mha.out_proj->bias.value()) == std::vector<double>(8, 0.0));

  MultiheadAttention blank(8, 2, 0.0, skip_init, no_dropout(), DType::Float64);
  CHECK(values(blank.in_proj_weight.value()) == std::vector<double>(24 * 8, 0.0));
  Generator again(11);
  blank.reset_parameters(again);
  CHECK(values(blank.in_proj_weight.value()) == values(mha.in_proj_weight.value()));
  CHECK(values(blank.out_proj->weight.value()) == values(mha.out_proj->weight.value()));

  for (const NormPlacement placement : {NormPlacement::Post, NormPlacement::Pre}) {
    Generator a(12), b(12), c(13), d(13);
    Encoder encoder(tiny_layer(placement), 2, a, no_dropout());
    Encoder blank_encoder(tiny_layer(placement), 2, skip_init, no_dropout());
    blank_encoder.reset_parameters(b);
    Decoder decoder(tiny_layer(placement), 2, c, no_dropout());
    Decoder blank_decoder(tiny_layer(placement), 2, skip_init, no_dropout());
    blank_decoder.reset_parameters(d);
    for (const auto& [drawn, reset] :
         {std::pair<const Module*, const Module*>{&encoder, &blank_encoder}, {&decoder, &blank_decoder}}) {
      const StateDict want = drawn->state_dict(), got = reset->state_dict();
      for (const auto& [name, t] : want) {
        INFO(name);
        CHECK(values(got.at(name)) == values(t));
      }
    }
  }
}

TEST_CASE("MultiheadAttention is Concat(head_1, ..., head_h) W^O with head_i = Attention(Q W_i^Q, K W_i^K, V W_i^V)") {
  Generator gen(1);
  const int64_t d = 8, h = 2, dk = 4;
  MultiheadAttention mha(d, h, 0.0, gen, no_dropout(), DType::Float64);
  test::perturb_norms(mha, 3);
  const Variable x(rnd({2, 3, d}, 2)), memory(rnd({2, 5, d}, 4));
  const Variable W = mha.in_proj_weight, b = mha.in_proj_bias;
  // The reference, one head at a time, from the paper's equation.
  auto reference = [&](const Variable& query, const Variable& kv) {
    std::vector<Variable> heads;
    for (int64_t i = 0; i < h; ++i) {
      auto proj = [&](const Variable& in, int64_t which) {  // rows of W^Q, W^K or W^V for head i
        const int64_t first = which * d + i * dk;
        return matmul(in, transpose(narrow(W, 0, first, dk), 0, 1)) + narrow(b, 0, first, dk);
      };
      heads.push_back(scaled_dot_product_attention_unfused(proj(query, 0), proj(kv, 1), proj(kv, 2)).output);
    }
    return mha.out_proj->forward(concat(heads, -1));
  };
  check_close(mha.forward(x, x, x).output.value(), reference(x, x).value(), 1e-12);                 // self-attention
  check_close(mha.forward(x, memory, memory).output.value(), reference(x, memory).value(), 1e-12);  // cross-attention
  // Keys and values as different variables take the general path, with the same result.
  const Variable memory_copy(memory.value().clone());
  check_close(mha.forward(x, memory, memory_copy).output.value(), reference(x, memory).value(), 1e-12);
  CHECK(mha.forward(x, memory, memory).weights.shape() == Shape{2, 2, 3, 5});
}

TEST_CASE("gradcheck: multi-head self- and cross-attention with masks, w.r.t. inputs and parameters") {
  Generator gen(2);
  MultiheadAttention mha(8, 2, 0.0, gen, no_dropout(), DType::Float64);
  test::perturb_norms(mha, 5);
  Variable x(rnd({2, 3, 8}, 6), true), memory(rnd({2, 4, 8}, 7), true);
  const Tensor tgt = test::tgt_mask(test::ids({1, 2, 3, 4, 5, 0}, 2));        // [2, 3, 3]
  const Tensor src = test::pad_mask(test::ids({1, 2, 3, 4, 1, 2, 0, 0}, 2));  // [2, 1, 4]
  CHECK_GRADCHECK([&] { return mha.forward(x, x, x, tgt).output; }, with(mha.parameters(), {x}));
  CHECK_GRADCHECK([&] { return mha.forward(x, memory, memory, src).output; }, with(mha.parameters(), {x, memory}));
}

TEST_CASE("MultiheadAttention with dropout: active in training, the identity in eval") {
  Generator gen(3);
  MultiheadAttention mha(8, 2, 0.5, gen, std::make_shared<Generator>(9));
  const Variable x(randn({2, 6, 8}, gen));
  mha.eval();
  const Tensor a = mha.forward(x, x, x).output.value(), b = mha.forward(x, x, x).output.value();
  CHECK(values(a) == values(b));
  mha.train();
  const Tensor c = mha.forward(x, x, x).output.value();
  CHECK(values(a) != values(c));
}

TEST_CASE("gradcheck: the position-wise feed-forward network") {
  Generator gen(4);
  const Linear linear1(8, 16, gen, true, DType::Float64), linear2(16, 8, gen, true, DType::Float64);
  const Dropout dropout(0.0, no_dropout());
  Variable x(rnd({2, 3, 8}, 8), true);
  CHECK_GRADCHECK([&] { return feed_forward(x, linear1, linear2, dropout); },
                  with(with(linear1.parameters(), {x}), {linear2.weight, linear2.bias}));
  // max(0, x W1 + b1) W2 + b2, computed by hand
  const Tensor hidden = relu(matmul(x.value(), linear1.weight.value().transpose(0, 1)) + linear1.bias.value());
  const Tensor expected = matmul(hidden, linear2.weight.value().transpose(0, 1)) + linear2.bias.value();
  check_close(feed_forward(x, linear1, linear2, dropout).value(), expected, 1e-12);
}

TEST_CASE("gradcheck: LayerNorm in context, the residual connection LayerNorm(x + Sublayer(x))") {
  Generator gen(5);
  Linear sublayer(8, 8, gen, true, DType::Float64);
  LayerNorm norm(8, 1e-5, DType::Float64);
  test::perturb_norms(norm, 11);
  Variable x(rnd({2, 3, 8}, 10), true);
  CHECK_GRADCHECK([&] { return norm.forward(x + sublayer.forward(x)); },
                  with(with(norm.parameters(), {x}), {sublayer.weight, sublayer.bias}));
}

TEST_CASE("gradcheck: encoder layer and stack, post-LN and pre-LN, with a padding mask") {
  for (NormPlacement placement : {NormPlacement::Post, NormPlacement::Pre}) {
    INFO((placement == NormPlacement::Post ? "post-LN" : "pre-LN"));
    Generator gen(6);
    EncoderLayer layer(tiny_layer(placement), gen, no_dropout());
    test::perturb_norms(layer, 20);
    Variable x(rnd({2, 4, 8}, 12), true);
    const Tensor mask = test::pad_mask(test::ids({1, 2, 3, 4, 1, 2, 3, 0}, 2));
    CHECK_GRADCHECK([&] { return layer.forward(x, mask); }, with(layer.parameters(), {x}));
    Encoder encoder(tiny_layer(placement), 2, gen, no_dropout());
    test::perturb_norms(encoder, 30);
    CHECK_GRADCHECK([&] { return encoder.forward(x, mask); }, with(encoder.parameters(), {x}));
  }
}

TEST_CASE("gradcheck: decoder layer and stack, post-LN and pre-LN, with causal and padding masks") {
  for (NormPlacement placement : {NormPlacement::Post, NormPlacement::Pre}) {
    INFO((placement == NormPlacement::Post ? "post-LN" : "pre-LN"));
    Generator gen(7);
    DecoderLayer layer(tiny_layer(placement), gen, no_dropout());
    test::perturb_norms(layer, 40);
    Variable y(rnd({2, 3, 8}, 13), true), memory(rnd({2, 4, 8}, 14), true);
    const Tensor src = test::pad_mask(test::ids({1, 2, 3, 4, 1, 2, 0, 0}, 2));
    const Tensor tgt = test::tgt_mask(test::ids({1, 2, 3, 1, 2, 0}, 2));
    CHECK_GRADCHECK([&] { return layer.forward(y, memory, src, tgt); }, with(layer.parameters(), {y, memory}));
    Decoder decoder(tiny_layer(placement), 2, gen, no_dropout());
    test::perturb_norms(decoder, 50);
    CHECK_GRADCHECK([&] { return decoder.forward(y, memory, src, tgt); }, with(decoder.parameters(), {y, memory}));
  }
}

TEST_CASE("encoder and decoder layers have torch.nn.Transformer*Layer's parameter names") {
  Generator gen(8);
  EncoderLayer enc(tiny_layer(NormPlacement::Post), gen, no_dropout());
  CHECK(names(enc) == std::vector<std::string>{"self_attn.in_proj_weight", "self_attn.in_proj_bias",
                                               "self_attn.out_proj.weight", "self_attn.out_proj.bias", "linear1.weight",
                                               "linear1.bias", "linear2.weight", "linear2.bias", "norm1.weight",
                                               "norm1.bias", "norm2.weight", "norm2.bias"});
  DecoderLayer dec(tiny_layer(NormPlacement::Post), gen, no_dropout());
  CHECK(names(dec) == std::vector<std::string>{
                          "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
                          "self_attn.out_proj.bias", "multihead_attn.in_proj_weight", "multihead_attn.in_proj_bias",
                          "multihead_attn.out_proj.weight", "multihead_attn.out_proj.bias", "linear1.weight",
                          "linear1.bias", "linear2.weight", "linear2.bias", "norm1.weight", "norm1.bias",
                          "norm2.weight", "norm2.bias", "norm3.weight", "norm3.bias"});
  Encoder post(tiny_layer(NormPlacement::Post), 2, gen, no_dropout()),
      pre(tiny_layer(NormPlacement::Pre), 2, gen, no_dropout());
  CHECK(names(post).back() == "layers.1.norm2.bias");
  CHECK(names(pre).back() == "norm.bias");  // the final norm, pre-LN only
}

TEST_CASE("incremental decoding with the key/value cache equals decoding the whole prefix") {
  for (NormPlacement placement : {NormPlacement::Post, NormPlacement::Pre}) {
    Generator gen(9);
    Decoder decoder(tiny_layer(placement), 2, gen, no_dropout());
    test::perturb_norms(decoder, 60);
    const Variable y(rnd({2, 5, 8}, 15)), memory(rnd({2, 4, 8}, 16));
    const Tensor src = test::pad_mask(test::ids({1, 2, 3, 4, 1, 2, 0, 0}, 2));
    const Tensor full_out = decoder.forward(y, memory, src, test::lower_triangle(5)).value();
    DecoderCache cache = decoder.start_cache(memory);
    std::vector<Variable> steps;
    for (int64_t t = 0; t < 3; ++t) steps.push_back(decoder.forward_step(narrow(y, 1, t, 1), src, cache));
    steps.push_back(decoder.forward_step(narrow(y, 1, 3, 2), src, cache));  // two positions at once
    CHECK(cache.length == 5);
    CHECK(cache.layers[0].self.length() == 5);
    check_close(concat(steps, 1).value(), full_out, 1e-12);
  }
}

TEST_CASE("sinusoidal encoding: the paper's formula, and PE(pos + k) is a fixed rotation of PE(pos)") {
  const int64_t d = 16;
  const Tensor pe = sinusoidal_encoding(50, d, DType::Float64);
  CHECK(pe.at({0, 0}) == 0.0);
  CHECK(pe.at({0, 1}) == 1.0);
  CHECK(pe.at({3, 4}) == Approx(std::sin(3 / std::pow(10000.0, 4.0 / 16))));
  CHECK(pe.at({3, 5}) == Approx(std::cos(3 / std::pow(10000.0, 4.0 / 16))));
  for (int64_t k : {1, 5, 17}) {
    const Tensor R = positional_rotation(k, d);
    // Every row pos: PE(pos + k) = R_k PE(pos), the same R_k for every pos.
    const Tensor rotated = matmul(pe.narrow(0, 0, 50 - k), R.transpose(0, 1));
    check_close(rotated, pe.narrow(0, k, 50 - k), 1e-12);
    // A rotation: it keeps lengths (R R^T = I).
    check_close(
        matmul(R, R.transpose(0, 1)),
        [&] {
          Tensor eye = zeros({d, d}, DType::Float64);
          for (int64_t i = 0; i < d; ++i) eye.select(0, i).select(0, i).fill_(1.0);
          return eye;
        }(),
        1e-12);
  }
  CHECK_THROWS_MSG(sinusoidal_encoding(10, 7), ValueError, "d_model positive and even, got max_len 10, d_model 7");
}

TEST_CASE("PositionalEncoding adds PE to x, continues from a start position, and rejects long inputs") {
  PositionalEncoding pos(8, 6, 0.0, no_dropout(), DType::Float64);
  const Variable x(zeros({1, 4, 8}, DType::Float64));
  check_close(pos.forward(x).value(), pos.table().narrow(0, 0, 4).unsqueeze(0), 0);
  check_close(pos.forward(x, 2).value(), pos.table().narrow(0, 2, 4).unsqueeze(0), 0);
  CHECK(pos.parameter_count() == 0);
  CHECK_THROWS_MSG(pos.forward(x, 3), ShapeError, "PositionalEncoding: positions 3 to 6 exceed the maximum length 6");
}
