#include <cmath>

#include "autograd/fused_attention.h"
#include "helpers.h"

using namespace gradformer;
using test::rnd;
using test::values;

namespace {

// Runs attention, backpropagates a fixed random upstream gradient, and returns everything.
struct Run {
  std::vector<double> out, weights, dq, dk, dv;
};

template <class F>
Run run(F attention, const Tensor& q0, const Tensor& k0, const Tensor& v0, const Tensor& mask) {
  Variable q(q0.clone(), true), k(k0.clone(), true), v(v0.clone(), true);
  Attention a = attention(q, k, v, mask, AttentionOptions{});
  a.output.backward(rnd(a.output.shape(), 99).to(a.output.dtype()));
  return {values(a.output.value()), values(a.weights), values(q.grad()), values(k.grad()), values(v.grad())};
}

void check_close(const std::vector<double>& a, const std::vector<double>& b, double tol = 1e-12) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("element " << i);
    CHECK(std::abs(a[i] - b[i]) <= tol * (1 + std::abs(b[i])));
  }
}

}  // namespace

TEST_CASE("attention: fused and unfused agree on outputs, weights and gradients") {
  const Tensor q = rnd({2, 3, 4, 5}, 1), k = rnd({2, 3, 6, 5}, 2), v = rnd({2, 3, 6, 7}, 3);
  // no mask; padding [B, 1, 1, Tk] (the second sentence has 2 padded keys); a per-query mask.
  const Tensor padding = test::pad_mask(test::ids({1, 2, 3, 4, 5, 6, 1, 2, 3, 4, 0, 0}, 2)).unsqueeze(1);
  const Tensor per_query = gt(rnd({2, 1, 4, 6}, 4), full({}, -0.5, DType::Float64));
  for (const Tensor& mask : {Tensor(), padding, per_query}) {
    const Run fused = run(scaled_dot_product_attention, q, k, v, mask);
    const Run unfused = run(scaled_dot_product_attention_unfused, q, k, v, mask);
    check_close(fused.out, unfused.out);
    check_close(fused.weights, unfused.weights);
    check_close(fused.dq, unfused.dq);
    check_close(fused.dk, unfused.dk);
    check_close(fused.dv, unfused.dv);
  }
  // The causal mask (Tq = Tk), in float32 too.
  const Tensor qs = rnd({2, 2, 5, 4}, 5), ks = rnd({2, 2, 5, 4}, 6), vs = rnd({2, 2, 5, 4}, 7);
  const Tensor causal = test::lower_triangle(5);
  const Run fused =
      run(scaled_dot_product_attention, qs.to(DType::Float32), ks.to(DType::Float32), vs.to(DType::Float32), causal);
  const Run unfused = run(scaled_dot_product_attention_unfused, qs, ks, vs, causal);
  check_close(fused.out, unfused.out, 1e-5);
  check_close(fused.dq, unfused.dq, 1e-5);
  check_close(fused.dk, unfused.dk, 1e-5);
  check_close(fused.dv, unfused.dv, 1e-5);
}

// The fused op's gradient checks (padding, causal and no mask, strided heads, dropout) are entries of
// autograd_op_checks(), run by test_op_checks.cpp; the composition it is tested against passes too.
TEST_CASE("attention: gradcheck of the unfused composition with a padding mask") {
  const Tensor padding = test::pad_mask(test::ids({1, 2, 3, 4, 1, 2, 0, 0}, 2)).unsqueeze(1);  // [2, 1, 1, 4]
  CHECK_GRADCHECK(
      [&](const std::vector<Variable>& x) {
        return scaled_dot_product_attention_unfused(x[0], x[1], x[2], padding).output;
      },
      {rnd({2, 2, 3, 4}, 16), rnd({2, 2, 4, 4}, 17), rnd({2, 2, 4, 3}, 18)});
}

TEST_CASE("attention: weights are a distribution over the allowed keys, 0 on masked ones") {
  const Tensor mask = test::lower_triangle(4);
  Attention a = scaled_dot_product_attention(Variable(rnd({1, 1, 4, 8}, 1)), Variable(rnd({1, 1, 4, 8}, 2)),
                                             Variable(rnd({1, 1, 4, 8}, 3)), mask);
  const std::vector<double> w = values(a.weights);
  for (int i = 0; i < 4; ++i) {
    double total = 0;
    for (int j = 0; j < 4; ++j) {
      if (j > i) CHECK(w[static_cast<size_t>(i * 4 + j)] == 0.0);
      total += w[static_cast<size_t>(i * 4 + j)];
    }
    CHECK(total == Approx(1.0));
  }
  CHECK(w[0] == 1.0);  // the first query sees only the first key
}

TEST_CASE("attention: a query whose keys are all masked gets zeros, not NaN") {
  // Query row 1 may attend to nothing.
  const Tensor mask = gt(tensor({1, 1, 0, 0, 0, 1}, {3, 2}), full({}, 0.5));
  for (auto attention : {scaled_dot_product_attention, scaled_dot_product_attention_unfused}) {
    Variable q(rnd({1, 3, 4}, 1), true), k(rnd({1, 2, 4}, 2), true), v(rnd({1, 2, 3}, 3), true);
    Attention a = attention(q, k, v, mask, {});
    const std::vector<double> out = values(a.output.value()), w = values(a.weights);
    CHECK(out[3] == 0.0);
    CHECK(out[4] == 0.0);
    CHECK(out[5] == 0.0);
    CHECK(w[2] == 0.0);
    CHECK(w[3] == 0.0);
    sum(a.output).backward();
    for (double g : values(q.grad())) CHECK(std::isfinite(g));
    for (double g : values(k.grad())) CHECK(std::isfinite(g));
    const std::vector<double> dq = values(q.grad());
    CHECK(dq[4] == 0.0);  // row 1 of dq
  }
  CHECK_GRADCHECK(
      [&](const std::vector<Variable>& x) { return scaled_dot_product_attention(x[0], x[1], x[2], mask).output; },
      {rnd({1, 3, 4}, 4), rnd({1, 2, 4}, 5), rnd({1, 2, 3}, 6)});
}

TEST_CASE("attention: dot products of unit-variance vectors have variance d_k, scaled ones variance 1") {
  // "assume that the components of q and k are independent random variables with mean 0 and
  // variance 1. Then their dot product has mean 0 and variance d_k." (footnote 4)
  Generator gen(42);
  for (int64_t dk : {16, 64, 256}) {
    const Tensor q = randn({2000, dk}, gen, DType::Float64), k = randn({2000, dk}, gen, DType::Float64);
    const Tensor dots = sum(q * k, {-1});  // 2000 independent dot products
    const double variance = var(dots).item();
    const double scaled = var(dots * (1.0 / std::sqrt(static_cast<double>(dk)))).item();
    INFO("d_k " << dk << ": var " << variance << ", scaled var " << scaled);
    CHECK(variance == Approx(static_cast<double>(dk)).epsilon(0.1));
    CHECK(scaled == Approx(1.0).epsilon(0.1));
  }
}

TEST_CASE("attention: without the 1/sqrt(d_k) scaling the softmax saturates") {
  Generator gen(7);
  const int64_t dk = 512;
  const Variable q(randn({1, 64, dk}, gen, DType::Float64)), k(randn({1, 64, dk}, gen, DType::Float64)),
      v(randn({1, 64, 4}, gen, DType::Float64));
  const Tensor scaled = scaled_dot_product_attention(q, k, v).weights;
  const Tensor unscaled = scaled_dot_product_attention(q, k, v, {}, {.scale = 1.0}).weights;
  // The largest weight of each query, averaged: near one-hot without scaling.
  const double peak_unscaled = mean(max(unscaled, {-1})).item(), peak_scaled = mean(max(scaled, {-1})).item();
  INFO("mean max weight: unscaled " << peak_unscaled << ", scaled " << peak_scaled);
  CHECK(peak_unscaled > 0.9);
  CHECK(peak_scaled < 0.3);
}

TEST_CASE("attention: bad arguments are typed errors naming the op and the shapes") {
  const Variable q(rnd({2, 3, 4}, 1)), k(rnd({2, 5, 4}, 2)), v(rnd({2, 5, 6}, 3));
  CHECK_THROWS_MSG(
      scaled_dot_product_attention(q, Variable(rnd({2, 5, 3}, 4)), v), ShapeError,
      "scaled_dot_product_attention: q and k need the same last dimension d_k, got q [2, 3, 4], k [2, 5, 3]");
  CHECK_THROWS_MSG(scaled_dot_product_attention(q, k, Variable(rnd({2, 4, 6}, 5))), ShapeError,
                   "k and v need the same number of positions");
  CHECK_THROWS_MSG(scaled_dot_product_attention(q, Variable(rnd({3, 5, 4}, 6)), v), ShapeError,
                   "leading dimensions differ");
  CHECK_THROWS_MSG(scaled_dot_product_attention(Variable(rnd({4}, 7)), k, v), ShapeError, "need the same rank");
  CHECK_THROWS_MSG(scaled_dot_product_attention(q, Variable(k.value().to(DType::Float32)), v), DTypeError,
                   "must share a dtype");
  CHECK_THROWS_MSG(scaled_dot_product_attention(q, k, v, ones({2, 3, 5})), DTypeError, "mask must be bool");
  CHECK_THROWS_MSG(scaled_dot_product_attention(q, k, v, ones({2, 3, 4}).to(DType::Bool)), ShapeError,
                   "mask [2, 3, 4] does not broadcast to the scores [2, 3, 5]");
  CHECK_THROWS_MSG(scaled_dot_product_attention(q, k, v, {}, {.dropout_p = 0.5}), ValueError,
                   "needs a dropout generator");
  CHECK_THROWS_MSG(scaled_dot_product_attention_unfused(q, k, v, {}, {.dropout_p = 1.0}), ValueError,
                   "dropout_p must be in [0, 1)");
}
