// Checks exercises::rotate_pairs (tutorials/exercises/20_rotary.cpp, or the reference solution) in
// float64: a pair worked by hand, the library's rotary op over its own tables for three head widths,
// bases and starts, and the property that makes the positions relative (moving a query and a key by
// the same s leaves their dot product the same). Prints what it found; exits 1 if a check fails or
// the file is still the stub.
#include <cmath>
#include <cstdio>
#include <numbers>
#include <tuple>
#include <vector>

#include "exercises.h"
#include "transformer/model/rotary.h"

using namespace gradformer;
using exercises::max_difference;

static double dot_rows(const Tensor& a, int64_t i, const Tensor& b, int64_t j) {
  const std::vector<double> x = a.select(0, i).contiguous().to_vector<double>();
  const std::vector<double> y = b.select(0, j).contiguous().to_vector<double>();
  double s = 0;
  for (size_t k = 0; k < x.size(); ++k) s += x[k] * y[k];
  return s;
}

static int checks() {
  int failed = 0;
  // By hand: d_k 2, one pair (1, 0) at position 1 with theta anything: turned by 1 radian.
  const Tensor one = exercises::rotate_pairs(tensor({1.0, 0.0}, {1, 2}, DType::Float64), 10000, 1);
  const double hand = max_difference(one, tensor({std::cos(1.0), std::sin(1.0)}, {1, 2}, DType::Float64));
  std::printf("(1, 0) at position 1 turned by 1 radian to (cos 1, sin 1): within %.1e: %s\n", hand,
              hand < 1e-12 ? "yes" : "NO");
  failed += hand < 1e-12 ? 0 : 1;

  Generator gen(20);
  for (const auto& [T, dk, theta, start] :
       {std::tuple<int64_t, int64_t, double, int64_t>{3, 4, 10000, 0}, {5, 8, 500000, 7}, {6, 16, 100, 2}}) {
    const Tensor x = randn({T, dk}, gen, DType::Float64);
    const Tensor mine = exercises::rotate_pairs(x, theta, start);
    const RotaryTables tables = rotary_tables(start + T, dk, theta, {}, DType::Float64);
    const Tensor library = rotary(Variable(x), tables.cos, tables.sin, start).value();
    const double difference = max_difference(mine, library);
    const bool ok = difference < 1e-12;
    std::printf("[%lld, %2lld], theta %g, from position %lld: the library's rotary within %.1e: %s\n",
                static_cast<long long>(T), static_cast<long long>(dk), theta, static_cast<long long>(start), difference,
                ok ? "yes" : "NO");
    failed += ok ? 0 : 1;
  }

  // Relative: the query at m and the key at n score as the query at m + s and the key at n + s.
  const int64_t dk = 8, positions = 24;
  const Tensor q = randn({1, dk}, gen, DType::Float64), k = randn({1, dk}, gen, DType::Float64);
  const Tensor qs = exercises::rotate_pairs(q.expand({positions, dk}).contiguous(), 10000, 0);
  const Tensor ks = exercises::rotate_pairs(k.expand({positions, dk}).contiguous(), 10000, 0);
  double worst = 0;
  for (const auto& [m, n, s] : {std::tuple<int64_t, int64_t, int64_t>{2, 9, 5}, {9, 2, 11}, {0, 0, 23}})
    worst = std::max(worst, std::abs(dot_rows(qs, m, ks, n) - dot_rows(qs, m + s, ks, n + s)));
  const bool relative = worst < 1e-12;
  std::printf("q_m . k_n = q_m+s . k_n+s for three (m, n, s): within %.1e: %s\n", worst, relative ? "yes" : "NO");
  failed += relative ? 0 : 1;

  std::printf(failed == 0 ? "rotary positions: all checks pass\n" : "rotary positions: %d check(s) FAILED\n", failed);
  return failed;
}

int main() { return exercises::run_checks("20_rotary.cpp", 20, checks); }
