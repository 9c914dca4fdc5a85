// Fused primitives: hand-computed values, and agreement with their unfused compositions (values and
// gradients, for the same random upstream gradient). Their gradient checks are in autograd_op_checks().
#include <bit>
#include <cmath>

#include "helpers.h"
#include "tensor/kernels/vector_loops.h"

using namespace gradformer;
using test::rnd;
using test::values;
using V = std::vector<Variable>;

namespace {

// Runs f and g on fresh leaves copied from inputs, back-propagates the same upstream gradient, and
// checks outputs and every input gradient agree within tol.
void check_agree(const std::function<Variable(const V&)>& f, const std::function<Variable(const V&)>& g,
                 const std::vector<Tensor>& inputs, double tol) {
  auto run = [&](const std::function<Variable(const V&)>& fn, std::vector<Tensor>& grads) {
    V xs;
    for (const Tensor& t : inputs) xs.emplace_back(t.clone(), true);
    Variable out = fn(xs);
    Generator gen(99);
    out.backward(randn(out.shape(), gen, out.dtype()));
    for (const Variable& x : xs) grads.push_back(x.grad());
    return out.value();
  };
  std::vector<Tensor> fused_grads, unfused_grads;
  const std::vector<double> a = values(run(f, fused_grads)), b = values(run(g, unfused_grads));
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i] == Approx(b[i]).margin(tol).epsilon(tol));
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::vector<double> ga = values(fused_grads[k]), gb = values(unfused_grads[k]);
    REQUIRE(ga.size() == gb.size());
    for (size_t i = 0; i < ga.size(); ++i) CHECK(ga[i] == Approx(gb[i]).margin(tol).epsilon(tol));
  }
}

}  // namespace

TEST_CASE("softmax by hand") {
  // exp(log k) = k: softmax([0, log 2, log 3]) = [1, 2, 3] / 6
  Variable x(tensor({0.0, std::log(2.0), std::log(3.0)}, {3}, DType::Float64), true);
  const std::vector<double> y = values(softmax(x).value());
  CHECK(y[0] == Approx(1.0 / 6));
  CHECK(y[1] == Approx(2.0 / 6));
  CHECK(y[2] == Approx(3.0 / 6));
  // a sum of probabilities is 1 whatever x is: its gradient is zero
  sum(softmax(x)).backward();
  for (double g : values(x.grad())) CHECK(g == Approx(0).margin(1e-15));
  // huge logits do not overflow
  const std::vector<double> big = values(softmax(Variable(tensor({1000, 1000}, {2}))).value());
  CHECK(big == std::vector<double>{0.5, 0.5});
  const std::vector<double> lbig = values(log_softmax(Variable(tensor({1000, 0}, {2}, DType::Float64))).value());
  CHECK(lbig[0] == Approx(0).margin(1e-12));
  CHECK(lbig[1] == Approx(-1000));
}

TEST_CASE("fused softmax and log_softmax agree with their compositions") {
  for (int64_t dim : {-1, 0, 1}) {
    check_agree([dim](const V& v) { return softmax(v[0], dim); },
                [dim](const V& v) { return softmax_unfused(v[0], dim); }, {rnd({4, 6, 5}, 10, -4, 4)}, 1e-12);
    check_agree([dim](const V& v) { return log_softmax(v[0], dim); },
                [dim](const V& v) { return log_softmax_unfused(v[0], dim); }, {rnd({4, 6, 5}, 11, -4, 4)}, 1e-12);
  }
  // float32, in parallel over many rows
  check_agree([](const V& v) { return softmax(v[0]); }, [](const V& v) { return softmax_unfused(v[0]); },
              {rnd({300, 70}, 12, -4, 4).to(DType::Float32)}, 1e-5);
}

TEST_CASE("layer_norm by hand") {
  // x = [1, 2, 3]: mean 2, biased variance 2/3, y = (x - 2) / sqrt(2/3 + eps)
  Variable x(tensor({1, 2, 3}, {1, 3}, DType::Float64), true);
  const double eps = 1e-5, s = 1 / std::sqrt(2.0 / 3 + eps);
  const std::vector<double> y = values(layer_norm(x, Variable(), Variable(), eps).value());
  CHECK(y[0] == Approx(-s));
  CHECK(y[1] == Approx(0).margin(1e-15));
  CHECK(y[2] == Approx(s));
  // with weight w and bias b: y * w + b; db = sum of g over rows, dw = sum of g * xhat
  Variable w(tensor({2, 2, 2}, {3}, DType::Float64), true), b(tensor({1, 1, 1}, {3}, DType::Float64), true);
  Variable out = layer_norm(x, w, b, eps);
  CHECK(values(out.value())[0] == Approx(-2 * s + 1));
  sum(out).backward();
  CHECK(values(b.grad()) == std::vector<double>{1, 1, 1});
  CHECK(values(w.grad())[0] == Approx(-s));
  // the output's sum does not depend on x (it is sum(xhat) * 2 + 3 = 3): dx = 0
  for (double g : values(x.grad())) CHECK(g == Approx(0).margin(1e-12));
  CHECK_THROWS_MSG(layer_norm(x, Variable(zeros({4}, DType::Float64)), b), ShapeError,
                   "layer_norm: weight has shape [4], expected [3] for x of shape [1, 3]");
}

TEST_CASE("fused layer_norm agrees with its composition") {
  auto fused = [](const V& v) { return layer_norm(v[0], v[1], v[2]); };
  auto unfused = [](const V& v) { return layer_norm_unfused(v[0], v[1], v[2]); };
  check_agree(fused, unfused, {rnd({3, 4, 8}, 30, -3, 3), rnd({8}, 31), rnd({8}, 32)}, 1e-10);
  check_agree(fused, unfused,
              {rnd({256, 64}, 33, -3, 3).to(DType::Float32), rnd({64}, 34).to(DType::Float32),
               rnd({64}, 35).to(DType::Float32)},
              1e-4);
}

TEST_CASE("cross_entropy by hand") {
  // logits [0, 0] -> p = [1/2, 1/2]: loss log 2;  logits [0, log 3] with target 1 -> p = 3/4: loss -log(3/4)
  Variable logits(tensor({0, 0, 0, std::log(3.0)}, {2, 2}, DType::Float64), true);
  const Tensor target = tensor({0, 1}, {2}, DType::Int64);
  Variable loss = cross_entropy(logits, target);
  CHECK(loss.item() == Approx((std::log(2.0) - std::log(0.75)) / 2));
  loss.backward();
  // dL/dx = (p - onehot) / 2
  const std::vector<double> g = values(logits.grad());
  CHECK(g[0] == Approx((0.5 - 1) / 2));
  CHECK(g[1] == Approx(0.5 / 2));
  CHECK(g[2] == Approx(0.25 / 2));
  CHECK(g[3] == Approx((0.75 - 1) / 2));
}

TEST_CASE("cross_entropy: label smoothing and the ignore index") {
  // Uniform logits: p = 1/C everywhere, so the loss is log C whatever the smoothing.
  Variable uniform(zeros({3, 4}, DType::Float64), true);
  CHECK(cross_entropy(uniform, tensor({0, 1, 2}, {3}, DType::Int64), {.label_smoothing = 0.1}).item() ==
        Approx(std::log(4.0)));
  // Smoothing eps with logits [0, log 3], target 1: loss = -(1 - eps + eps/2) log(3/4) - eps/2 log(1/4)
  const double eps = 0.2;
  Variable x(tensor({0, std::log(3.0)}, {1, 2}, DType::Float64), true);
  CHECK(cross_entropy(x, tensor({1}, {1}, DType::Int64), {.label_smoothing = eps}).item() ==
        Approx(-(1 - eps / 2) * std::log(0.75) - eps / 2 * std::log(0.25)));
  // Ignored rows (padding, here id 0) add no loss, get no gradient, and do not count in the mean.
  Variable logits(tensor({0, 0, 5, -5, 0, std::log(3.0)}, {3, 2}, DType::Float64), true);
  Variable loss = cross_entropy(logits, tensor({0, 0, 1}, {3}, DType::Int64), {.ignore_index = 0});
  CHECK(loss.item() == Approx(-std::log(0.75)));  // only the last row counts
  loss.backward();
  const std::vector<double> g = values(logits.grad());
  CHECK(g[0] == 0.0);
  CHECK(g[3] == 0.0);
  CHECK(g[5] == Approx(0.75 - 1));
  // Every target ignored: loss 0, gradient 0.
  Variable all_pad(rnd({2, 3}, 40), true);
  Variable zero = cross_entropy(all_pad, tensor({7, 7}, {2}, DType::Int64), {.ignore_index = 7});
  CHECK(zero.item() == 0.0);
  zero.backward();
  CHECK(values(all_pad.grad()) == std::vector<double>(6, 0.0));
}

TEST_CASE("cross_entropy errors") {
  Variable logits(zeros({2, 3}), true);
  CHECK_THROWS_MSG(cross_entropy(logits, tensor({0, 3}, {2}, DType::Int64)), IndexError,
                   "cross_entropy: target 3 at position 1 is outside [0, 3)");
  CHECK_THROWS_MSG(cross_entropy(logits, tensor({0, 1, 2}, {3}, DType::Int64)), ShapeError,
                   "cross_entropy: logits [2, 3]");
  CHECK_THROWS_MSG(cross_entropy(logits, tensor({0, 1}, {2})), DTypeError, "cross_entropy: target must be int64");
}

TEST_CASE("fused cross_entropy agrees with its composition") {
  Generator gen(60);
  const Tensor target = randint({64}, 0, 10, gen);
  for (double smoothing : {0.0, 0.1}) {
    const CrossEntropyOptions options{.ignore_index = 3, .label_smoothing = smoothing};
    check_agree([&](const V& v) { return cross_entropy(v[0], target, options); },
                [&](const V& v) { return cross_entropy_unfused(v[0], target, options); }, {rnd({64, 10}, 61, -5, 5)},
                1e-12);
  }
  check_agree([&](const V& v) { return cross_entropy(v[0], target, {.label_smoothing = 0.1}); },
              [&](const V& v) { return cross_entropy_unfused(v[0], target, {.label_smoothing = 0.1}); },
              {rnd({64, 10}, 62, -5, 5).to(DType::Float32)}, 1e-5);
}

TEST_CASE("fused kernels give the same bits for any thread count") {
  // Large enough that rows (and layer_norm's columns) are split between threads.
  const Tensor x = rnd({512, 96}, 70, -3, 3).to(DType::Float32);
  const Tensor w = rnd({96}, 71).to(DType::Float32), b = rnd({96}, 72).to(DType::Float32);
  Generator gen(73);
  const Tensor target = randint({512}, 0, 96, gen);
  auto run = [&](int threads) {
    set_num_threads(threads);
    Variable xv(x.clone(), true), wv(w.clone(), true), bv(b.clone(), true);
    Variable loss = cross_entropy(layer_norm(xv, wv, bv), target, {.ignore_index = 5, .label_smoothing = 0.1}) +
                    sum(softmax(xv) * log_softmax(xv));
    loss.backward();
    std::vector<float> all = loss.value().to_vector<float>();
    for (const Variable& v : {xv, wv, bv})
      for (float g : v.grad().to_vector<float>()) all.push_back(g);
    return all;
  };
  const int original = num_threads();
  const std::vector<float> one = run(1), two = run(2), three = run(3);
  set_num_threads(original);
  CHECK(one == two);
  CHECK(one == three);
}

TEST_CASE("layer_norm's AVX2 loops give the bits of its portable loops") {
  // tensor/kernels/vector_loops.h: wider vectors, the same operations in the same order, rounded alike
  if (!avx2_loops_available()) return;  // one build only (test_vector_loops.cpp checks the switch then refuses)
  // every output and gradient as bit patterns (float to double is exact, so equal bits stay equal)
  auto run = [](bool avx2, const Tensor& x, const Tensor& w, const Tensor& b, bool x_wants_grad) {
    const Avx2LoopsFor build(avx2);
    Variable xv(x.clone(), x_wants_grad), wv, bv;
    if (w.defined()) wv = Variable(w.clone(), true), bv = Variable(b.clone(), true);
    Variable y = layer_norm(xv, wv, bv);
    Generator gen(81);
    y.backward(randn(y.shape(), gen, y.dtype()));
    std::vector<uint64_t> bits;
    for (const Variable& v : {y, xv, wv, bv}) {
      if (!v.defined()) continue;
      for (double d : values(v.value())) bits.push_back(std::bit_cast<uint64_t>(d));
      if (v.requires_grad() && v.grad().defined())
        for (double d : values(v.grad())) bits.push_back(std::bit_cast<uint64_t>(d));
    }
    return bits;
  };
  // how many numbers differ in their bits (a count, so that a failure prints one number, not two vectors)
  auto differing = [](const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
    REQUIRE(a.size() == b.size());
    int64_t n = 0;
    for (size_t i = 0; i < a.size(); ++i) n += a[i] != b[i];
    return n;
  };
  for (DType dtype : {DType::Float32, DType::Float64})
    for (int64_t D : {1, 5, 16, 37, 128, 515}) {
      // 70 rows: two full blocks of the backward's 32 rows and a ragged one
      const Tensor x = rnd({70, D}, 80, -3, 3).to(dtype), w = rnd({D}, 82).to(dtype), b = rnd({D}, 83).to(dtype);
      INFO("dtype " << dtype << ", D " << D);
      CHECK(differing(run(false, x, w, b, true), run(true, x, w, b, true)) == 0);
      CHECK(differing(run(false, x, Tensor(), Tensor(), true), run(true, x, Tensor(), Tensor(), true)) == 0);
      CHECK(differing(run(false, x, w, b, false), run(true, x, w, b, false)) == 0);  // w's and b's gradients only
    }
}
