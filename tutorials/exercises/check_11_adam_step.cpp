// Checks exercises::adam_step (tutorials/exercises/11_adam_step.cpp, or the reference solution)
// against first principles and the library's Adam (nn/adam.h) on a float64 parameter: the first
// step is about lr * sign(g), so is every step of a constant gradient (the bias correction), and
// five steps of changing gradients leave p, m and v where the library leaves them. Prints what it
// found; exits 1 if a check fails or the file is still the stub.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "exercises.h"
#include "nn/adam.h"

using namespace gradformer;

namespace {

int failed = 0;

void report(const std::string& what, double difference) {
  const bool ok = difference < 1e-12;
  std::printf("%-60s: largest difference %.3g: %s\n", what.c_str(), difference, ok ? "yes" : "NO");
  if (!ok) ++failed;
}

double max_difference(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size()) return INFINITY;
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]));  // NaN: stays 0
  for (size_t i = 0; i < a.size(); ++i)
    if (std::isnan(a[i]) != std::isnan(b[i])) worst = INFINITY;
  return worst;
}

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

}  // namespace

static int checks() {
  const AdamOptions options{.lr = 0.01, .beta1 = 0.9, .beta2 = 0.98, .eps = 1e-9};
  const std::vector<double> p0 = {0.5, -1.0, 2.0, 0.25, -0.75, 1.5};
  const std::vector<double> g0 = {0.3, -2.0, 1e-3, 0.0, 5.0, -0.01};  // one zero: only eps keeps that step finite

  // Step 1 from m = v = 0: m = (1 - beta1) g and v = (1 - beta2) g^2; bias-corrected they are g and
  // g^2, so each element moves by lr * g / (|g| + eps): lr against the gradient's sign, 0 where g = 0.
  std::vector<double> p = p0, m(p0.size(), 0), v(p0.size(), 0), expected_p, expected_m, expected_v;
  exercises::adam_step(p, g0, m, v, 1, options);
  for (size_t k = 0; k < p0.size(); ++k) {
    expected_p.push_back(p0[k] - options.lr * g0[k] / (std::abs(g0[k]) + options.eps));
    expected_m.push_back((1 - options.beta1) * g0[k]);
    expected_v.push_back((1 - options.beta2) * g0[k] * g0[k]);
  }
  report("step 1: m = (1 - beta1) g", max_difference(m, expected_m));
  report("step 1: v = (1 - beta2) g^2", max_difference(v, expected_v));
  report("step 1: p moves by lr * g / (|g| + eps)", max_difference(p, expected_p));

  // A constant gradient: m = (1 - beta1^t) g and v = (1 - beta2^t) g^2 exactly, so with the bias
  // correction every one of ten steps moves p by lr * g / (|g| + eps) again.
  p = p0, m.assign(p0.size(), 0), v.assign(p0.size(), 0);
  for (int64_t t = 1; t <= 10; ++t) exercises::adam_step(p, g0, m, v, t, options);
  for (size_t k = 0; k < p0.size(); ++k)
    expected_p[k] = p0[k] - 10 * options.lr * g0[k] / (std::abs(g0[k]) + options.eps);
  report("10 steps of one gradient: p moves by 10 lr * g / (|g| + eps)", max_difference(p, expected_p));

  // The library's Adam on the same parameter, five steps of different gradients.
  Variable w(from_vector(p0, {6}), /*requires_grad=*/true);
  Adam adam({w}, options);
  Generator gen(11);
  p = p0, m.assign(p0.size(), 0), v.assign(p0.size(), 0);
  double worst_p = 0, worst_m = 0, worst_v = 0;
  for (int64_t t = 1; t <= 5; ++t) {
    std::vector<double> g = randn({6}, gen, DType::Float64).to_vector<double>();
    g[3] = 0;  // a gradient that stays 0
    w.set_grad(from_vector(g, {6}));
    adam.step();
    exercises::adam_step(p, g, m, v, t, options);
    worst_p = std::max(worst_p, max_difference(p, values(w.value())));
    worst_m = std::max(worst_m, max_difference(m, values(adam.first_moment(0))));
    worst_v = std::max(worst_v, max_difference(v, values(adam.second_moment(0))));
  }
  report("5 steps: p as the library's Adam leaves it", worst_p);
  report("5 steps: m as the library's Adam leaves it", worst_m);
  report("5 steps: v as the library's Adam leaves it", worst_v);
  std::printf(failed == 0 ? "adam step: all checks pass\n" : "adam step: %d check(s) FAILED\n", failed);
  return failed;
}

int main() { return exercises::run_checks("11_adam_step.cpp", 11, checks); }
