// The byte-level BPE's speed (transformer/data/learn_bpe.h, bpe.h, pre_tokenize.h) on a generated
// text of 10 MB, and a training step next to it for scale:
//   BM_PreTokenizeAndCount   GPT-2's pre-tokens of the 10 MB, and their counts        (MB/s)
//   BM_LearnBpe              8,000 merges learned from those counts (vocabulary 8,256)
//   BM_LearnBpeLongPreToken  1,000 merges from 1 MB of it as words, and as one pre-token of letters
//   BM_PreTokenize           1 MB of held-out text, cut into pieces of 16 KB, pre-tokenized
//   BM_Encode                those pieces' pre-tokens encoded: every pre-token merged (a cache of
//                            pre-tokens met before, GPT-2's, was measured here and removed: filled
//                            within a call it cost more than it saved: 429 ms against 241 for the
//                            1 MB in 16 KB pieces, 222 against 200 for the 1 MB in one call)
//   BM_DecoderOnlyStep       one training step of a decoder-only model (N 2, h 8, d_ff 4 d) on a
//                            batch of 16 x 256 tokens of the encoded text, vocabulary 8,256
// Encoding a batch's text next to a training step: 4,096 tokens of this text are 4,096 x
// bytes/token bytes (BM_Encode's counter); their time is those bytes / (MB/s of BM_PreTokenize, then
// of BM_Encode). The data (text, counts, tokenizer) are made once, outside every timing.
//   build/bench/bench_bpe --benchmark_filter='Learn|PreTokenize|Encode' --benchmark_min_time=0.3
//
// The text is not English but is shaped like it, and the same bytes on every machine: a lexicon of
// 30,000 pseudo-words (syllables such as "stra", "me", "thoun"; the shortest words the most frequent)
// drawn by Zipf's law, p(word of rank r) ~ 1 / (r + 2.7) (Mandelbrot's fit to English), in
// sentences of 3 to 24 words, the first capitalized, with commas, a contraction ("'s") and a number
// now and then, a full stop, question or exclamation mark at the end, and a blank line between
// paragraphs. ASCII only (the pre-tokenizer classifies ASCII so far).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "nn/all.h"
#include "transformer/data/learn_bpe.h"
#include "transformer/data/lm_batch.h"
#include "transformer/data/pre_tokenize.h"
#include "transformer/model/decoder_only.h"
#include "transformer/train/forward.h"

using namespace gradformer;

namespace {

constexpr size_t kTrainBytes = 10'000'000, kHeldOutBytes = 1'000'000, kPieceBytes = 16'384;
constexpr int64_t kMerges = 8000;

/// splitmix64: a small generator whose numbers are the same with every compiler and library.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  size_t below(size_t n) { return static_cast<size_t>(next() % n); }
  bool chance(double p) { return uniform() < p; }

 private:
  uint64_t state_;
};

/// 30,000 distinct pseudo-words, shortest first (rank 0 is the most frequent word).
std::vector<std::string> make_lexicon() {
  static const std::array<const char*, 27> onsets = {"",  "b", "c",  "d",  "f",  "g",  "h",  "j",  "k",
                                                     "l", "m", "n",  "p",  "r",  "s",  "t",  "v",  "w",
                                                     "y", "z", "st", "th", "ch", "sh", "pr", "tr", "str"};
  static const std::array<const char*, 9> vowels = {"a", "e", "i", "o", "u", "ea", "ou", "ai", "y"};
  static const std::array<const char*, 10> codas = {"", "", "", "n", "r", "s", "t", "l", "nd", "ng"};
  Random random(1);
  std::set<std::string> seen;
  std::vector<std::string> words;
  while (words.size() < 30000) {
    const size_t syllables = 1 + random.below(2) + random.below(3);  // 1 to 4, 2 and 3 the likeliest
    std::string word;
    for (size_t s = 0; s < syllables; ++s) {
      word += onsets[random.below(onsets.size())];
      word += vowels[random.below(vowels.size())];
      word += codas[random.below(codas.size())];
    }
    if (seen.insert(word).second) words.push_back(word);
  }
  std::stable_sort(words.begin(), words.end(), [](const auto& a, const auto& b) { return a.size() < b.size(); });
  return words;
}

/// At least `bytes` bytes of text drawn with the given seed (see the file's comment).
std::string make_text(size_t bytes, uint64_t seed) {
  static const std::vector<std::string> lexicon = make_lexicon();
  static const std::vector<double> cumulative = [] {
    std::vector<double> c;
    double total = 0;
    for (size_t r = 0; r < lexicon.size(); ++r) c.push_back(total += 1.0 / (static_cast<double>(r) + 2.7));
    return c;
  }();
  Random random(seed);
  const auto word = [&] {
    const double u = random.uniform() * cumulative.back();
    return lexicon[static_cast<size_t>(std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin())];
  };
  std::string text;
  while (text.size() < bytes) {
    const size_t sentences = 1 + random.below(6);
    for (size_t s = 0; s < sentences; ++s) {
      const size_t words = 3 + random.below(22);
      for (size_t w = 0; w < words; ++w) {
        if (w > 0) text += ' ';
        if (random.chance(0.02)) {
          text += std::to_string(random.chance(0.5) ? 1800 + random.below(226) : random.below(1000));
        } else {
          std::string next = word();
          if (w == 0) next[0] = static_cast<char>(next[0] - 'a' + 'A');
          text += next;
          if (random.chance(0.01)) text += "'s";
        }
        if (w + 1 < words && random.chance(0.08)) text += ',';
      }
      text += random.chance(0.85) ? "." : random.chance(0.5) ? "?" : "!";
      if (s + 1 < sentences) text += ' ';
    }
    text += "\n\n";
  }
  return text;
}

const std::string& train_text() {
  static const std::string text = make_text(kTrainBytes, 2);
  return text;
}

const PreTokenCounts& train_counts() {
  static const PreTokenCounts counts = [] {
    PreTokenCounts c;
    add_pre_token_counts(c, gpt2_pre_tokens(train_text()));
    return c;
  }();
  return counts;
}

const BytePairEncoding& tokenizer() {
  static const BytePairEncoding bpe = learn_bpe_from_counts(train_counts(), 256 + kMerges);
  return bpe;
}

/// Held-out text of the same kind, cut into pieces of 16 KB.
const std::vector<std::string>& held_out_pieces() {
  static const std::vector<std::string> pieces = [] {
    const std::string text = make_text(kHeldOutBytes, 3);
    std::vector<std::string> out;
    for (size_t i = 0; i < text.size(); i += kPieceBytes) out.push_back(text.substr(i, kPieceBytes));
    return out;
  }();
  return pieces;
}

const std::vector<std::vector<std::string>>& held_out_pre_tokens() {
  static const std::vector<std::vector<std::string>> pre_tokens = [] {
    std::vector<std::vector<std::string>> out;
    for (const std::string& piece : held_out_pieces()) out.push_back(gpt2_pre_tokens(piece));
    return out;
  }();
  return pre_tokens;
}

int64_t held_out_bytes() {
  int64_t bytes = 0;
  for (const std::string& piece : held_out_pieces()) bytes += static_cast<int64_t>(piece.size());
  return bytes;
}

void BM_PreTokenizeAndCount(benchmark::State& state) {
  const std::string& text = train_text();
  size_t distinct = 0;
  for (auto _ : state) {
    PreTokenCounts counts;
    add_pre_token_counts(counts, gpt2_pre_tokens(text));
    distinct = counts.size();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
  state.counters["distinct pre-tokens"] = static_cast<double>(distinct);
}
BENCHMARK(BM_PreTokenizeAndCount)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

void BM_LearnBpe(benchmark::State& state) {
  const PreTokenCounts& counts = train_counts();  // counted before the timing
  size_t merges = 0;
  for (auto _ : state) merges = learn_bpe_from_counts(counts, 256 + kMerges).merges().size();
  state.counters["merges"] = static_cast<double>(merges);
}
BENCHMARK(BM_LearnBpe)->Unit(benchmark::kSecond)->Iterations(1)->UseRealTime();

// One megabyte of the text learned two ways, 1,000 merges each: as words (its GPT-2 pre-tokens),
// and with every byte but the letters removed, one pre-token of about 800,000 letters, as a text
// without spaces makes. A merge visits the places of its pair alone, so the long pre-token costs
// time in proportion to its bytes, not to bytes x merges (before that, 1 MB took minutes).
PreTokenCounts first_megabyte(bool as_words) {
  const std::string text = train_text().substr(0, 1 << 20);
  PreTokenCounts counts;
  if (as_words) {
    add_pre_token_counts(counts, gpt2_pre_tokens(text));
  } else {
    std::string letters;
    for (const char c : text)
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) letters += c;
    counts[letters] = 1;
  }
  return counts;
}

void BM_LearnBpeLongPreToken(benchmark::State& state) {
  const PreTokenCounts counts = first_megabyte(state.range(0) == 0);
  for (auto _ : state) benchmark::DoNotOptimize(learn_bpe_from_counts(counts, 256 + 1000).merges().size());
  state.SetLabel(state.range(0) == 0 ? "1 MB as words" : "1 MB as one pre-token");
}
BENCHMARK(BM_LearnBpeLongPreToken)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_PreTokenize(benchmark::State& state) {
  for (auto _ : state) {
    for (const std::string& piece : held_out_pieces()) benchmark::DoNotOptimize(gpt2_pre_tokens(piece));
  }
  state.SetBytesProcessed(state.iterations() * held_out_bytes());
}
BENCHMARK(BM_PreTokenize)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Encode(benchmark::State& state) {
  const BytePairEncoding& bpe = tokenizer();
  const auto& pieces = held_out_pre_tokens();
  int64_t tokens = 0;
  for (auto _ : state) {
    for (const auto& pre_tokens : pieces) tokens += static_cast<int64_t>(bpe.encode(pre_tokens).size());
  }
  const int64_t bytes = state.iterations() * held_out_bytes();
  state.SetBytesProcessed(bytes);
  state.counters["bytes/token"] = static_cast<double>(bytes) / static_cast<double>(tokens);
  state.counters["tokens/s"] = benchmark::Counter(static_cast<double>(tokens), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Encode)->Unit(benchmark::kMillisecond)->UseRealTime();

/// A batch of 16 sequences of 257 tokens of the encoded held-out text: inputs and targets [16, 256].
LmBatch text_batch() {
  const BytePairEncoding& bpe = tokenizer();
  std::vector<int64_t> ids;
  for (const auto& pre_tokens : held_out_pre_tokens()) {
    const std::vector<int64_t> piece = bpe.encode(pre_tokens);
    ids.insert(ids.end(), piece.begin(), piece.end());
  }
  std::vector<LmSequence> sequences;
  std::vector<int64_t> indices;
  for (size_t b = 0; b < 16; ++b) {
    const auto start = ids.begin() + static_cast<std::ptrdiff_t>(b * 257);
    sequences.push_back(scored_from({start, start + 257}));
    indices.push_back(static_cast<int64_t>(b));
  }
  return make_lm_batch(sequences, indices);
}

void BM_DecoderOnlyStep(benchmark::State& state) {
  const int64_t d = state.range(0);
  TransformerConfig config = decoder_only_config(tokenizer().size());
  config.d_model = d, config.d_ff = 4 * d, config.max_len = 256;
  DecoderOnly model(config, /*seed=*/1);
  model.train();
  Adam adam(model.parameters(), {.lr = 1e-4});
  const LmBatch batch = text_batch();
  for (auto _ : state) {
    const Variable loss = lm_loss(model, batch);
    adam.zero_grad();
    loss.backward();
    adam.step();
    benchmark::DoNotOptimize(loss.item());
  }
  state.counters["tokens/step"] = static_cast<double>(batch.ntokens);
}
BENCHMARK(BM_DecoderOnlyStep)
    ->ArgName("d_model")
    ->Arg(128)
    ->Arg(256)
    ->Iterations(3)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
