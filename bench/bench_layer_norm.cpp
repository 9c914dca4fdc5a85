// LayerNorm's forward and backward at the size of a d_model 512 training step's activations
// (80 sentences x 10 tokens = 800 rows of 512), as bytes moved per second: forward reads x and
// writes y, backward reads dL/dy and x and writes dL/dx (the [D] weight, bias and their gradients
// are too small to count). Compare with bench_memory's stream read on the same machine, in one run.
#include <benchmark/benchmark.h>

#include "autograd/all.h"

using namespace gradformer;

namespace {

constexpr int64_t kRows = 800, kWidth = 512;
constexpr int64_t kBytes = kRows * kWidth * 4;

Variable random_input() {
  Generator gen(1);
  return Variable(randn({kRows, kWidth}, gen), /*requires_grad=*/true);
}

void BM_LayerNormForward(benchmark::State& state) {
  set_num_threads(static_cast<int>(state.range(0)));
  const Variable x = random_input(), w(ones({kWidth}), true), b(zeros({kWidth}), true);
  for (auto _ : state) {
    Variable y = layer_norm(x, w, b);
    benchmark::DoNotOptimize(y.value().data<float>());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 2 * kBytes);
}
BENCHMARK(BM_LayerNormForward)->ArgName("T")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_LayerNormBackward(benchmark::State& state) {
  set_num_threads(static_cast<int>(state.range(0)));
  Variable x = random_input(), w(ones({kWidth}), true), b(zeros({kWidth}), true);
  Generator gen(2);
  const Tensor g = randn({kRows, kWidth}, gen);
  for (auto _ : state) {
    state.PauseTiming();
    for (Variable* v : {&x, &w, &b}) v->zero_grad();
    Variable y = layer_norm(x, w, b);
    state.ResumeTiming();
    y.backward(g);
    benchmark::DoNotOptimize(x.grad().data<float>());
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * 3 * kBytes);
}
BENCHMARK(BM_LayerNormBackward)->ArgName("T")->Arg(1)->Arg(2)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
