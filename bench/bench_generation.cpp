// GPT-2 small (124M parameters, random weights: the speed does not depend on their values) at
// batch 1, no gradient, eval mode, on all of the pool's threads; and a model of SmolLM2-135M's shape
// (Llama's block: 30 layers of d 576, 9 heads sharing 3 key/value heads, SwiGLU 1536, tied).
//
//   BM_Generate/prompt:P   one token through forward_step with P positions already in the KV
//                          cache; each iteration then rewinds the cache to P. Generating a token
//                          reads every weight once and the whole cache once:
//                            bytes/token = 4 * (parameters - the position table + one row of it)
//                                        + 4 * 2 * layers * P * N d_k      (keys and values: N
//                                          key/value heads of d_k, so N d_k = d without grouping)
//                          and does about 2 flops per weight, so it is bound by memory, not by
//                          arithmetic. GB/s = bytes/token * tokens/s; of_stream_read = the median
//                          over tokens of the token's GB/s over a stream read (bench/stream_read.h)
//                          made right after it, on as many threads.
//   BM_Prompt/prompt:P     one forward_step over a P-token prompt from an empty cache (what
//                          happens before the first generated token). Counted matmul flops:
//                            per token: 2 * (layers * (4 d^2 + 2 d d_ff) + V d)   (each weight: a
//                                       multiply and an add; the output projection h W_e^T included)
//                            per layer: 4 * P * d per token (q k^T and the weights times v, over all
//                                       P positions, as the masked product computes them)
//                          of_matmul_peak: the median over prompts of GFLOP/s over a 1024^3 matmul
//                          (bench_matmul's square rows) made right after it, on as many threads.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "autograd/all.h"
#include "bench/stream_read.h"
#include "tensor/matmul.h"
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

// SmolLM2-135M's shape (params --preset smollm2-135m), its context cut to 2048 (the rotary tables'
// length; the benchmark reads at most 1024 positions).
DecoderOnly& smollm2() {
  static const std::unique_ptr<DecoderOnly> model = [] {
    TransformerConfig c = hub_preset_config("smollm2-135m");
    c.max_len = 2048;
    auto m = std::make_unique<DecoderOnly>(c, /*seed=*/1);
    m->eval();
    return m;
  }();
  return *model;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One read of the stream array (bench/stream_read.h) on all threads, in GB/s.
double stream_read_now() {
  const std::vector<float>& x = bench::stream_source();
  const auto start = std::chrono::steady_clock::now();
  benchmark::DoNotOptimize(bench::parallel_sum(x.data(), bench::kStreamFloats, num_threads()));
  return 4.0 * static_cast<double>(bench::kStreamFloats) / seconds_since(start) / 1e9;
}

// One 1024 x 1024 x 1024 matmul on all threads, in GFLOP/s: the peak prompt processing is held to.
double matmul_peak_now() {
  static const Tensor a = full({1024, 1024}, 0.5), b = full({1024, 1024}, 0.25);
  const auto start = std::chrono::steady_clock::now();
  benchmark::DoNotOptimize(matmul(a, b).data<float>());
  return 2.0 * 1024 * 1024 * 1024 / seconds_since(start) / 1e9;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
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

// Each token is followed by one stream read (not timed with it), and the token's GB/s is divided
// by that read's: on a machine others share, both see about the same load.
void generate_tokens(benchmark::State& state, DecoderOnly& model) {
  const int64_t P = state.range(0);
  NoGradGuard no_grad;
  const TransformerConfig& c = model.config();
  const LayerConfig layer = c.layer();
  DecoderOnlyCache cache = model.start_cache();
  Generator gen(7);
  model.forward_step(randint({1, P}, 0, c.tgt_vocab, gen), cache);
  const Tensor next = randint({1, 1}, 0, c.tgt_vocab, gen);
  // Every weight once (of a learned position table, one row), then every cached key and value.
  const int64_t table_rows_unread = c.positions == Positions::Learned ? c.max_len - 1 : 0;
  const double weights = static_cast<double>(model.parameter_count() - table_rows_unread * c.d_model);
  const double cached = 2.0 * static_cast<double>(c.layers * P * layer.kv_heads() * layer.head_dim());
  const double bytes = 4.0 * (weights + cached);
  double seconds = 0;  // in forward_step only
  std::vector<double> reads, fractions;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    Variable logits = model.forward_step(next, cache);
    benchmark::DoNotOptimize(logits.value().data<float>());
    const double token_seconds = seconds_since(start);
    seconds += token_seconds;
    rewind(cache, P);
    reads.push_back(stream_read_now());
    fractions.push_back(bytes / token_seconds / 1e9 / reads.back());
  }
  const double tokens = static_cast<double>(state.iterations());
  state.counters["tokens/s"] = tokens / seconds;
  state.counters["ms/token"] = 1e3 * seconds / tokens;
  state.counters["MB/token"] = bytes / 1e6;
  state.counters["GB/s"] = tokens * bytes / seconds / 1e9;
  state.counters["stream_read_GB/s"] = median(reads);
  state.counters["of_stream_read"] = median(fractions);  // the median over tokens
}

void BM_Generate(benchmark::State& state) { generate_tokens(state, gpt2()); }
BENCHMARK(BM_Generate)
    ->ArgName("prompt")
    ->Arg(1)
    ->Arg(128)
    ->Arg(512)
    ->Arg(1023)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_GenerateSmolLM2(benchmark::State& state) { generate_tokens(state, smollm2()); }
BENCHMARK(BM_GenerateSmolLM2)
    ->ArgName("prompt")
    ->Arg(1)
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
  const double d = static_cast<double>(c.d_model), p = static_cast<double>(P);
  const double per_token = 2.0 * (static_cast<double>(c.layers) * (4 * d * d + 2 * d * static_cast<double>(c.d_ff)) +
                                  static_cast<double>(c.tgt_vocab) * d);
  const double flops = p * per_token + static_cast<double>(c.layers) * 4.0 * p * p * d;
  std::vector<double> peaks, fractions;
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    DecoderOnlyCache cache = model.start_cache();
    Variable logits = model.forward_step(ids, cache);
    benchmark::DoNotOptimize(logits.value().data<float>());
    const double prompt_seconds = seconds_since(start);
    state.PauseTiming();
    peaks.push_back(matmul_peak_now());
    fractions.push_back(flops / prompt_seconds / 1e9 / peaks.back());
    state.ResumeTiming();
  }
  state.counters["matmul_peak_GFLOP/s"] = median(peaks);
  state.counters["of_matmul_peak"] = median(fractions);
  state.counters["GFLOP/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * flops / 1e9, benchmark::Counter::kIsRate);
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * p, benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Prompt)->ArgName("prompt")->Arg(128)->Arg(512)->Arg(1024)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
