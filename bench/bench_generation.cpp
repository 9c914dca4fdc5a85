// GPT-2 small (124M parameters, random weights: the speed does not depend on their values) at
// batch 1, no gradient, eval mode, on all of the pool's threads.
//
//   BM_Generate/prompt:P   one token through forward_step with P positions already in the KV
//                          cache; each iteration then rewinds the cache to P. Generating a token
//                          reads every weight once and the whole cache once:
//                            bytes/token = 4 * (parameters - the position table + one row of it)
//                                        + 4 * 2 * layers * P * d          (keys and values)
//                          and does about 2 flops per weight, so it is bound by memory, not by
//                          arithmetic. GB/s = bytes/token * tokens/s; of_stream_read = GB/s over
//                          the stream read (bench/stream_read.h) measured at the start of this run.
//   BM_Prompt/prompt:P     one forward_step over a P-token prompt from an empty cache (what
//                          happens before the first generated token). Counted matmul flops:
//                            per token: 2 * (layers * (4 d^2 + 2 d d_ff) + V d)   (each weight: a
//                                       multiply and an add; the output projection h W_e^T included)
//                            per layer: 4 * P * d per token (q k^T and the weights times v, over all
//                                       P positions, as the masked product computes them)
//                          GFLOP/s against bench_matmul's large square row (the matmul peak).
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>

#include "autograd/all.h"
#include "bench/stream_read.h"
#include "tensor/random.h"
#include "transformer/model/decoder_only.h"

using namespace gradformer;

namespace {

DecoderOnly& gpt2() {
  static const std::unique_ptr<DecoderOnly> model = [] {
    auto m = std::make_unique<DecoderOnly>(gpt2_small_config(), /*seed=*/1);
    m->eval();
    return m;
  }();
  return *model;
}

double stream_read_bandwidth() {
  static const double gbs = bench::stream_read_gbs(5);
  return gbs;
}

Tensor prompt_ids(int64_t length) {
  Generator gen(7);
  return randint({1, length}, 0, gpt2().config().tgt_vocab, gen);
}

// Back to the first `length` positions: later appends reuse the storage beyond them.
void rewind(DecoderOnlyCache& cache, int64_t length) {
  for (KVCache& layer : cache.layers) layer.truncate(length);
  cache.length = length;
}

void BM_Generate(benchmark::State& state) {
  const int64_t P = state.range(0);
  const double reference = stream_read_bandwidth();
  NoGradGuard no_grad;
  DecoderOnly& model = gpt2();
  const TransformerConfig& c = model.config();
  DecoderOnlyCache cache = model.start_cache();
  model.forward_step(prompt_ids(P), cache);
  const Tensor next = prompt_ids(1);
  double seconds = 0;  // in forward_step only, not rewinding
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    Variable logits = model.forward_step(next, cache);
    benchmark::DoNotOptimize(logits.value().data<float>());
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rewind(cache, P);
  }
  const double weights = static_cast<double>(model.parameter_count() - (c.max_len - 1) * c.d_model);
  const double bytes = 4.0 * (weights + 2.0 * static_cast<double>(c.layers * P * c.d_model));
  const double tokens = static_cast<double>(state.iterations());
  state.counters["tokens/s"] = tokens / seconds;
  state.counters["ms/token"] = 1e3 * seconds / tokens;
  state.counters["MB/token"] = bytes / 1e6;
  state.counters["GB/s"] = tokens * bytes / seconds / 1e9;
  state.counters["stream_read_GB/s"] = reference;
  state.counters["of_stream_read"] = tokens * bytes / seconds / 1e9 / reference;
}
BENCHMARK(BM_Generate)
    ->ArgName("prompt")
    ->Arg(1)
    ->Arg(128)
    ->Arg(512)
    ->Arg(1023)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_Prompt(benchmark::State& state) {
  const int64_t P = state.range(0);
  NoGradGuard no_grad;
  DecoderOnly& model = gpt2();
  const TransformerConfig& c = model.config();
  const Tensor ids = prompt_ids(P);
  for (auto _ : state) {
    DecoderOnlyCache cache = model.start_cache();
    Variable logits = model.forward_step(ids, cache);
    benchmark::DoNotOptimize(logits.value().data<float>());
  }
  const double d = static_cast<double>(c.d_model), p = static_cast<double>(P);
  const double per_token = 2.0 * (static_cast<double>(c.layers) * (4 * d * d + 2 * d * static_cast<double>(c.d_ff)) +
                                  static_cast<double>(c.tgt_vocab) * d);
  const double flops = p * per_token + static_cast<double>(c.layers) * 4.0 * p * p * d;
  state.counters["GFLOP/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * flops / 1e9, benchmark::Counter::kIsRate);
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * p, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Prompt)->ArgName("prompt")->Arg(128)->Arg(512)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
