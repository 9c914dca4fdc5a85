// The overhead of autograd: recording an op and back-propagating through it, on one-element
// tensors (so the arithmetic itself costs nothing), beside the plain tensor op in the same run.
//   ns_per_op = time per iteration / ops per iteration
// Target: record + backward <= 500 ns per op (PyTorch's C++ front end spends about 1 us).
#include <benchmark/benchmark.h>

#include "autograd/all.h"

using namespace gradformer;

namespace {

// The plain tensor op: c = a + b (or a * b) on one-element tensors, no autograd at all.
void BM_TensorOp(benchmark::State& state) {
  const bool multiply = state.range(0) == 1;
  const Tensor a = scalar(1.5), b = scalar(0.5);
  for (auto _ : state) {
    Tensor c = multiply ? a * b : a + b;
    benchmark::DoNotOptimize(c);
  }
  state.counters["ns_per_op"] = benchmark::Counter(static_cast<double>(state.iterations()),
                                                   benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_TensorOp)->ArgName("mul")->Arg(0)->Arg(1)->Unit(benchmark::kNanosecond);

// Recording only: the same op on Variables that require grad (the graph is built, then dropped).
void BM_Record(benchmark::State& state) {
  const bool multiply = state.range(0) == 1;
  Variable a(scalar(1.5), true), b(scalar(0.5), true);
  for (auto _ : state) {
    Variable c = multiply ? a * b : a + b;
    benchmark::DoNotOptimize(c);
  }
  state.counters["ns_per_op"] = benchmark::Counter(static_cast<double>(state.iterations()),
                                                   benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_Record)->ArgName("mul")->Arg(0)->Arg(1)->Unit(benchmark::kNanosecond);

// One op, recorded and back-propagated: c = a op b; c.backward(). Includes the seed dL/dc = 1,
// ordering the (one-node) graph, the backward function and accumulating into a.grad and b.grad.
void BM_RecordBackward(benchmark::State& state) {
  const bool multiply = state.range(0) == 1;
  Variable a(scalar(1.5), true), b(scalar(0.5), true);
  for (auto _ : state) {
    Variable c = multiply ? a * b : a + b;
    c.backward();
  }
  state.counters["ns_per_op"] = benchmark::Counter(static_cast<double>(state.iterations()),
                                                   benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_RecordBackward)->ArgName("mul")->Arg(0)->Arg(1)->Unit(benchmark::kNanosecond);

// A chain of N ops, y = y op b, recorded then back-propagated once: the per-op cost once the fixed
// costs of a backward call are spread out, as in a real model with thousands of ops per step.
void BM_ChainRecordBackward(benchmark::State& state) {
  const bool multiply = state.range(0) == 1;
  const int64_t n = state.range(1);
  Variable x(scalar(1.0), true), b(scalar(multiply ? 1.0 : 0.5), true);
  for (auto _ : state) {
    Variable y = x;
    for (int64_t i = 0; i < n; ++i) y = multiply ? y * b : y + b;
    y.backward();
  }
  state.counters["ns_per_op"] = benchmark::Counter(static_cast<double>(state.iterations() * n),
                                                   benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ChainRecordBackward)
    ->ArgNames({"mul", "ops"})
    ->Args({0, 100})
    ->Args({1, 100})
    ->Unit(benchmark::kMicrosecond);

// The same chain on plain tensors: the arithmetic alone.
void BM_ChainTensor(benchmark::State& state) {
  const bool multiply = state.range(0) == 1;
  const int64_t n = state.range(1);
  const Tensor x = scalar(1.0), b = scalar(multiply ? 1.0 : 0.5);
  for (auto _ : state) {
    Tensor y = x;
    for (int64_t i = 0; i < n; ++i) y = multiply ? y * b : y + b;
    benchmark::DoNotOptimize(y);
  }
  state.counters["ns_per_op"] = benchmark::Counter(static_cast<double>(state.iterations() * n),
                                                   benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_ChainTensor)->ArgNames({"mul", "ops"})->Args({0, 100})->Args({1, 100})->Unit(benchmark::kMicrosecond);

}  // namespace
