// Optimizers, gradient clipping, the learning-rate schedule and the loss module.
#include <cmath>

#include "autograd/helpers.h"
#include "nn/all.h"

using namespace gradformer;
using test::rnd;
using test::values;

namespace {

Variable param(std::initializer_list<double> v, DType dtype = DType::Float64) {
  return Variable(tensor(v, {static_cast<int64_t>(v.size())}, dtype), true);
}

void set_grad(Variable& p, std::initializer_list<double> g) {
  p.set_grad(tensor(g, {static_cast<int64_t>(g.size())}, p.dtype()));
}

// L(x) = sum(0.5 * a * x^2 + b * x), a quadratic with a different curvature per coordinate;
// its gradient is a * x + b. Computed through autograd, as training does.
void quadratic_backward(const Variable& x, const Tensor& a, const Tensor& b) {
  sum(Variable(a) * x * x * 0.5 + Variable(b) * x).backward();
}

}  // namespace

TEST_CASE("Adam: the first step computed by hand") {
  Variable p = param({1.0, 3.0});
  Adam adam({p}, {.lr = 0.1});  // beta1 0.9, beta2 0.98, eps 1e-9: the paper's
  set_grad(p, {0.5, -2.0});
  adam.step();
  // m = 0.1 g, v = 0.02 g^2; step_size = lr / (1 - 0.9) = 1; sqrt(v) / sqrt(1 - 0.98) = |g|
  // p -= 1 * 0.1 g / (|g| + 1e-9): about lr * sign(g)
  CHECK(p.value().at({0}) == Approx(1.0 - 0.1 * 0.5 / (0.5 + 1e-9)).epsilon(1e-14));
  CHECK(p.value().at({1}) == Approx(3.0 + 0.1 * 2.0 / (2.0 + 1e-9)).epsilon(1e-14));
  CHECK(adam.first_moment(0).at({0}) == Approx(0.05).epsilon(1e-14));
  CHECK(adam.second_moment(0).at({1}) == Approx(0.02 * 4).epsilon(1e-14));
  CHECK(adam.step_count() == 1);
}

TEST_CASE("Adam: bias correction makes every early step lr for a constant gradient") {
  // Without correction the first step would be lr * (1 - beta1) / sqrt(1 - beta2) = 0.0707 lr;
  // with it, m / (1 - beta1^t) and v / (1 - beta2^t) are exactly g and g^2 for a constant g.
  Variable p = param({0.0});
  Adam adam({p}, {.lr = 0.01, .eps = 0});
  for (int t = 1; t <= 5; ++t) {
    const double before = p.value().at({0});
    set_grad(p, {0.25});
    adam.step();
    CHECK(before - p.value().at({0}) == Approx(0.01).epsilon(1e-12));
  }
}

TEST_CASE("SGD with momentum and weight decay, step by step by hand") {
  Variable p = param({1.0});
  SGD sgd({p}, {.lr = 0.1, .momentum = 0.9});
  // b = 0.9 b + g, p -= 0.1 b with g = 1: b = 1, 1.9, 2.71 -> p = 0.9, 0.71, 0.439
  for (double expected : {0.9, 0.71, 0.439}) {
    set_grad(p, {1.0});
    sgd.step();
    CHECK(p.value().at({0}) == Approx(expected).epsilon(1e-14));
  }
  Variable q = param({2.0, -4.0});
  SGD plain({q}, {.lr = 0.1, .weight_decay = 0.5});
  set_grad(q, {1.0, 1.0});
  plain.step();  // g + 0.5 p = 2 and -1 -> p = 2 - 0.2, -4 + 0.1
  CHECK(values(q.value()) == std::vector<double>{1.8, -3.9});
}

TEST_CASE("Adam and SGD agree with an independent reimplementation on a quadratic") {
  const Tensor a = tensor({1.0, 10.0, 0.1, 3.0}, {4}, DType::Float64);
  const Tensor b = tensor({0.5, -1.0, 2.0, 0.0}, {4}, DType::Float64);
  const std::vector<double> start{1.0, -2.0, 0.5, 4.0};
  // The textbook form (Kingma & Ba, algorithm 1), written independently of nn/adam.cpp.
  struct Reference {
    std::vector<double> x, m, v;
    void adam_step(int t, const std::vector<double>& a, const std::vector<double>& b) {
      const double lr = 0.05, b1 = 0.9, b2 = 0.98, eps = 1e-9;
      for (size_t i = 0; i < x.size(); ++i) {
        const double g = a[i] * x[i] + b[i];
        m[i] = b1 * m[i] + (1 - b1) * g;
        v[i] = b2 * v[i] + (1 - b2) * g * g;
        const double m_hat = m[i] / (1 - std::pow(b1, t)), v_hat = v[i] / (1 - std::pow(b2, t));
        x[i] -= lr * m_hat / (std::sqrt(v_hat) + eps);
      }
    }
    void sgd_step(const std::vector<double>& a, const std::vector<double>& b) {
      for (size_t i = 0; i < x.size(); ++i) {
        const double g = a[i] * x[i] + b[i] + 0.01 * x[i];
        m[i] = 0.8 * m[i] + g;
        x[i] -= 0.02 * m[i];
      }
    }
  };
  const std::vector<double> av = values(a), bv = values(b);

  Variable x(from_vector(start, {4}), true);
  Adam adam({x}, {.lr = 0.05});
  Reference ref{start, std::vector<double>(4), std::vector<double>(4)};
  for (int t = 1; t <= 100; ++t) {
    adam.zero_grad();
    quadratic_backward(x, a, b);
    adam.step();
    ref.adam_step(t, av, bv);
  }
  const std::vector<double> got = values(x.value());
  for (size_t i = 0; i < 4; ++i) CHECK(got[i] == Approx(ref.x[i]).epsilon(1e-10).margin(1e-12));
  CHECK(got[0] == Approx(-0.5).margin(0.05));  // and it is heading for the minimum -b/a

  Variable y(from_vector(start, {4}), true);
  SGD sgd({y}, {.lr = 0.02, .momentum = 0.8, .weight_decay = 0.01});
  Reference sref{start, std::vector<double>(4), std::vector<double>(4)};
  for (int t = 1; t <= 100; ++t) {
    sgd.zero_grad();
    quadratic_backward(y, a, b);
    sgd.step();
    sref.sgd_step(av, bv);
  }
  const std::vector<double> sgot = values(y.value());
  for (size_t i = 0; i < 4; ++i) CHECK(sgot[i] == Approx(sref.x[i]).epsilon(1e-10).margin(1e-12));
}

TEST_CASE("Adam in float32 follows the float64 result closely") {
  const Tensor a = tensor({1.0, 10.0, 0.1}, {3}, DType::Float64), b = tensor({0.5, -1.0, 2.0}, {3}, DType::Float64);
  Variable x64(tensor({1, -2, 0.5}, {3}, DType::Float64), true), x32(tensor({1, -2, 0.5}, {3}), true);
  Adam adam64({x64}, {.lr = 0.01}), adam32({x32}, {.lr = 0.01});
  for (int t = 0; t < 50; ++t) {
    adam64.zero_grad(), adam32.zero_grad();
    quadratic_backward(x64, a, b);
    quadratic_backward(x32, a.to(DType::Float32), b.to(DType::Float32));
    adam64.step(), adam32.step();
  }
  const std::vector<double> v64 = values(x64.value()), v32 = values(x32.value());
  for (size_t i = 0; i < 3; ++i) CHECK(v32[i] == Approx(v64[i]).margin(1e-5));
}

TEST_CASE("Parameters without a gradient are skipped and keep their own step count") {
  Variable p = param({1.0}), q = param({1.0});
  Adam adam({p, q}, {.lr = 0.1});
  set_grad(p, {1.0});
  adam.step();
  adam.step();  // p's gradient is still there: p moves twice; q has none
  CHECK(q.value().at({0}) == 1.0);
  CHECK(values(adam.second_moment(1)) == std::vector<double>{0.0});
  CHECK(values(adam.state().at("adam.param_steps")) == std::vector<double>{2, 0});
  // q's first update is bias-corrected as a first update (t = 1 for q), so it moves by ~lr.
  adam.zero_grad();
  set_grad(q, {3.0});
  adam.step();
  CHECK(q.value().at({0}) == Approx(0.9).epsilon(1e-8));
  CHECK(adam.step_count() == 3);

  Variable r = param({5.0});
  SGD sgd({r}, {.lr = 0.1, .momentum = 0.9});
  sgd.step();
  CHECK(r.value().at({0}) == 5.0);
}

TEST_CASE("Optimizer state round trip: a resumed run takes bitwise the same steps") {
  for (const bool use_adam : {true, false}) {
    Generator gen(3);
    Linear model(3, 2, gen), resumed(3, 2, gen);
    const Tensor x = randn({5, 3}, gen), target = from_vector(std::vector<int64_t>{0, 1, 1, 0, 1}, {5});
    auto make = [&](Linear& m) -> std::unique_ptr<Optimizer> {
      if (use_adam) return std::make_unique<Adam>(m.parameters(), AdamOptions{.lr = 0.01});
      return std::make_unique<SGD>(m.parameters(), SGDOptions{.lr = 0.1, .momentum = 0.9});
    };
    auto train = [&](Linear& m, Optimizer& opt, int steps) {
      for (int s = 0; s < steps; ++s) {
        opt.zero_grad();
        cross_entropy(m.forward(x), target).backward();
        opt.step();
      }
    };
    auto opt = make(model);
    train(model, *opt, 3);
    // A checkpoint: copies, since state() and state_dict() share the live tensors.
    StateDict saved_params, saved_state;
    for (const auto& [name, t] : model.state_dict()) saved_params[name] = t.clone();
    for (const auto& [name, t] : opt->state()) saved_state[name] = t.clone();
    train(model, *opt, 4);

    auto opt2 = make(resumed);
    resumed.load_state_dict(saved_params);
    opt2->load_state(saved_state);
    CHECK(opt2->step_count() == 3);
    train(resumed, *opt2, 4);
    CHECK(values(resumed.weight.value()) == values(model.weight.value()));  // bitwise
    CHECK(values(resumed.bias.value()) == values(model.bias.value()));
  }
}

TEST_CASE("Optimizer errors name the optimizer and the values") {
  Variable p = param({1.0});
  CHECK_THROWS_MSG(Adam({}, {}), ValueError, "adam: the parameter list is empty");
  CHECK_THROWS_MSG(Adam({p, p}), ValueError, "adam: parameter 1 appears twice");
  CHECK_THROWS_MSG(Adam({Variable()}), ValueError, "adam: parameter 0 is undefined");
  CHECK_THROWS_MSG(Adam({p}, {.beta1 = 1.0}), ValueError, "Adam: beta1 must be in [0, 1), got 1");
  CHECK_THROWS_MSG(Adam({p}, {.beta2 = -0.1}), ValueError, "Adam: beta2 must be in [0, 1), got -0.1");
  CHECK_THROWS_MSG(Adam({p}, {.eps = -1}), ValueError, "Adam: eps must be finite and >= 0, got -1");
  CHECK_THROWS_MSG(Adam({p}, {.lr = NAN}), ValueError, "adam: lr must be finite and >= 0, got nan");
  CHECK_THROWS_MSG(SGD({p}, {.lr = -1}), ValueError, "sgd: lr must be finite and >= 0, got -1");
  CHECK_THROWS_MSG(SGD({p}, {.momentum = -0.5}), ValueError, "SGD: momentum must be finite and >= 0, got -0.5");
  CHECK_THROWS_MSG(SGD({p}, {.weight_decay = INFINITY}), ValueError,
                   "SGD: weight_decay must be finite and >= 0, got inf");
  CHECK_THROWS_MSG(SGD({Variable(from_vector(std::vector<int64_t>{1}, {1}))}, {}), ValueError,
                   "sgd: parameter 0 is int64");
  Adam adam({p});
  CHECK_THROWS_MSG(adam.set_lr(-0.5), ValueError, "adam: lr must be finite and >= 0, got -0.5");
  adam.set_lr(0.25);
  CHECK(adam.lr() == 0.25);

  StateDict state = adam.state();
  state.erase("adam.m.0");
  state["adam.v.0"] = zeros({2}, DType::Float64);
  state["adam.extra"] = zeros({1});
  state["adam.step"] = from_vector(std::vector<int64_t>{-1}, Shape{});
  const std::string msg = test::error_message<ValueError>([&] { adam.load_state(state); });
  CHECK(msg.find("adam.load_state: the state does not match") != std::string::npos);
  CHECK(msg.find("missing: adam.m.0") != std::string::npos);
  CHECK(msg.find("adam.v.0: expected [1] float64, got [2] float64") != std::string::npos);
  CHECK(msg.find("unexpected: adam.extra") != std::string::npos);
  CHECK(msg.find("adam.step: a step count cannot be negative, got -1") != std::string::npos);
  CHECK_THROWS_MSG(adam.load_state(SGD({p}, {.momentum = 0.9}).state()), ValueError,
                   "unexpected: sgd.momentum_buffer.0");
}

TEST_CASE("clip_grad_norm scales by the global norm and returns the norm before clipping") {
  Variable p = param({3.0, 4.0}), q = param({12.0}), no_grad = param({1.0});
  set_grad(p, {3.0, 4.0});
  set_grad(q, {12.0});
  CHECK(clip_grad_norm({p, q, no_grad}, 20.0) == Approx(13.0));  // sqrt(9 + 16 + 144): under 20, unchanged
  CHECK(values(p.grad()) == std::vector<double>{3.0, 4.0});
  CHECK(clip_grad_norm({p, q, no_grad}, 6.5) == Approx(13.0));
  const double scale = 6.5 / (13.0 + 1e-6);
  CHECK(p.grad().at({0}) == Approx(3.0 * scale).epsilon(1e-14));
  CHECK(p.grad().at({1}) == Approx(4.0 * scale).epsilon(1e-14));
  CHECK(q.grad().at({0}) == Approx(12.0 * scale).epsilon(1e-14));
  CHECK(clip_grad_norm({p, q}, 100.0) == Approx(6.5).epsilon(1e-6));  // now the norm is max_norm
  CHECK(values(p.value()) == std::vector<double>{3.0, 4.0});          // values untouched

  CHECK_THROWS_MSG(clip_grad_norm({p}, 0.0), ValueError, "clip_grad_norm: max_norm must be positive and finite, got 0");
  set_grad(q, {NAN});
  CHECK_THROWS_MSG(clip_grad_norm({p, q}, 1.0), ValueError,
                   "clip_grad_norm: the gradient of parameter 1 [1] is not finite");
}

TEST_CASE("clip_grad_norm over many chunks: the exact sum, the same bits for one thread and two") {
  // g_k = (k mod 7) - 3 over 100,003 elements (several chunks and a ragged tail), float32: every
  // square and every partial sum is an integer far below 2^53, so the double sum is exact whatever
  // its order: sum of squares = 14,286 full cycles of (9 + 4 + 1 + 0 + 1 + 4 + 9) = 28 (k up to
  // 100,001), plus the one element k = 100,002 = 7 x 14,286: (0 - 3)^2 = 9.
  const int64_t n = 100003;
  std::vector<float> g(static_cast<size_t>(n));
  for (int64_t k = 0; k < n; ++k) g[static_cast<size_t>(k)] = static_cast<float>(k % 7 - 3);
  Variable p(zeros({n}), true);
  p.set_grad(from_vector(g, {n}));
  const double want = std::sqrt(14286.0 * 28 + 9);
  const int before = num_threads();
  set_num_threads(1);
  const double one = clip_grad_norm({p}, 1e9);
  set_num_threads(2);
  const double two = clip_grad_norm({p}, 1e9);
  set_num_threads(before);
  CHECK(one == want);
  CHECK(two == want);
}

TEST_CASE("NoamSchedule: linear warmup, peak at warmup, then inverse square root decay") {
  NoamSchedule s(4, 4, 2.0);  // factor * d^-0.5 = 1, warmup^-1.5 = 1/8
  CHECK(s.rate(1) == 0.125);  // 1 * 1/8
  CHECK(s.rate(2) == 0.25);
  CHECK(s.rate(4) == 0.5);    // both branches meet: 4^-0.5 = 4 / 8
  CHECK(s.rate(16) == 0.25);  // 16^-0.5
  CHECK(s.rate(64) == 0.125);
  CHECK(s.peak() == 0.5);

  NoamSchedule paper(512, 4000);                                                  // the base model
  CHECK(paper.peak() == Approx(1.0 / std::sqrt(512.0 * 4000.0)).epsilon(1e-14));  // 6.99e-4
  CHECK(paper.rate(3999) < paper.peak());
  CHECK(paper.rate(4001) < paper.peak());
  CHECK(paper.rate(16000) == Approx(paper.peak() / 2).epsilon(1e-14));

  CHECK_THROWS_MSG(s.rate(0), ValueError, "NoamSchedule.rate: steps count from 1, got step 0");
  CHECK_THROWS_MSG(NoamSchedule(512, 0), ValueError, "NoamSchedule: d_model and warmup must be positive");
  CHECK_THROWS_MSG(NoamSchedule(0, 10), ValueError, "got d_model 0, warmup 10");
}

TEST_CASE("max_adam_gradient_norm: half the square root of the dtype's largest value") {
  CHECK(max_adam_gradient_norm(DType::Float32) == std::sqrt(3.4028234663852886e38) / 2);
  CHECK(max_adam_gradient_norm(DType::Float64) == std::sqrt(1.7976931348623157e308) / 2);
}
