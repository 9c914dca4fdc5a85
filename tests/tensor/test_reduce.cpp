#include <cmath>
#include <limits>

#include "catch.h"
#include "tensor/all.h"

using namespace gradformer;

static std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

// x = [[[ 0,  1,  2,  3],
//       [ 4,  5,  6,  7],
//       [ 8,  9, 10, 11]],
//      [[12, 13, 14, 15],
//       [16, 17, 18, 19],
//       [20, 21, 22, 23]]]
static Tensor x234(DType dtype = DType::Float32) { return arange(24, dtype).reshape({2, 3, 4}); }

TEST_CASE("sum over each axis, over several, and over all, in float32 and float64") {
  for (DType dtype : {DType::Float32, DType::Float64}) {
    const Tensor x = x234(dtype);
    CHECK(values(sum(x)) == std::vector<double>{276});  // 0 + ... + 23 = 23 * 24 / 2
    CHECK(sum(x).dim() == 0);
    CHECK(values(sum(x, {0})) == std::vector<double>{12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34});
    CHECK(values(sum(x, {1})) == std::vector<double>{12, 15, 18, 21, 48, 51, 54, 57});
    CHECK(values(sum(x, {-1})) == std::vector<double>{6, 22, 38, 54, 70, 86});
    CHECK(values(sum(x, {0, 2})) == std::vector<double>{60, 92, 124});
    CHECK(sum(x, {1}, true).shape() == Shape{2, 1, 4});
    CHECK(sum(x, {0, 2}, true).shape() == Shape{1, 3, 1});
    CHECK(sum(x, {}, true).shape() == Shape{1, 1, 1});
    CHECK(sum(x, {1}).dtype() == dtype);
  }
}

TEST_CASE("reductions of non-contiguous views equal those of their copies") {
  const Tensor x = x234().permute({2, 0, 1});  // [4, 2, 3]
  CHECK(values(sum(x, {1})) == values(sum(x.contiguous(), {1})));
  CHECK(values(mean(x, {0, 2})) == values(mean(x.contiguous(), {0, 2})));
  CHECK(values(max(x, {2})) == values(max(x.contiguous(), {2})));
}

TEST_CASE("mean, max, min and argmax along an axis") {
  const Tensor x = x234();
  CHECK(values(mean(x, {2})) == std::vector<double>{1.5, 5.5, 9.5, 13.5, 17.5, 21.5});
  CHECK(values(max(x, {1})) == std::vector<double>{8, 9, 10, 11, 20, 21, 22, 23});
  CHECK(values(min(x, {0, 1})) == std::vector<double>{0, 1, 2, 3});
  const Tensor y = tensor({3, 9, 9, 1, -5, -2, -7, -1}, {2, 4});
  CHECK(argmax(y, 1).to_vector<int64_t>() == std::vector<int64_t>{1, 3});  // first of equal maxima
  CHECK(argmax(y, 0).to_vector<int64_t>() == std::vector<int64_t>{0, 0, 0, 0});
  CHECK(argmax(y, 1, true).shape() == Shape{2, 1});
  CHECK(argmax(y, 1).dtype() == DType::Int64);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Tensor with_nan = tensor({1, nan, 5}, {3}, DType::Float64);
  CHECK(std::isnan(max(with_nan).item()));  // NaN propagates, never vanishes
  CHECK(argmax(with_nan, 0).item() == 1);
}

TEST_CASE("var uses Bessel's correction by default and the biased form on request") {
  const Tensor x = tensor({2, 4, 4, 4, 5, 5, 7, 9}, {8}, DType::Float64);  // mean 5, squares sum 32
  CHECK(var(x).item() == Approx(32.0 / 7));
  CHECK(var(x, {0}, false, 0).item() == Approx(4.0));
  // Two passes keep float32 accurate for a large mean with small spread.
  const Tensor shifted = tensor({1e4 + 1, 1e4 + 2, 1e4 + 3}, {3});
  CHECK(var(shifted).item() == Approx(1.0).epsilon(1e-6));
  CHECK(values(var(x234(DType::Float64), {2}, true, 0)) == std::vector<double>(6, 1.25));
}

TEST_CASE("logsumexp is stable for large and for -inf values") {
  const Tensor x = tensor({1000, 1000}, {2}, DType::Float64);
  CHECK(logsumexp(x).item() == Approx(1000 + std::log(2.0)));
  const Tensor small = tensor({-1000, -1000 + std::log(3.0)}, {2}, DType::Float64);
  CHECK(logsumexp(small).item() == Approx(-1000 + std::log(4.0)));
  const double inf = std::numeric_limits<double>::infinity();
  CHECK(logsumexp(tensor({-inf, -inf}, {2}, DType::Float64)).item() == -inf);
  const Tensor m = tensor({0, 0, 1, 1, 2, 3}, {2, 3}, DType::Float64);
  const std::vector<double> rows = values(logsumexp(m, {1}));
  CHECK(rows[0] == Approx(std::log(2 + std::exp(1.0))));
  CHECK(rows[1] == Approx(std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0))));
}

TEST_CASE("sum_to reverses broadcasting: the gradient of a broadcast operand") {
  const Tensor g = ones({2, 3, 4});
  CHECK(values(sum_to(g, {4})) == std::vector<double>(4, 6));
  CHECK(values(sum_to(g, {3, 1})) == std::vector<double>(3, 8));
  CHECK(sum_to(g, {1, 3, 1}).shape() == Shape{1, 3, 1});
  CHECK(values(sum_to(g, {})) == std::vector<double>{24});
  CHECK(sum_to(g, {2, 3, 4}).shares_storage_with(g));
  CHECK_THROWS_MSG(sum_to(g, {5}), ShapeError, "sum_to: shape [5] does not broadcast to [2, 3, 4]");
}

TEST_CASE("empty reductions: sum is 0, mean is NaN, max is an error") {
  const Tensor e = zeros({2, 0});
  CHECK(values(sum(e, {1})) == std::vector<double>{0, 0});
  CHECK(std::isnan(mean(e, {1}).to_vector<double>()[0]));
  CHECK_THROWS_MSG(max(e, {1}), ShapeError, "max: cannot reduce over zero elements (input shape [2, 0])");
}

TEST_CASE("reduction errors are typed and name the op") {
  CHECK_THROWS_MSG(sum(zeros({2, 3}), {2}), IndexError, "sum: dimension 2 is out of range for a tensor of rank 2");
  CHECK_THROWS_MSG(sum(zeros({2, 3}), {1, -1}), IndexError, "sum: axis -1 appears twice");
  CHECK_THROWS_MSG(mean(zeros({2}, DType::Int64)), DTypeError, "mean: expected a floating dtype");
  CHECK_THROWS_MSG(var(zeros({2}), {}, false, -1), ValueError, "var: correction must be >= 0, got -1");
}

TEST_CASE("summing over leading axes (a bias gradient) matches summing each column by hand") {
  Generator gen(8);
  const Tensor x = randn({37, 5, 70}, gen);  // reduce axes 0 and 1 -> [70]
  const Tensor s = sum(x, {0, 1});
  const Tensor k = sum(x, {1, 0}, true);
  REQUIRE(s.shape() == Shape{70});
  REQUIRE(k.shape() == Shape{1, 1, 70});
  const std::vector<float> v = x.to_vector<float>();
  for (int64_t c = 0; c < 70; c += 23) {
    double expected = 0;  // in the same order, in double, as the library promises
    for (int64_t r = 0; r < 37 * 5; ++r) expected += v[static_cast<size_t>(r * 70 + c)];
    CHECK(s.at({c}) == static_cast<float>(expected));
    CHECK(k.at({0, 0, c}) == static_cast<float>(expected));
  }
  // Same bits as the generic strided path (a transposed copy takes it).
  CHECK(sum(x, {0}).to_vector<float>() == sum(x.transpose(0, 2).contiguous().transpose(0, 2), {0}).to_vector<float>());
}
