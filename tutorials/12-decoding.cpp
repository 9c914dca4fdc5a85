// Chapter 12: decoding. The companion program of tutorials/12-decoding.md: every listing of the
// chapter is a piece of this file, and every output the chapter shows is what this program prints.
//
//   12-decoding            the chapter's numbers (outputs of 25, 50, 100 and 200 tokens, best of 3 timings)
//   12-decoding --quick    the same checks on less work (what the test suite runs)
//
// It exits with a non-zero status if a claim the chapter makes does not hold.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <iostream>
#include <vector>

#include "claims.h"
#include "nn/all.h"
#include "tensor/parallel.h"
#include "transformer/data/batch.h"
#include "transformer/data/copy_task.h"
#include "transformer/model/decoding.h"
#include "transformer/model/encoder_decoder.h"

using namespace gradformer;
using namespace tutorial;

namespace {

std::string tokens_text(const std::vector<int64_t>& tokens) {
  std::string out;
  for (int64_t t : tokens) {
    if (!out.empty()) out += ' ';
    out += std::to_string(t);
  }
  return out;
}

// ---- 1. greedy and beam search --------------------------------------------------------------------

void greedy_and_beam(bool quick) {
  section("greedy and beam search");
  // An untrained model over 20 tokens: its next-token distributions are broad, which is where the
  // two searches part ways. No end token (eos -1): every output has exactly 8 tokens, so the
  // length penalty plays no part and beam search ranks by log P alone.
  TransformerConfig config{.src_vocab = 20,
                           .tgt_vocab = 20,
                           .d_model = 32,
                           .d_ff = 64,
                           .heads = 4,
                           .layers = 2,
                           .dropout = 0.0,
                           .max_len = 64};
  EncoderDecoder model(config, /*seed=*/5);
  Generator gen(11);
  const DecodeOptions options{.max_len = 8, .eos = -1};
  const int sentences = quick ? 8 : 30;
  int better = 0, worse = 0;
  double gain = 0;
  Hypothesis example_greedy, example_beam;
  std::cout << "source  greedy log P  beam-4 log P\n";
  for (int i = 0; i < sentences; ++i) {
    const Tensor src = randint({1, 10}, 4, 20, gen);
    const Tensor src_mask = padding_mask(src, Vocab::pad);
    const Hypothesis greedy = greedy_decode(model, src, src_mask, options)[0];
    const Hypothesis beam = beam_search(model, src, src_mask, /*beam=*/4, /*alpha=*/0.6, options);
    if (i < 10) std::printf("%6d  %12.4f  %12.4f\n", i, greedy.log_prob, beam.log_prob);
    if (beam.log_prob > greedy.log_prob + 1e-9 && better++ == 0) example_greedy = greedy, example_beam = beam;
    worse += beam.log_prob < greedy.log_prob - 1e-9;
    gain += beam.log_prob - greedy.log_prob;
  }
  std::printf(
      "of %d sources: beam search found a more probable output for %d, a less probable one for %d; "
      "mean gain %.3f nats\n",
      sentences, better, worse, gain / sentences);
  claim(better > 0, "beam search finds more probable outputs than greedy");
  claim(better > worse, "more often better than worse");
  std::printf("the first of them:\ngreedy: %s   log P %.4f\nbeam 4: %s   log P %.4f\n",
              tokens_text(example_greedy.tokens).c_str(), example_greedy.log_prob,
              tokens_text(example_beam.tokens).c_str(), example_beam.log_prob);

  // The length penalty of Wu et al. (2016): lp(y) = ((5 + |y|) / 6)^alpha, score = log P / lp.
  std::cout << "length  lp (alpha 0.6)   score of log P = -0.5 per token\n";
  for (int length : {1, 2, 5, 10, 20, 40}) {
    const double lp = std::pow((5.0 + length) / 6.0, 0.6);
    std::printf("%6d  %14.3f   %8.3f\n", length, lp, -0.5 * length / lp);
  }
}

// ---- 2. the key/value cache --------------------------------------------------------------------------

// Best of `repeats` timings of greedy decoding `length` tokens, in milliseconds of CPU time (one
// thread, so CPU time is the work done; unlike wall time it holds still on a busy machine).
double time_decode(EncoderDecoder& model, const Tensor& src, int64_t length, bool use_cache, int repeats,
                   Hypothesis& out) {
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const std::clock_t start = std::clock();
    out = greedy_decode(model, src, padding_mask(src, Vocab::pad),
                        {.max_len = length, .eos = -1, .use_cache = use_cache})[0];
    best = std::min(best, 1e3 * static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC);
  }
  return best;
}

void kv_cache(bool quick) {
  section("incremental decoding with a key/value cache");
  TransformerConfig config{.src_vocab = 100,
                           .tgt_vocab = 100,
                           .d_model = 128,
                           .d_ff = 512,
                           .heads = 8,
                           .layers = 2,
                           .dropout = 0.0,
                           .max_len = 256};
  EncoderDecoder model(config, /*seed=*/1);
  Generator gen(2);
  const Tensor src = randint({1, 10}, 4, 100, gen);
  const std::vector<int64_t> lengths =
      quick ? std::vector<int64_t>{10, 20, 40} : std::vector<int64_t>{25, 50, 100, 200};
  const int repeats = quick ? 1 : 3;
  const int threads = num_threads();
  set_num_threads(1);
  Hypothesis warm_up;
  time_decode(model, src, 10, true, 1, warm_up);  // first use: memory allocation, thread start-up
  std::cout << "tokens   ms/token without cache   ms/token with cache   speedup   same output\n";
  std::vector<double> uncached_per_token, cached_per_token;
  for (int64_t length : lengths) {
    Hypothesis without, with;
    const double slow = time_decode(model, src, length, false, repeats, without);
    const double fast = time_decode(model, src, length, true, repeats, with);
    const bool same = without.tokens == with.tokens && std::abs(without.log_prob - with.log_prob) < 1e-4;
    const double n = static_cast<double>(length);
    uncached_per_token.push_back(slow / n), cached_per_token.push_back(fast / n);
    std::printf("%6lld   %22.3f   %19.3f   %6.1fx   %s (log P %.4f / %.4f)\n", static_cast<long long>(length), slow / n,
                fast / n, slow / fast, same ? "yes" : "NO", without.log_prob, with.log_prob);
    claim(same, "the cache changes nothing in the output");
    claim(static_cast<int64_t>(with.tokens.size()) == length, "eos -1 decodes exactly max_len tokens");
  }
  set_num_threads(threads);
  claim(cached_per_token.back() < uncached_per_token.back(), "the cache is faster");
  if (!quick) {
    claim(uncached_per_token.back() > 3 * uncached_per_token.front(),
          "without the cache a token costs more the longer the output");
    claim(cached_per_token.back() < 2 * cached_per_token.front(),
          "with the cache a token costs about the same at every length");
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  greedy_and_beam(quick);
  kv_cache(quick);
  std::cout << "\n" << (failures == 0 ? "all claims hold" : "SOME CLAIMS FAILED") << "\n";
  return failures == 0 ? 0 : 1;
}
