// Checks exercises::softmax_backward (tutorials/exercises/04_softmax_backward.cpp, or the reference
// solution): wrapped as an op with `record`, its gradient against the central difference
// (gradcheck), and against the library's fused softmax. Prints what it found; exits 1 if a check fails or the file is
// still the stub.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "exercises.h"

using namespace gradformer;

using exercises::max_difference;

// softmax along the last dimension, with the reader's backward.
Variable my_softmax(const Variable& s) {
  const Tensor P = softmax(Variable(s.value())).value();
  return record("exercise_softmax", P, {s},
                [P](const Tensor& g, Grads& dx) { dx[0] = exercises::softmax_backward(P, g.contiguous()); });
}

// The checks; each prints what it found. Returns how many failed.
static int checks() {
  int failed = 0;
  Generator gen(0);
  for (const Shape& shape : {Shape{1, 5}, Shape{4, 3}, Shape{3, 7}}) {
    const Tensor S = randn(shape, gen, DType::Float64);
    GradcheckResult r = gradcheck([](const std::vector<Variable>& in) { return my_softmax(in[0]); }, {S});
    std::printf("gradcheck softmax %s: %s\n", to_string(shape).c_str(), r.report.c_str());
    if (!r.ok) ++failed;

    const Tensor dP = randn(shape, gen, DType::Float64);
    Variable mine(S, true), library(S, true);
    my_softmax(mine).backward(dP);
    softmax(library).backward(dP);
    const bool close = max_difference(mine.grad(), library.grad()) < 1e-12;
    std::printf("  agrees with the library's softmax backward: %s\n", close ? "yes" : "NO");
    if (!close) ++failed;
  }
  std::printf(failed == 0 ? "softmax's backward: all checks pass\n" : "softmax's backward: %d check(s) FAILED\n",
              failed);
  return failed;
}

int main() { return exercises::run_checks("04_softmax_backward.cpp", 4, checks); }
