// The main of the benchmark programs that register their benchmarks statically: Google Benchmark's
// own (BENCHMARK_MAIN), after keeping freed memory for reuse as the gradformer program does, so
// that a benchmark measures the library as a training run uses it, not fresh pages faulted in on
// every iteration (tensor/support/memory.h; the environment may say no, and then nothing changes).
#include <benchmark/benchmark.h>

#include "tensor/support/memory.h"

int main(int argc, char** argv) {
  gradformer::keep_freed_memory();
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
