#include <cmath>
#include <limits>
#include <vector>

#include "catch.h"
#include "tensor/all.h"

using namespace gradformer;

static std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

TEST_CASE("binary ops broadcast as NumPy does") {
  const Tensor a = tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor row = tensor({10, 20, 30}, {3});
  const Tensor col = tensor({100, 200}, {2, 1});
  CHECK(values(a + row) == std::vector<double>{11, 22, 33, 14, 25, 36});
  CHECK(values(a + col) == std::vector<double>{101, 102, 103, 204, 205, 206});
  CHECK(values(row + col) == std::vector<double>{110, 120, 130, 210, 220, 230});  // [3] + [2,1] -> [2,3]
  CHECK(values(a - 1.0) == std::vector<double>{0, 1, 2, 3, 4, 5});
  CHECK(values(2.0 * a) == std::vector<double>{2, 4, 6, 8, 10, 12});
  CHECK(values(a / row) == std::vector<double>{0.1f, 0.1f, 0.1f, 0.4f, 0.25f, 0.2f});
  CHECK(values(1.0 - a) == std::vector<double>{0, -1, -2, -3, -4, -5});
  CHECK(values(-a).front() == -1.0);
  CHECK((a * row).shape() == Shape{2, 3});
}

TEST_CASE("every op gives the same values on non-contiguous views as on contiguous copies") {
  Generator gen(7);
  const Tensor base = randn({6, 8}, gen, DType::Float64);
  const Tensor views[] = {base.transpose(0, 1), base.slice(1, 1, 7, 2), base.expand({2, 6, 8}).select(0, 1),
                          base.slice(0, 1, 5).transpose(0, 1)};
  for (const Tensor& v : views) {
    const Tensor c = v.contiguous();
    CHECK(values(exp(v)) == values(exp(c)));
    CHECK(values(tanh(v)) == values(tanh(c)));
    CHECK(values(relu(v)) == values(relu(c)));
    CHECK(values(gelu(v)) == values(gelu(c)));
    CHECK(values(v * v + v) == values(c * c + c));
    CHECK(values(where(gt(v, zeros_like(v)), v, -v)) == values(where(gt(c, zeros_like(c)), c, -c)));
    CHECK(values(clamp(v, -0.5, 0.5)) == values(clamp(c, -0.5, 0.5)));
    CHECK(values(sum(v, {0})) == values(sum(c, {0})));
    CHECK(values(max(v, {1})) == values(max(c, {1})));
  }
}

TEST_CASE("unary math matches the standard library, in float32 and float64") {
  const Tensor x = tensor({0.25, 1.0, 4.0}, {3}, DType::Float64);
  CHECK(values(exp(x)) == std::vector<double>{std::exp(0.25), std::exp(1.0), std::exp(4.0)});
  CHECK(values(log(x)) == std::vector<double>{std::log(0.25), 0.0, std::log(4.0)});
  CHECK(values(sqrt(x)) == std::vector<double>{0.5, 1.0, 2.0});
  CHECK(values(rsqrt(x)) == std::vector<double>{2.0, 1.0, 0.5});
  CHECK(values(pow(x, 2.0)) == std::vector<double>{0.0625, 1.0, 16.0});
  CHECK(values(pow(x, tensor({2, 0, 0.5}, {3}, DType::Float64))) == std::vector<double>{0.0625, 1.0, 2.0});
  const Tensor f = tensor({-2, 0, 3}, {3});
  CHECK(values(relu(f)) == std::vector<double>{0, 0, 3});
  CHECK(values(tanh(f))[2] == Approx(std::tanh(3.0f)));
  // gelu(x) = x * Phi(x): Phi(0) = 1/2, Phi(-2) = 0.0227501..., Phi(3) = 0.9986501...
  CHECK(values(gelu(tensor({-2, 0, 3}, {3}, DType::Float64)))[0] == Approx(-2 * 0.022750131948179).epsilon(1e-12));
  CHECK(values(gelu(tensor({-2, 0, 3}, {3}, DType::Float64)))[2] == Approx(3 * 0.998650101968370).epsilon(1e-12));
  // GPT-2's approximation x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), computed by hand with Python's math:
  // 1 -> 0.841191990608..., -2 -> -0.045402305912..., 3 -> 2.996362607918...; within 5e-4 of the erf form.
  const std::vector<double> approx = values(gelu_tanh(tensor({1, -2, 3}, {3}, DType::Float64)));
  CHECK(approx[0] == Approx(0.8411919906082768).epsilon(1e-12));
  CHECK(approx[1] == Approx(-0.04540230591222494).epsilon(1e-12));
  CHECK(approx[2] == Approx(2.996362607918227).epsilon(1e-12));
  CHECK(std::abs(approx[0] - values(gelu(tensor({1}, {1}, DType::Float64)))[0]) < 5e-4);
  CHECK(values(clamp(f, -1, 1)) == std::vector<double>{-1, 0, 1});
  CHECK(values(maximum(f, zeros({3}))) == std::vector<double>{0, 0, 3});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(std::isnan(values(maximum(tensor({nan}, {1}, DType::Float64), zeros({1}, DType::Float64)))[0]));
}

TEST_CASE("int64 tensors support arithmetic and comparisons but not floating math") {
  const Tensor i = from_vector(std::vector<int64_t>{1, 2, 3}, {3});
  CHECK((i + i).to_vector<int64_t>() == std::vector<int64_t>{2, 4, 6});
  CHECK((i * 3.0).to_vector<int64_t>() == std::vector<int64_t>{3, 6, 9});
  CHECK(eq(i, full({1}, 2, DType::Int64)).to_vector<bool>() == std::vector<bool>{false, true, false});
  CHECK_THROWS_MSG(exp(i), DTypeError, "exp: expected a floating dtype (float32 or float64), got int64");
  CHECK_THROWS_MSG(i / i, DTypeError, "div: integer division is not supported");
}

TEST_CASE("comparisons give bool tensors, and where and masked_fill select by them") {
  const Tensor a = tensor({1, 5, 3}, {3});
  const Tensor b = tensor({2, 5, 1}, {3});
  CHECK(lt(a, b).dtype() == DType::Bool);
  CHECK(lt(a, b).to_vector<bool>() == std::vector<bool>{true, false, false});
  CHECK(le(a, b).to_vector<bool>() == std::vector<bool>{true, true, false});
  CHECK(gt(a, b).to_vector<bool>() == std::vector<bool>{false, false, true});
  CHECK(ge(a, b).to_vector<bool>() == std::vector<bool>{false, true, true});
  CHECK(eq(a, b).to_vector<bool>() == std::vector<bool>{false, true, false});
  CHECK(ne(a, b).to_vector<bool>() == std::vector<bool>{true, false, true});
  CHECK(values(where(lt(a, b), a, b)) == std::vector<double>{1, 5, 1});  // elementwise min
  // A causal mask: position i may not look at j > i.
  const Tensor pos = arange(3);
  const Tensor future = gt(pos.unsqueeze(0), pos.unsqueeze(1));  // [1,3] > [3,1] -> [3,3]
  const Tensor scores = masked_fill(zeros({3, 3}), future, -1e9);
  CHECK(values(scores) == std::vector<double>{0, -1e9f, -1e9f, 0, 0, -1e9f, 0, 0, 0});
  CHECK(logical_and(future, logical_not(future)).to_vector<bool>() == std::vector<bool>(9, false));
}

TEST_CASE("elementwise errors name the op, the shapes and the dtypes") {
  CHECK_THROWS_MSG(zeros({2, 3}) + zeros({4}), ShapeError, "add: shapes [2, 3] and [4] do not broadcast");
  CHECK_THROWS_MSG(zeros({2}) * zeros({2}, DType::Float64), DTypeError, "mul: dtypes differ: float32 and float64");
  CHECK_THROWS_MSG(where(zeros({2}), zeros({2}), zeros({2})), DTypeError,
                   "where: the condition must be bool, got float32");
  CHECK_THROWS_MSG(masked_fill(zeros({2}), zeros({2}), 0), DTypeError, "masked_fill: the mask must be bool");
  CHECK_THROWS_MSG(masked_fill(zeros({2}), zeros({3, 2}, DType::Bool), 0), ShapeError,
                   "masked_fill: mask of shape [3, 2] does not broadcast to [2]");
  CHECK_THROWS_MSG(clamp(zeros({1}), 1, 0), ValueError, "clamp: lower bound 1 is above upper bound 0");
  CHECK_THROWS_MSG(neg(zeros({1}, DType::Bool)), DTypeError, "neg: expected a numeric dtype, got bool");
  CHECK_THROWS_MSG(logical_not(zeros({1})), DTypeError, "logical_not: the input must be bool");
}

TEST_CASE("large tensors give the same result for every thread count") {
  Generator gen(1);
  const Tensor x = randn({300, 1000}, gen);
  set_num_threads(1);
  const std::vector<float> one = (exp(x) * x.transpose(0, 1).contiguous().transpose(0, 1)).to_vector<float>();
  const std::vector<float> s1 = sum(x, {0}).to_vector<float>();
  set_num_threads(2);
  CHECK((exp(x) * x.transpose(0, 1).contiguous().transpose(0, 1)).to_vector<float>() == one);
  CHECK(sum(x, {0}).to_vector<float>() == s1);
}

TEST_CASE("gelu_tanh in float32 is the float64 formula to within float32 rounding, at the extremes too") {
  // the formula as GPT-2 writes it, in float64: x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  auto exact = [](double x) {
    return 0.5 * x * (1 + std::tanh(0.79788456080286535588 /* sqrt(2/pi) */ * (x + 0.044715 * x * x * x)));
  };
  std::vector<double> xs;
  for (int i = -2000; i <= 2000; ++i) xs.push_back(i / 200.0);  // [-10, 10] in steps of 0.005
  const std::vector<double> got =
      values(gelu_tanh(from_vector(xs, {static_cast<int64_t>(xs.size())}).to(DType::Float32)));
  for (size_t i = 0; i < xs.size(); ++i) {
    const double want = exact(static_cast<double>(static_cast<float>(xs[i])));
    INFO("x = " << xs[i] << ": got " << got[i] << ", want " << want);
    // float32 roundings of u and of the result: the error in u grows the result's by a factor 2|u|
    // where the result is small (x < 0), so 32 epsilons, and an absolute floor for results near 0
    CHECK(std::abs(got[i] - want) <= 32 * std::numeric_limits<float>::epsilon() * (std::abs(want) + 1e-3));
  }
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<double> edge = values(gelu_tanh(tensor({-100, 100, -1e30, 1e30}, {4})));
  CHECK(std::abs(edge[0]) <= 1e-30);  // exactly -100 * tiny: GELU is 0 there
  CHECK(edge[1] == 100);
  CHECK(std::abs(edge[2]) <= 1e-6);
  CHECK(edge[3] == 1e30f);
  const std::vector<float> special = gelu_tanh(tensor({0, 0, 0}, {3}).fill_(inf)).to_vector<float>();
  CHECK(special[0] == inf);
  CHECK(std::isnan(gelu_tanh(full({1}, std::numeric_limits<double>::quiet_NaN())).item()));
}
