#include <cmath>

#include "autograd/helpers.h"
#include "nn/all.h"

using namespace gradformer;
using test::rnd;
using test::values;

TEST_CASE("Linear computes x W^T + b with PyTorch's weight layout") {
  Generator gen(0);
  Linear lin(2, 3, gen);
  CHECK(lin.weight.shape() == Shape{3, 2});  // [out, in]
  Tensor w = lin.weight.value(), b = lin.bias.value();
  w.copy_(tensor({1, 2, 3, 4, 5, 6}, {3, 2}));
  b.copy_(tensor({10, 20, 30}, {3}));
  const Variable y = lin.forward(Variable(tensor({1, 1, 0, 2}, {2, 2})));
  // [1, 1] -> [1+2, 3+4, 5+6] + b ; [0, 2] -> [4, 8, 12] + b
  CHECK(values(y.value()) == std::vector<double>{13, 27, 41, 14, 28, 42});
  // Leading dimensions are kept: [2, 5, 2] -> [2, 5, 3].
  CHECK(lin.forward(Variable(zeros({2, 5, 2}))).shape() == Shape{2, 5, 3});
  CHECK_THROWS_MSG(lin.forward(Variable(zeros({4, 3}))), ShapeError, "linear: input [4, 3] does not fit weight [3, 2]");
}

TEST_CASE("Linear's default initialisation is U(-1/sqrt(in), 1/sqrt(in))") {
  Generator gen(1);
  Linear lin(400, 300, gen);
  const double bound = 1.0 / 20;  // 1/sqrt(400)
  CHECK(max(lin.weight.value()).item() <= bound);
  CHECK(min(lin.weight.value()).item() >= -bound);
  CHECK(var(lin.weight.value()).item() == Approx(bound * bound / 3).epsilon(0.02));  // var of U(-a, a) is a^2/3
}

TEST_CASE("Linear and Embedding built with skip_init allocate zeros, and reset_parameters draws the default") {
  Linear lin(4, 3, skip_init);
  CHECK(values(lin.weight.value()) == std::vector<double>(12, 0.0));
  CHECK(values(lin.bias.value()) == std::vector<double>(3, 0.0));
  // Linear(in, out, gen) is the allocation then reset_parameters: W, then b, from U(-1/2, 1/2).
  Generator a(3), b(3);
  Linear drawn(4, 3, a);
  lin.reset_parameters(b);
  CHECK(values(drawn.weight.value()) == values(lin.weight.value()));
  Generator c(3);
  const Tensor w = uniform({3, 4}, -0.5, 0.5, c), bias = uniform({3}, -0.5, 0.5, c);
  CHECK(values(drawn.weight.value()) == values(w));
  CHECK(values(drawn.bias.value()) == values(bias));
  Embedding emb(5, 2, skip_init);
  CHECK(values(emb.weight.value()) == std::vector<double>(10, 0.0));
  Generator d(4), e(4);
  emb.reset_parameters(d);
  CHECK(values(emb.weight.value()) == values(randn({5, 2}, e)));
}

TEST_CASE("gradcheck: Linear, LayerNorm and Embedding with respect to inputs and parameters") {
  Generator gen(2);
  Linear lin(3, 4, gen, true, DType::Float64);
  Variable x(rnd({2, 5, 3}, 3), true);
  std::vector<Variable> leaves = lin.parameters();
  leaves.push_back(x);
  CHECK_GRADCHECK([&] { return lin.forward(x); }, leaves);

  LayerNorm norm(4, 1e-5, DType::Float64);
  Tensor w = norm.weight.value(), b = norm.bias.value();
  w.copy_(rnd({4}, 4, 0.5, 1.5));  // away from the trivial 1 and 0
  b.copy_(rnd({4}, 5));
  Variable h(rnd({3, 4}, 6), true);
  leaves = norm.parameters();
  leaves.push_back(h);
  CHECK_GRADCHECK([&] { return norm.forward(h); }, leaves);

  Embedding emb(5, 3, gen, DType::Float64);
  const Tensor ids = from_vector(std::vector<int64_t>{4, 1, 4, 0}, {2, 2});  // a repeated id accumulates
  CHECK_GRADCHECK([&] { return emb.forward(ids); }, emb.parameters());
}

TEST_CASE("Embedding looks up rows and accumulates the gradient of repeated ids") {
  Generator gen(7);
  Embedding emb(4, 2, gen);
  Tensor w = emb.weight.value();
  w.copy_(arange(8).reshape({4, 2}));
  const Tensor ids = from_vector(std::vector<int64_t>{3, 1, 3}, {3});
  const Variable out = emb.forward(ids);
  CHECK(values(out.value()) == std::vector<double>{6, 7, 2, 3, 6, 7});
  sum(out).backward();
  CHECK(values(emb.weight.grad()) == std::vector<double>{0, 0, 1, 1, 0, 0, 2, 2});
  CHECK_THROWS_AS(emb.forward(from_vector(std::vector<int64_t>{4}, {1})), IndexError);
}

TEST_CASE("LayerNorm normalises each row to mean 0 and variance 1 before its gain and bias") {
  LayerNorm norm(4);
  const Variable y = norm.forward(Variable(tensor({1, 2, 3, 4, 10, 10, 10, 14}, {2, 4})));
  // Row 1: mean 2.5, biased variance 1.25 -> (x - 2.5) / sqrt(1.25 + 1e-5)
  const double s = std::sqrt(1.25 + 1e-5);
  const std::vector<double> v = values(y.value());
  CHECK(v[0] == Approx(-1.5 / s));
  CHECK(v[3] == Approx(1.5 / s));
  // Row 2: mean 11, variance 3 -> the outlier is (14 - 11) / sqrt(3)
  CHECK(v[7] == Approx(3 / std::sqrt(3 + 1e-5)));
}

TEST_CASE("Dropout zeroes about p of the elements, keeps the mean, and is the identity in eval mode") {
  auto gen = std::make_shared<Generator>(11);
  Dropout drop(0.25, gen);
  const Variable x(ones({100000}, DType::Float64));
  const Tensor y = drop.forward(x).value();
  const double kept = sum(ne(y, zeros({1}, DType::Float64)).to(DType::Float64)).item() / 100000;
  CHECK(kept == Approx(0.75).margin(0.01));
  CHECK(max(y).item() == Approx(1 / 0.75));  // survivors scaled by 1/(1-p)
  CHECK(mean(y).item() == Approx(1.0).margin(0.01));
  drop.eval();
  CHECK(drop.forward(x).value().shares_storage_with(x.value()));
  CHECK_THROWS_MSG(Dropout(1.0, gen), ValueError, "Dropout: p must be in [0, 1), got 1");
}

TEST_CASE("xavier_uniform_ draws from U(-a, a) with a = sqrt(6 / (fan_in + fan_out))") {
  Generator gen(5);
  Variable w(zeros({200, 100}), true);
  xavier_uniform_(w, gen);
  const double a = std::sqrt(6.0 / 300);
  CHECK(max(w.value()).item() <= a);
  CHECK(min(w.value()).item() >= -a);
  CHECK(max(w.value()).item() > 0.95 * a);
  CHECK(var(w.value()).item() == Approx(a * a / 3).epsilon(0.03));
  CHECK_THROWS_MSG(xavier_uniform_(Variable(zeros({3}), true), gen), ShapeError,
                   "xavier_uniform_: needs at least 2 dimensions");
}

TEST_CASE("layer constructors reject impossible sizes") {
  Generator gen;
  CHECK_THROWS_MSG(Linear(0, 3, gen), ValueError, "Linear: sizes must be positive, got in 0, out 3");
  CHECK_THROWS_MSG(Embedding(5, -1, gen), ValueError, "Embedding: sizes must be positive");
  CHECK_THROWS_MSG(LayerNorm(0), ValueError, "LayerNorm: size must be positive");
}
