// The memory-bandwidth measurements chapters 18 and 19 share: STREAM's "add" (chapter 18's ceiling
// for ops that read two arrays and write one) and a pure read (chapter 19's ceiling for generating a
// token, which reads every weight once). Both run on every thread over arrays far larger than the
// caches, and keep the best of several runs. And the clocks they and chapter 19's timings use.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <vector>

#include "claims.h"
#include "tensor/kernels/parallel.h"

namespace tutorial {

// Timed by the CPU time used (all threads' together, divided by the threads), as chapter 2 times one
// core: on a shared machine, the time other programs take does not count against the measurement.
template <class F>
double cpu_seconds(int threads, F&& fn) {
  const std::clock_t cpu = std::clock();
  fn();
  return static_cast<double>(std::clock() - cpu) / CLOCKS_PER_SEC / threads;
}

// The time fn takes by the clock on the wall.
template <class F>
double wall_seconds(F&& fn) {
  const auto start = std::chrono::steady_clock::now();
  fn();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The middle value of `values` (of an even count, the upper of the two middle ones).
inline double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// The shortest of `runs` runs of fn, by the clock on the wall (read_bandwidth_gbs says why not CPU time).
template <class F>
double best_wall_seconds(int runs, F&& fn) {
  double best = 1e30;
  for (int run = 0; run < runs; ++run) best = std::min(best, wall_seconds(fn));
  return best;
}

// Bandwidth: STREAM's "add", c = a + b over arrays far larger than the caches, on every thread:
// 12 bytes move per element (two floats read, one written) for one flop. Timed by the clock on the
// wall: CPU time divided by the threads assumes every thread worked the whole time, and when the OS
// kept a worker off its core, the caller ran its piece too, so that CPU time halved the time and
// doubled the bandwidth (it once read 181.9 GB/s here, where the memory gives about 80).
inline double bandwidth_gbs(int runs) {
  using namespace gradformer;
  const int64_t n = int64_t{16} << 20;  // 64 MB per array
  std::vector<float> a(n, 1.0f), b(n, 2.0f), c(n, 0.0f);
  double best = 0;
  for (int run = 0; run < runs; ++run) {
    const double time = wall_seconds([&] {
      parallel_for(0, n, grain_for(1), [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) c[i] = a[i] + b[i];
      });
    });
    best = std::max(best, 12.0 * static_cast<double>(n) / time / 1e9);
  }
  claim(c[n - 1] == 3.0f, "the bandwidth loop computed c = a + b");
  return best;
}

// Read bandwidth: the sum of one 256 MB array, each thread summing its share with 16 independent
// partial sums (so the additions keep up with the loads): 4 bytes read per element, nothing written.
// What generating a token does to the weights: read each once. Timed by the clock on the wall, as
// the token it is compared with: CPU time does not count a thread that waits to be woken, and so
// would make both look faster than they are.
inline double read_bandwidth_gbs(int runs) {
  using namespace gradformer;
  const int64_t n = int64_t{64} << 20;
  std::vector<float> a(n, 1.0f);
  const int threads = num_threads();
  std::vector<double> sums(threads, 0.0);
  double best = 0;
  for (int run = 0; run < runs; ++run) {
    const double time = wall_seconds([&] {
      parallel_for(0, threads, 1, [&](int64_t first, int64_t last) {
        for (int64_t t = first; t < last; ++t) {
          const int64_t lo = n * t / threads, hi = n * (t + 1) / threads;
          float partial[16] = {};
          int64_t i = lo;
          for (; i + 16 <= hi; i += 16)
            for (int j = 0; j < 16; ++j) partial[j] += a[i + j];
          for (; i < hi; ++i) partial[0] += a[i];
          double sum = 0;
          for (float p : partial) sum += p;
          sums[t] = sum;
        }
      });
    });
    best = std::max(best, 4.0 * static_cast<double>(n) / time / 1e9);
  }
  double total = 0;
  for (double s : sums) total += s;
  claim(total == static_cast<double>(n), "the read loop summed every element once");
  return best;
}

}  // namespace tutorial
