// Reading memory as fast as the machine can: the sum of a float array far larger than the caches,
// split over the library's thread pool. Shared by bench_memory.cpp (the bandwidth row) and
// bench_generation.cpp (which divides its own bytes per second by it).
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "tensor/kernels/parallel.h"

namespace gradformer::bench {

inline constexpr int64_t kStreamFloats = int64_t{64} << 20;  // 256 MB

// The sum of x[lo, hi) in 32 independent partial sums, so that the compiler can keep them in
// vector registers and the loop waits on memory, not on the latency of one chain of adds.
inline float sum_range(const float* x, int64_t lo, int64_t hi) {
  constexpr int kParts = 32;
  float part[kParts] = {};
  int64_t i = lo;
  for (; i + kParts <= hi; i += kParts)
    for (int j = 0; j < kParts; ++j) part[j] += x[i + j];
  float total = 0;
  for (; i < hi; ++i) total += x[i];
  for (float p : part) total += p;
  return total;
}

// The sum of x[0, n) on `threads` threads of the pool, one contiguous piece each.
inline float parallel_sum(const float* x, int64_t n, int threads) {
  std::vector<float> sums(static_cast<size_t>(threads), 0.0f);
  const int64_t piece = (n + threads - 1) / threads;
  parallel_for(0, threads, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t t = lo; t < hi; ++t) sums[t] = sum_range(x, t * piece, std::min(n, (t + 1) * piece));
  });
  float total = 0;
  for (float s : sums) total += s;
  return total;
}

inline const std::vector<float>& stream_source() {
  static const std::vector<float> x(kStreamFloats, 1.0f);
  return x;
}

// The best of `runs` reads of the whole array on num_threads() threads, in GB/s (1e9 bytes).
inline double stream_read_gbs(int runs) {
  const std::vector<float>& x = stream_source();
  double best = 0;
  for (int run = 0; run < runs; ++run) {
    const auto start = std::chrono::steady_clock::now();
    const float total = parallel_sum(x.data(), kStreamFloats, num_threads());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (total == static_cast<float>(kStreamFloats)) best = std::max(best, 4.0 * kStreamFloats / seconds / 1e9);
  }
  return best;
}

}  // namespace gradformer::bench
