// Greedy decoding of 100-token outputs with and without the key/value cache, on one small model
// (d_model 128, 2 layers, h 8, d_ff 512, vocabularies of 100, untrained: the speed of decoding does
// not depend on the weights). The end token is disabled (eos -1), so every run decodes exactly
// 100 tokens; both rows come from one run, so the speedup is their tokens/s ratio.
//   BM_GreedyDecode/cache:0   every step decodes the whole prefix again: step t costs t positions
//   BM_GreedyDecode/cache:1   every step decodes one new position against the cached keys and values
// Tutorial chapter 13 explains and measures the same at several output lengths.
#include <benchmark/benchmark.h>

#include "nn/all.h"
#include "transformer/model/decoding.h"
#include "transformer/model/encoder_decoder.h"
#include "transformer/model/masks.h"

using namespace gradformer;

namespace {

void BM_GreedyDecode(benchmark::State& state) {
  const bool use_cache = state.range(0) == 1;
  const int64_t tokens = 100;
  TransformerConfig config{.src_vocab = 100,
                           .tgt_vocab = 100,
                           .d_model = 128,
                           .d_ff = 512,
                           .heads = 8,
                           .layers = 2,
                           .dropout = 0.1,
                           .max_len = 256};
  EncoderDecoder model(config, /*seed=*/1);
  Generator gen(2);
  const Tensor src = randint({1, 10}, 4, 100, gen);      // one 10-token source sentence
  const Tensor src_mask = padding_mask(src, /*pad=*/0);  // all true: the source has no padding
  const DecodeOptions options{.max_len = tokens, .eos = -1, .use_cache = use_cache};
  for (auto _ : state) {
    std::vector<Hypothesis> out = greedy_decode(model, src, src_mask, options);
    if (static_cast<int64_t>(out[0].tokens.size()) != tokens) state.SkipWithError("decoded the wrong number of tokens");
    benchmark::DoNotOptimize(out);
  }
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * tokens), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_GreedyDecode)->ArgName("cache")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
