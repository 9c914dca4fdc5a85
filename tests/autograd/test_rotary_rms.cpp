// The ops Llama's block adds to autograd: rms_norm (fused, against its composed reference and values
// worked out by hand), silu (the formula and central differences) and rotary on tables written in the
// test (the tables of real angles, rotary_tables(), are the model's: tests/transformer/model/test_rotary.cpp).
#include <cmath>
#include <functional>
#include <vector>

#include "helpers.h"

using namespace gradformer;
using test::rnd;
using test::values;

namespace rotary_rms_test {

using Fn = std::function<Variable(const std::vector<Variable>&)>;

// f and g on fresh leaves copied from `inputs`, the same upstream gradient back-propagated through
// both: the outputs and every input's gradient agree within tol (relative and absolute).
void check_same(const Fn& f, const Fn& g, const std::vector<Tensor>& inputs, double tol) {
  auto run = [&](const Fn& fn, std::vector<Tensor>& grads) {
    std::vector<Variable> xs;
    for (const Tensor& t : inputs) xs.emplace_back(t.clone(), true);
    const Variable out = fn(xs);
    Generator gen(7);
    out.backward(randn(out.shape(), gen, out.dtype()));
    for (const Variable& x : xs) grads.push_back(x.grad());
    return values(out.value());
  };
  std::vector<Tensor> ga, gb;
  const std::vector<double> a = run(f, ga), b = run(g, gb);
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) CHECK(a[i] == Approx(b[i]).margin(tol).epsilon(tol));
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::vector<double> da = values(ga[k]), db = values(gb[k]);
    REQUIRE(da.size() == db.size());
    for (size_t i = 0; i < da.size(); ++i) CHECK(da[i] == Approx(db[i]).margin(tol).epsilon(tol));
  }
}

double silu_formula(double x) { return x / (1 + std::exp(-x)); }

}  // namespace rotary_rms_test

using rotary_rms_test::check_same;

TEST_CASE("rms_norm by hand: x = (3, 4), w = (1, 2) is (3, 8) / sqrt(12.5)") {
  // mean(x^2) = (9 + 16) / 2 = 12.5, rms = 3.5355..., y = x / rms * w. eps must be positive; 1e-300
  // added to 12.5 leaves it 12.5 in float64, so this is the eps-free value.
  Variable x(tensor({3, 4}, {1, 2}, DType::Float64), true);
  Variable w(tensor({1, 2}, {2}, DType::Float64), true);
  const double rms = std::sqrt(12.5);
  const std::vector<double> y = values(rms_norm(x, w, 1e-300).value());
  REQUIRE(y.size() == 2);
  CHECK(y[0] == Approx(3 / rms).epsilon(1e-14));
  CHECK(y[1] == Approx(8 / rms).epsilon(1e-14));
  CHECK(y[1] == Approx(2.2627416997969522).epsilon(1e-14));  // 8 / 3.5355339...
  // without a weight: the unit-gain row x / rms, whose mean square is 1
  const std::vector<double> unit = values(rms_norm(x, Variable(), 1e-300).value());
  CHECK(unit[0] * unit[0] + unit[1] * unit[1] == Approx(2.0).epsilon(1e-14));
  CHECK_THROWS_MSG(rms_norm(x, w, 0.0), ValueError, "eps must be positive");
}

TEST_CASE("rms_norm: eps is added to mean(x^2) under the root, so a zero row gives 0, not NaN") {
  // x = [1, 1], eps 3: sqrt(mean(x^2) + eps) = sqrt(1 + 3) = 2, y = 0.5. Added to the rms instead,
  // 1 / (1 + 3) = 0.25; added outside without the root, 1 / 4 too. Only the first is right.
  const std::vector<double> y =
      values(rms_norm(Variable(tensor({1, 1}, {1, 2}, DType::Float64)), Variable(), 3.0).value());
  CHECK(y[0] == Approx(0.5).epsilon(1e-15));
  CHECK(y[1] == Approx(0.5).epsilon(1e-15));
  // A zero row: y = 0 / sqrt(eps) = 0, and its gradient is finite: with xhat = 0 the mean term
  // vanishes and dx = g w / sqrt(eps), here 1000 g w for eps 1e-6.
  Variable zero(zeros({1, 3}, DType::Float64), true);
  Variable w(tensor({1, 2, 3}, {3}, DType::Float64), true);
  const Variable out = rms_norm(zero, w, 1e-6);
  for (double v : values(out.value())) CHECK(v == 0.0);
  out.backward(tensor({1, -1, 0.5}, {1, 3}, DType::Float64));
  const std::vector<double> dx = values(zero.grad());
  CHECK(dx[0] == Approx(1000.0 * 1 * 1).epsilon(1e-9));
  CHECK(dx[1] == Approx(1000.0 * -1 * 2).epsilon(1e-9));
  CHECK(dx[2] == Approx(1000.0 * 0.5 * 3).epsilon(1e-9));
  for (double v : values(w.grad())) CHECK(v == 0.0);  // dw = g xhat = 0
  // float32 too: no NaN from 0 / 0
  for (double v : values(rms_norm(Variable(zeros({2, 4})), Variable(ones({4})), 1e-5).value())) CHECK(v == 0.0);
}

TEST_CASE("rms_norm: fused equals rms_norm_unfused, values and gradients, float64 and float32") {
  auto fused = [](const std::vector<Variable>& v) { return rms_norm(v[0], v[1], 1e-5); };
  auto unfused = [](const std::vector<Variable>& v) { return rms_norm_unfused(v[0], v[1], 1e-5); };
  // 70 rows: the weight's gradient is summed in blocks of 32 rows, three blocks, the last partial
  check_same(fused, unfused, {rnd({70, 24}, 1, -3, 3), rnd({24}, 2, 0.5, 1.5)}, 1e-12);
  check_same(fused, unfused, {rnd({5, 15, 24}, 3, -3, 3), rnd({24}, 4, -1, 1)}, 1e-12);  // 75 rows in 3-d
  check_same(fused, unfused, {rnd({70, 24}, 5, -3, 3).to(DType::Float32), rnd({24}, 6).to(DType::Float32)}, 2e-5);
  // a single row, a single column
  check_same(fused, unfused, {rnd({1, 9}, 7), rnd({9}, 8)}, 1e-12);
  check_same(fused, unfused, {rnd({40, 1}, 9), rnd({1}, 10)}, 1e-12);
  // no weight
  check_same([](const std::vector<Variable>& v) { return rms_norm(v[0], Variable(), 1e-6); },
             [](const std::vector<Variable>& v) { return rms_norm_unfused(v[0], Variable(), 1e-6); },
             {rnd({33, 7}, 11, -2, 2)}, 1e-12);
}

TEST_CASE("rms_norm: a non-contiguous input gives the values and gradients of its contiguous copy") {
  const Tensor base = rnd({24, 40}, 12, -2, 2), w = rnd({24}, 13);
  auto fused_t = [](const std::vector<Variable>& v) { return rms_norm(transpose(v[0], 0, 1), v[1], 1e-5); };
  auto unfused_t = [](const std::vector<Variable>& v) { return rms_norm_unfused(transpose(v[0], 0, 1), v[1], 1e-5); };
  check_same(fused_t, unfused_t, {base, w}, 1e-12);  // rows of 24 strided by 40, 40 rows
  // and the same numbers given contiguous: identical output
  const Tensor strided = base.transpose(0, 1);
  REQUIRE_FALSE(strided.is_contiguous());
  CHECK(values(rms_norm(Variable(strided), Variable(w)).value()) ==
        values(rms_norm(Variable(strided.contiguous()), Variable(w)).value()));
  // float32, non-contiguous, many rows
  check_same(fused_t, unfused_t, {base.to(DType::Float32), w.to(DType::Float32)}, 2e-5);
}

TEST_CASE("silu: x / (1 + e^-x) at 0, 1 and -1, and its gradient against central differences") {
  const std::vector<double> y = values(silu(Variable(tensor({0, 1, -1}, {3}, DType::Float64))).value());
  CHECK(y[0] == 0.0);
  CHECK(y[1] == Approx(1 / (1 + std::exp(-1.0))).epsilon(1e-15));  // 0.7310585786...
  CHECK(y[2] == Approx(-1 / (1 + std::exp(1.0))).epsilon(1e-15));  // -0.2689414213...
  CHECK(y[1] == Approx(0.7310585786300049).epsilon(1e-14));
  CHECK(y[2] == Approx(-0.2689414213699951).epsilon(1e-14));
  // the gradient at several points, against (f(x + h) - f(x - h)) / 2h of the formula written above
  const std::vector<double> points{-6, -2.5, -1, -0.3, 0, 0.4, 1, 2, 7};
  Variable x(from_vector(points, {static_cast<int64_t>(points.size())}), true);
  sum(silu(x)).backward();
  const std::vector<double> grad = values(x.grad());
  const double h = 1e-5;
  for (size_t i = 0; i < points.size(); ++i) {
    const double numeric =
        (rotary_rms_test::silu_formula(points[i] + h) - rotary_rms_test::silu_formula(points[i] - h)) / (2 * h);
    INFO("x = " << points[i]);
    CHECK(grad[i] == Approx(numeric).margin(1e-9));
  }
  // far out: silu(-1000) = -0 and a slope of 0 (no NaN from inf / inf), silu(1000) = 1000, slope 1
  Variable far(tensor({-1000, 1000}, {2}, DType::Float64), true);
  const std::vector<double> far_y = values(silu(far).value());
  CHECK(far_y[0] == 0.0);
  CHECK(far_y[1] == 1000.0);
  sum(silu(far)).backward();
  CHECK(values(far.grad()) == std::vector<double>{0.0, 1.0});
}

TEST_CASE("rotary by hand: the pairs (x_i, x_{i+h}) turned by tables written in the test") {
  // d_k 4, h 2: pairs (x0, x2) and (x1, x3). Position 1's angles 0.3 and 0.7 (row 1 of the tables).
  const double a0 = 0.3, a1 = 0.7;
  const Tensor cos = tensor({1, 1, std::cos(a0), std::cos(a1)}, {2, 2}, DType::Float64);
  const Tensor sin = tensor({0, 0, std::sin(a0), std::sin(a1)}, {2, 2}, DType::Float64);
  const Variable x(tensor({1, 2, 3, 4}, {1, 4}, DType::Float64));  // [T = 1, d_k]
  const std::vector<double> out = values(rotary(x, cos, sin, 1).value());
  const std::vector<double> expected{1 * std::cos(a0) - 3 * std::sin(a0), 2 * std::cos(a1) - 4 * std::sin(a1),
                                     3 * std::cos(a0) + 1 * std::sin(a0), 4 * std::cos(a1) + 2 * std::sin(a1)};
  for (size_t i = 0; i < 4; ++i) CHECK(out[i] == Approx(expected[i]).epsilon(1e-15));
  CHECK(values(rotary(x, cos, sin, 0).value()) == std::vector<double>{1, 2, 3, 4});  // position 0: angle 0
  // the fused op against the composed one on arbitrary tables (not a rotation's), with gradients
  const Tensor c = rnd({7, 3}, 20), s = rnd({7, 3}, 21);
  for (int64_t start : {0, 2})
    check_same([&](const std::vector<Variable>& v) { return rotary(v[0], c, s, start); },
               [&](const std::vector<Variable>& v) { return rotary_unfused(v[0], c, s, start); },
               {rnd({2, 3, 5, 6}, 22 + start)}, 1e-13);
  // the checks: an odd width, tables of another width or dtype, positions past the table
  CHECK_THROWS_AS(rotary(Variable(rnd({2, 5}, 30)), c, s), ShapeError);
  CHECK_THROWS_AS(rotary(Variable(rnd({2, 8}, 31)), c, s), ShapeError);
  CHECK_THROWS_AS(rotary(Variable(rnd({2, 6}, 32)), c.to(DType::Float32), s.to(DType::Float32)), DTypeError);
  CHECK_THROWS_MSG(rotary(Variable(rnd({3, 6}, 33)), c, s, 5), ValueError, "positions 5 to 7 are outside");
}
