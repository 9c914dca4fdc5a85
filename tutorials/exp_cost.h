// Chapter 18's "an exp of our own": the C library's exp against the library's (tensor/kernels/exp_kernel.h),
// timed over a row of scores.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <vector>

#include "tensor/kernels/exp_kernel.h"
#include "tensor/kernels/vector_loops.h"

namespace tutorial {

// Nanoseconds an element for exp over a row of scores (exp(x - max), as the softmax takes it), the
// fastest of `rounds`: the C library's std::exp, one call an element, and the library's exp_shifted
// (tensor/kernels/exp_kernel.h) in its portable build and in its AVX2 build where the CPU has it.
struct ExpCost {
  double libm_ns = 0, portable_ns = 0, avx2_ns = 0;  // avx2_ns 0: no AVX2 build on this CPU
};

inline ExpCost exp_cost(int rounds) {
  constexpr int64_t n = 64 * 1024;  // 256 KiB in and out: the L2 cache, as a head's scores are
  std::vector<float> x(n), y(n);
  for (int64_t j = 0; j < n; ++j) x[j] = -0.01f * static_cast<float>(j % 997);  // scores minus their max
  const float m = 0.0f;
  auto fastest = [&](auto exp_row) {
    double best = 1e30;
    for (int r = 0; r < rounds; ++r) {
      const auto start = std::chrono::steady_clock::now();
      exp_row();
      best = std::min(best, std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count());
    }
    return best / n;
  };
  auto fastest_built = [&](bool avx2) {  // exp_shifted's portable or AVX2 build
    const gradformer::Avx2LoopsFor build(avx2);
    return fastest([&] { gradformer::exp_shifted(x.data(), m, y.data(), n); });
  };
  ExpCost cost;
  cost.libm_ns = fastest([&] {
    for (int64_t j = 0; j < n; ++j) y[j] = std::exp(x[j] - m);
  });
  cost.portable_ns = fastest_built(false);
  if (gradformer::avx2_loops_available()) cost.avx2_ns = fastest_built(true);
  return cost;
}

}  // namespace tutorial
