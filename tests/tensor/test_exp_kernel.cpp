#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <vector>

#include "catch.h"
#include "tensor/all.h"
#include "tensor/kernels/exp_kernel.h"
#include "tensor/kernels/vector_loops.h"

using namespace gradformer;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// Every 97th float bit pattern from -110 to 90: results in the whole range of normal floats, the
// subnormal ones (which come out 0), overflow and underflow.
std::vector<float> sweep() {
  std::vector<float> xs;
  for (uint32_t bits = 0; bits < 0xFF800000u; bits += 97) {
    const float x = std::bit_cast<float>(bits);
    if (x >= -110.0f && x <= 90.0f) xs.push_back(x);
  }
  return xs;
}

std::vector<float> exps(const std::vector<float>& xs, float shift = 0) {
  std::vector<float> ys(xs.size());
  exp_shifted(xs.data(), shift, ys.data(), static_cast<int64_t>(xs.size()));
  return ys;
}

// |y - exp(x)| in units of the last place of the float nearest exp(x), with exp(x) from double
// precision; under the smallest normal float exp is 0 by definition.
double ulps_off(float x, float y) {
  const double exact = std::exp(static_cast<double>(x));
  const float nearest = static_cast<float>(exact);
  if (std::isinf(nearest)) return y == kInf ? 0.0 : kInf;
  if (exact < std::numeric_limits<float>::min()) return y == 0.0f ? 0.0 : kInf;
  const double ulp = static_cast<double>(std::nextafter(nearest, kInf)) - nearest;
  return std::fabs(y - exact) / ulp;
}

}  // namespace

TEST_CASE("the library's float exp is within one unit in the last place of exp") {
  const std::vector<float> xs = sweep();
  REQUIRE(xs.size() > 1000000);
  const std::vector<float> ys = exps(xs);
  double worst = 0;
  int64_t normal = 0, rounded_to_nearest = 0, flushed = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    worst = std::max(worst, ulps_off(xs[i], ys[i]));
    const double exact = std::exp(static_cast<double>(xs[i]));
    if (exact < std::numeric_limits<float>::min()) {
      flushed += ys[i] == 0.0f;
      continue;
    }
    ++normal;
    rounded_to_nearest += ys[i] == static_cast<float>(exact);
  }
  CHECK(worst < 1.0);
  CHECK(rounded_to_nearest > 0.99 * static_cast<double>(normal));  // all but about 1%
  CHECK(flushed > 1000);  // the sweep reaches under 2^-126 (where ulps_off checked the 0s)
}

TEST_CASE("the library's float exp at the ends of its range and at special values") {
  const std::vector<float> xs = {0.0f,   -0.0f,  1.0f,    -kInf,  kInf,   std::numeric_limits<float>::quiet_NaN(),
                                 88.72f, 88.73f, 1000.0f, -87.3f, -87.4f, -1000.0f};
  const std::vector<float> ys = exps(xs);
  CHECK(ys[0] == 1.0f);
  CHECK(ys[1] == 1.0f);
  CHECK(ulps_off(1.0f, ys[2]) < 1.0);  // e
  CHECK(ys[3] == 0.0f);
  CHECK(ys[4] == kInf);
  CHECK(std::isnan(ys[5]));
  CHECK(ulps_off(88.72f, ys[6]) < 1.0);  // 3.39e38, just below the largest float
  CHECK(ys[7] == kInf);                  // 88.73 > log(largest float) = 88.7228
  CHECK(ys[8] == kInf);
  CHECK(ulps_off(-87.3f, ys[9]) < 1.0);  // 1.24e-38, over the smallest normal float, 1.18e-38
  CHECK(ys[9] >= std::numeric_limits<float>::min());
  CHECK(ys[10] == 0.0f);  // 1.12e-38 would be a subnormal number
  CHECK(ys[11] == 0.0f);
}

TEST_CASE("exp_shifted subtracts the shift first, works in place, and writes only n elements") {
  for (int64_t n : {0, 1, 3, 7, 8, 9, 16, 17, 31}) {
    std::vector<float> x(static_cast<size_t>(n) + 1), expected(x.size());
    for (size_t j = 0; j < x.size(); ++j) x[j] = 0.37f * static_cast<float>(j) - 2.0f;
    const float shift = 1.25f;
    for (size_t j = 0; j < x.size(); ++j) expected[j] = exps({x[j] - shift})[0];  // one at a time
    std::vector<float> y(x.size(), -7.0f);
    exp_shifted(x.data(), shift, y.data(), n);
    for (int64_t j = 0; j < n; ++j) CHECK(y[static_cast<size_t>(j)] == expected[static_cast<size_t>(j)]);
    CHECK(y.back() == -7.0f);  // past the end: untouched
    std::vector<float> in_place = x;
    exp_shifted(in_place.data(), shift, in_place.data(), n);
    for (int64_t j = 0; j < n; ++j) CHECK(in_place[static_cast<size_t>(j)] == expected[static_cast<size_t>(j)]);
    CHECK(in_place.back() == x.back());
  }
  // exp(a - b) = exp(a) / exp(b): exp(ln 8 - ln 2) is 4 within a unit in the last place
  const float ln8 = std::log(8.0f), ln2 = std::log(2.0f);
  std::vector<float> y(1);
  exp_shifted(&ln8, ln2, y.data(), 1);
  CHECK(std::fabs(y[0] - 4.0f) <= 4.0f * std::numeric_limits<float>::epsilon());
}

TEST_CASE("exp_shifted in float64 is std::exp") {
  const std::vector<double> x = {-745.0, -3.5, 0.0, 0.5, 2.0, 709.0};
  std::vector<double> y(x.size());
  exp_shifted(x.data(), 0.5, y.data(), static_cast<int64_t>(x.size()));
  for (size_t j = 0; j < x.size(); ++j) CHECK(y[j] == std::exp(x[j] - 0.5));
}

TEST_CASE("the library's float exp gives the same bits in its AVX2 build as in its portable build") {
  if (!avx2_loops_available()) return;  // one build only (test_vector_loops.cpp checks the switch then refuses)
  const std::vector<float> xs = sweep();
  const auto exps_in = [&](bool avx2) {
    const Avx2LoopsFor build(avx2);
    return exps(xs, 0.5f);
  };
  const std::vector<float> portable = exps_in(false), avx2 = exps_in(true);
  int64_t differing = 0;
  for (size_t i = 0; i < xs.size(); ++i)
    differing += std::bit_cast<uint32_t>(portable[i]) != std::bit_cast<uint32_t>(avx2[i]);
  CHECK(differing == 0);
}
