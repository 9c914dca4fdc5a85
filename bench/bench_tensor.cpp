// bench_tensor: what one tensor operation costs.
//
// (a) Per-op overhead: operations on tiny tensors, where the arithmetic is nothing and what is
//     measured is dispatch, shape checks, allocation and the strided loop's setup (ns per op).
// (b) Elementwise throughput on 16M-element float32 tensors (64 MiB each), in GB/s of memory
//     traffic (bytes read + bytes written), beside std::memcpy of the same bytes in the same run:
//     memcpy reads 64 MiB and writes 64 MiB, so its "bytes" are 2 x 64 MiB; add reads two arrays and
//     writes one, 3 x 64 MiB. A ratio to memcpy near 1 means the op runs at the speed of memory.
//     /T:1 and /T:2 are the thread counts of gradformer's pool (memcpy is always one thread).
// (c) exp over a row of scores: the C library's against the library's own (tensor/kernels/exp_kernel.h).
//
//   bench_tensor --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "tensor/all.h"
#include "tensor/kernels/exp_kernel.h"
#include "tensor/kernels/vector_loops.h"

using namespace gradformer;

namespace {

// ---- (a) per-op overhead on tiny tensors -----------------------------------------------------

void BM_Overhead_Add_1(benchmark::State& state) {
  set_num_threads(1);
  const Tensor a = ones({1}), b = ones({1});
  for (auto _ : state) {
    Tensor c = add(a, b);  // [1] + [1] -> [1]
    benchmark::DoNotOptimize(c.data<float>());
  }
}
BENCHMARK(BM_Overhead_Add_1);

void BM_Overhead_AddBroadcast_2x3_3(benchmark::State& state) {
  set_num_threads(1);
  const Tensor a = ones({2, 3}), b = ones({3});
  for (auto _ : state) {
    Tensor c = add(a, b);  // [2, 3] + [3] -> [2, 3]
    benchmark::DoNotOptimize(c.data<float>());
  }
}
BENCHMARK(BM_Overhead_AddBroadcast_2x3_3);

void BM_Overhead_AddInPlace_1(benchmark::State& state) {
  set_num_threads(1);
  Tensor a = ones({1});
  const Tensor b = ones({1});
  for (auto _ : state) {
    a.add_(b);  // no allocation
    benchmark::DoNotOptimize(a.data<float>());
  }
}
BENCHMARK(BM_Overhead_AddInPlace_1);

void BM_Overhead_Exp_1(benchmark::State& state) {
  set_num_threads(1);
  const Tensor a = ones({1});
  for (auto _ : state) {
    Tensor c = exp(a);
    benchmark::DoNotOptimize(c.data<float>());
  }
}
BENCHMARK(BM_Overhead_Exp_1);

void BM_Overhead_Sum_4(benchmark::State& state) {
  set_num_threads(1);
  const Tensor a = ones({4});
  for (auto _ : state) {
    Tensor s = sum(a);  // [4] -> []
    benchmark::DoNotOptimize(s.data<float>());
  }
}
BENCHMARK(BM_Overhead_Sum_4);

void BM_Overhead_Empty_1(benchmark::State& state) {  // the allocation every out-of-place op pays
  for (auto _ : state) {
    Tensor t = Tensor::empty({1});
    benchmark::DoNotOptimize(t.data<float>());
  }
}
BENCHMARK(BM_Overhead_Empty_1);

void BM_Overhead_Transpose(benchmark::State& state) {  // a view: no data touched
  const Tensor a = ones({2, 3});
  for (auto _ : state) {
    Tensor t = a.transpose(0, 1);
    benchmark::DoNotOptimize(t.strides());
  }
}
BENCHMARK(BM_Overhead_Transpose);

void BM_Overhead_Reshape(benchmark::State& state) {  // a view of a contiguous tensor
  const Tensor a = ones({2, 3});
  for (auto _ : state) {
    Tensor t = a.reshape({3, 2});
    benchmark::DoNotOptimize(t.strides());
  }
}
BENCHMARK(BM_Overhead_Reshape);

// ---- (b) elementwise throughput on large tensors ---------------------------------------------

constexpr int64_t kLarge = int64_t{1} << 24;  // 16M float32 elements = 64 MiB
constexpr int64_t kSide = int64_t{1} << 12;   // 4096 x 4096 = kLarge
constexpr int64_t kLargeBytes = kLarge * 4;

void bytes(benchmark::State& state, int64_t arrays) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * arrays * kLargeBytes);
}

void BM_Memcpy(benchmark::State& state) {                    // the speed of memory: read 64 MiB, write 64 MiB
  const Tensor src = ones({kLarge}), dst = zeros({kLarge});  // both touched: no page faults timed
  for (auto _ : state) {
    std::memcpy(dst.data<float>(), src.data<float>(), kLargeBytes);
    benchmark::ClobberMemory();
  }
  bytes(state, 2);
}
BENCHMARK(BM_Memcpy)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Add(benchmark::State& state) {  // a new 64 MiB result each time, as add() returns one
  set_num_threads(static_cast<int>(state.range(0)));
  const Tensor a = ones({kLarge}), b = ones({kLarge});
  for (auto _ : state) {
    Tensor c = add(a, b);
    benchmark::DoNotOptimize(c.data<float>());
  }
  bytes(state, 3);
}
BENCHMARK(BM_Add)->ArgName("T")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_AddInPlace(benchmark::State& state) {  // a += b: the same traffic, no allocation
  set_num_threads(static_cast<int>(state.range(0)));
  Tensor a = ones({kLarge});
  const Tensor b = ones({kLarge});
  for (auto _ : state) {
    a.add_(b);
    benchmark::DoNotOptimize(a.data<float>());
  }
  bytes(state, 3);
}
BENCHMARK(BM_AddInPlace)->ArgName("T")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Exp(benchmark::State& state) {
  set_num_threads(static_cast<int>(state.range(0)));
  const Tensor a = ones({kLarge});
  for (auto _ : state) {
    Tensor c = exp(a);
    benchmark::DoNotOptimize(c.data<float>());
  }
  bytes(state, 2);
}
BENCHMARK(BM_Exp)->ArgName("T")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// y = x * mask and the mask: read x, write y and which elements were kept (a byte each). 16 MiB
// tensors (beyond the last-level cache), under malloc's kept-memory bound (tensor/support/memory.h), as
// a training step's are: no fresh pages are faulted in.
void BM_Dropout(benchmark::State& state) {
  set_num_threads(static_cast<int>(state.range(0)));
  const Tensor x = ones({kLarge / 4});
  Generator gen(1);
  for (auto _ : state) {
    Dropped d = apply_dropout(x, 0.1, gen);
    benchmark::DoNotOptimize(d.output.data<float>());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 9 * kLargeBytes / 16);  // 4 + 4 + 1 bytes
}
BENCHMARK(BM_Dropout)->ArgName("T")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ContiguousOfTranspose(benchmark::State& state) {  // [4096, 4096] strides [1, 4096] -> row-major copy
  set_num_threads(static_cast<int>(state.range(0)));
  const Tensor a = ones({kSide, kSide});
  for (auto _ : state) {
    Tensor c = a.transpose(0, 1).contiguous();
    benchmark::DoNotOptimize(c.data<float>());
  }
  bytes(state, 2);
}
BENCHMARK(BM_ContiguousOfTranspose)->ArgName("T")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Clone(benchmark::State& state) {  // contiguous -> contiguous copy: memcpy plus a fresh result
  set_num_threads(static_cast<int>(state.range(0)));
  const Tensor a = ones({kLarge});
  for (auto _ : state) {
    Tensor c = a.clone();
    benchmark::DoNotOptimize(c.data<float>());
  }
  bytes(state, 2);
}
BENCHMARK(BM_Clone)->ArgName("T")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// ---- (c) exp, as the softmax takes it ------------------------------------------------------------

// exp(x - max) over 64K scores (256 KiB in, 256 KiB out: in the L2 cache), elements per second, one
// thread: the C library's std::exp one call an element, and the library's exp_shifted
// (tensor/kernels/exp_kernel.h) in its portable build (/avx2:0) and its AVX2 build (/avx2:1).
constexpr int64_t kScores = 64 * 1024;

std::vector<float> scores() {
  std::vector<float> x(kScores);
  for (int64_t j = 0; j < kScores; ++j) x[static_cast<size_t>(j)] = -0.01f * static_cast<float>(j % 997);
  return x;
}

void BM_ExpShiftedLibm(benchmark::State& state) {
  const std::vector<float> x = scores();
  std::vector<float> y(x.size());
  for (auto _ : state) {
    for (size_t j = 0; j < x.size(); ++j) y[j] = std::exp(x[j] - 0.5f);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kScores);
}
BENCHMARK(BM_ExpShiftedLibm)->Unit(benchmark::kMicrosecond);

void BM_ExpShiftedLibrary(benchmark::State& state) {
  const bool avx2 = state.range(0) != 0;
  if (avx2 && !avx2_loops_available()) {
    state.SkipWithError("no AVX2 build of the loops on this CPU");
    return;
  }
  const Avx2LoopsFor build(avx2);
  const std::vector<float> x = scores();
  std::vector<float> y(x.size());
  for (auto _ : state) {
    exp_shifted(x.data(), 0.5f, y.data(), kScores);
    benchmark::DoNotOptimize(y.data());
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * kScores);
}
BENCHMARK(BM_ExpShiftedLibrary)->ArgName("avx2")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);

}  // namespace
