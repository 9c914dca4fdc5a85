// The machine's memory bandwidth, measured: the ceiling for any computation that reads each byte
// once and does little with it, as generating one token at batch 1 does with the model's weights
// (bench_generation.cpp compares itself against the read row below).
//   BM_StreamRead/threads:N   sum a 256 MB float array (far larger than the caches) on N threads
//                             of the library's pool: bytes_per_second = bytes read per second
//   BM_StreamCopy/threads:N   copy a 256 MB float array into another: bytes read + bytes written
//                             (STREAM's convention; the hardware may also read the destination
//                             before writing it, which is not counted)
//   BM_MatVec/threads:N       x [1, 768] times W [50257, 768] transposed (GPT-2's output projection,
//                             154 MB): matmul's matrix-vector path, bytes_per_second = W's bytes;
//                             its ratio to BM_StreamRead is how close it runs to the limit
//   BM_EffectiveClock         the core's clock as this program gets it: a chain of dependent integer
//                             adds retires one per cycle, so adds per nanosecond = GHz (eight adds a
//                             loop turn, so that the loop's jump costs nothing). A host that lowers
//                             the clock, or takes the virtual CPU away part of the time, shows here
//   BM_OneAddLoop             the same chain with one add a loop turn: a turn a cycle, the clock,
//                             while this thread has its core's front end to itself. The two hardware
//                             threads of a core share it (fetching, and following the loop's jump),
//                             so when the core's other thread is busy (on a cloud host, maybe another
//                             machine's) this one runs at about half the clock while BM_EffectiveClock
//                             does not move. bench/copy_task_runs.sh prints both beside each run.
// threads:0 means all of the pool's threads (num_threads() at start).
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "bench/stream_read.h"
#include "tensor/kernels/parallel.h"
#include "tensor/matmul.h"
#include "tensor/random.h"

using namespace gradformer;

namespace {

using bench::kStreamFloats;

int threads_of(const benchmark::State& state, int all) {
  return state.range(0) == 0 ? all : static_cast<int>(state.range(0));
}

void BM_StreamRead(benchmark::State& state) {
  static const int all = num_threads();
  const int threads = threads_of(state, all);
  set_num_threads(threads);
  const float* x = bench::stream_source().data();
  for (auto _ : state) {
    const float total = bench::parallel_sum(x, kStreamFloats, threads);
    if (total != static_cast<float>(kStreamFloats)) state.SkipWithError("the sum of ones is not their count");
    benchmark::DoNotOptimize(total);
  }
  state.SetBytesProcessed(state.iterations() * kStreamFloats * static_cast<int64_t>(sizeof(float)));
  set_num_threads(all);
}
BENCHMARK(BM_StreamRead)->ArgName("threads")->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_StreamCopy(benchmark::State& state) {
  static const int all = num_threads();
  const int threads = threads_of(state, all);
  set_num_threads(threads);
  const float* x = bench::stream_source().data();
  std::vector<float> y(kStreamFloats, 0.0f);
  for (auto _ : state) {
    const int64_t piece = (kStreamFloats + threads - 1) / threads;
    parallel_for(0, threads, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t t = lo; t < hi; ++t) {
        const int64_t begin = t * piece, end = std::min(kStreamFloats, (t + 1) * piece);
        std::memcpy(y.data() + begin, x + begin, static_cast<size_t>(end - begin) * sizeof(float));
      }
    });
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 2 * kStreamFloats * static_cast<int64_t>(sizeof(float)));
  set_num_threads(all);
}
BENCHMARK(BM_StreamCopy)->ArgName("threads")->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_MatVec(benchmark::State& state) {
  static const int all = num_threads();
  const int threads = threads_of(state, all);
  set_num_threads(threads);
  Generator gen(1);
  static const Tensor w = uniform({50257, 768}, -1, 1, gen), x = uniform({1, 768}, -1, 1, gen);
  for (auto _ : state) benchmark::DoNotOptimize(matmul(x, w.transpose(0, 1)).data<float>());
  state.SetBytesProcessed(state.iterations() * w.numel() * static_cast<int64_t>(sizeof(float)));
  set_num_threads(all);
}
BENCHMARK(BM_MatVec)->ArgName("threads")->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();

// kAdds dependent integer adds, kPerTurn of them in each turn of the loop; adds per ns in "GHz".
template <int kPerTurn>
void time_add_chain(benchmark::State& state) {
  constexpr int64_t kAdds = 48'000'000;
  static_assert(kAdds % kPerTurn == 0);
  for (auto _ : state) {
    uint64_t x = 0;
    for (int64_t i = 0; i < kAdds; i += kPerTurn) {
      for (int a = 0; a < kPerTurn; ++a) {  // unrolled: kPerTurn is a constant
#if defined(__x86_64__)
        asm volatile("add $1, %0" : "+r"(x));  // one add, which the compiler cannot fold or vectorise
#else
        asm volatile("" : "+r"(x));
        x += 1;
#endif
      }
    }
    benchmark::DoNotOptimize(x);
  }
  state.counters["GHz"] = benchmark::Counter(
      1e-9 * static_cast<double>(kAdds) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
}

void BM_EffectiveClock(benchmark::State& state) { time_add_chain<8>(state); }
BENCHMARK(BM_EffectiveClock)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_OneAddLoop(benchmark::State& state) { time_add_chain<1>(state); }
BENCHMARK(BM_OneAddLoop)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
