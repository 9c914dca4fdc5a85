// Checks exercises::mul (tutorials/exercises/03_mul_backward.cpp, or the reference solution): its
// gradients against the central difference (gradcheck), with and without broadcasting, and against
// the library's own mul. Prints what it found; exits 1 if any check fails or the file is still the stub.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "exercises.h"

using namespace gradformer;

using exercises::max_difference;

// The checks; each prints what it found. Returns how many failed.
static int checks() {
  int failed = 0;
  Generator gen(0);
  const std::vector<std::pair<Shape, Shape>> cases = {{{3, 4}, {3, 4}}, {{3, 4}, {4}}, {{2, 1, 3}, {4, 1}}};
  for (const auto& [sa, sb] : cases) {
    const Tensor a = randn(sa, gen, DType::Float64), b = randn(sb, gen, DType::Float64);
    GradcheckResult r = gradcheck([](const std::vector<Variable>& in) { return exercises::mul(in[0], in[1]); }, {a, b});
    std::printf("gradcheck %s * %s: %s\n", to_string(sa).c_str(), to_string(sb).c_str(), r.report.c_str());
    if (!r.ok) ++failed;

    Variable x(a, true), y(b, true), xr(a, true), yr(b, true);
    const Tensor g = randn(broadcast_shapes(sa, sb, "mul"), gen, DType::Float64);
    exercises::mul(x, y).backward(g);
    gradformer::mul(xr, yr).backward(g);
    const bool same = max_difference(x.grad(), xr.grad()) == 0 && max_difference(y.grad(), yr.grad()) == 0;
    std::printf("  the same gradients as the library's mul: %s\n", same ? "yes" : "NO");
    if (!same) ++failed;
  }
  std::printf(failed == 0 ? "mul's backward: all checks pass\n" : "mul's backward: %d check(s) FAILED\n", failed);
  return failed;
}

int main() { return exercises::run_checks("03_mul_backward.cpp", 3, checks); }
