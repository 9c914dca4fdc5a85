// Checks exercises::mask_tokens (tutorials/exercises/17_mlm_masking.cpp, or the reference solution)
// from first principles over 3000 draws of a batch: the specials are never chosen, the labels are
// exactly the chosen positions (with their original words), and the shares chosen, masked, replaced
// and kept are BERT's within 5 standard deviations of the binomial (sqrt(n p (1 - p)): one check in
// about 1.7 million fails by chance). The replacements must be uniform over the words, and the draws
// must come from the generator alone. Prints what it found; exits 1 if a check fails or the file is still the stub.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "exercises.h"

using namespace gradformer;

namespace {

constexpr int64_t kVocab = 15, kWords = kVocab - kFirstWordId;  // 10 words, ids 5..14
int failed = 0;

struct Tally {
  int64_t words = 0, chosen = 0, masked = 0, kept = 0, replaced = 0, first_words = 0, first_chosen = 0;
  std::vector<int64_t> replaced_by = std::vector<int64_t>(kVocab, 0);  // how often each word came in
  std::vector<double> expected_by = std::vector<double>(kVocab, 0);    // ... and its expectation
  std::string broken;                                                  // the first rule a draw broke
};

// Adds one draw to the tally: every position by the rules, a chosen one by what became of it.
void tally(const std::vector<int64_t>& ids, const MlmBatch& batch, size_t S, Tally& t) {
  const std::vector<int64_t> input = batch.input.to_vector<int64_t>(), labels = batch.labels.to_vector<int64_t>();
  if (input.size() != ids.size() || labels.size() != ids.size()) {
    if (t.broken.empty()) t.broken = "a draw returned input or labels of another size than the ids";
    return;
  }
  for (size_t i = 0; i < ids.size(); ++i) {
    const auto broke = [&](const char* rule) {  // keeps the first rule broken, with where
      if (!t.broken.empty()) return;
      char at[128];
      std::snprintf(at, sizeof at, " at [%zu, %zu] (id %lld): input %lld, label %lld", i / S, i % S,
                    static_cast<long long>(ids[i]), static_cast<long long>(input[i]),
                    static_cast<long long>(labels[i]));
      t.broken = rule + std::string(at);
    };
    const bool first = i % S == 1;  // the first word of the row: <s> is at 0
    if (ids[i] < kFirstWordId) {
      if (input[i] != ids[i] || labels[i] != Vocab::pad) broke("a special was chosen");
      continue;
    }
    ++t.words, t.first_words += first;
    if (labels[i] == Vocab::pad) {
      if (input[i] != ids[i]) broke("a word not chosen (label <pad>) was changed");
      continue;
    }
    if (labels[i] != ids[i]) broke("the label of a chosen word is not the word");
    ++t.chosen, t.first_chosen += first;
    if (input[i] == kMaskId) {
      ++t.masked;
    } else if (input[i] == ids[i]) {
      ++t.kept;
    } else if (input[i] < kFirstWordId || input[i] >= kVocab) {
      broke("a replacement is not a word");
    } else {  // a random word other than the original: each of the other words equally likely
      ++t.replaced, ++t.replaced_by[static_cast<size_t>(input[i])];
      for (int64_t w = kFirstWordId; w < kVocab; ++w)
        if (w != ids[i]) t.expected_by[static_cast<size_t>(w)] += 1.0 / (kWords - 1);
    }
  }
}

// |count - n p| within 5 standard deviations of the binomial(n, p).
void share(const std::string& what, int64_t count, int64_t n, double p) {
  const double sd = std::sqrt(n * p * (1 - p)), z = (count - n * p) / sd;
  const bool ok = std::abs(z) < 5;
  std::printf("%-34s %6lld of %6lld = %.4f (expected %.4f, %+.1f sd): %s\n", what.c_str(),
              static_cast<long long>(count), static_cast<long long>(n), n ? static_cast<double>(count) / n : 0.0, p, z,
              ok ? "yes" : "NO");
  if (!ok) ++failed;
}

void rule(const std::string& what, const std::string& broken) {
  std::printf("%-34s: %s\n", what.c_str(), broken.empty() ? "yes" : ("NO, " + broken).c_str());
  if (!broken.empty()) ++failed;
}

Tensor sentences(Generator& gen) {  // 8 sentences of 1 to 12 words, a few <unk> among them
  std::vector<std::vector<int64_t>> out(8);
  for (auto& s : out)
    for (int64_t n = gen.integer(1, 13); n > 0; --n)
      s.push_back(gen.integer(0, 8) == 0 ? Vocab::unk : gen.integer(kFirstWordId, kVocab));
  return encode_sequences(out);
}

}  // namespace

static int checks() {
  Generator data(15), draws(150);
  const Tensor ids = sentences(data);  // [8, S]
  const std::vector<int64_t> id_values = ids.to_vector<int64_t>();
  const MlmBatch first = exercises::mask_tokens(ids, kVocab, draws);
  // Without input and labels of the ids' shape there is nothing to tally.
  const bool shaped = first.input.defined() && first.labels.defined() && first.input.shape() == ids.shape() &&
                      first.labels.shape() == ids.shape();
  rule("input and labels shaped like the ids", shaped ? "" : "one is missing or of another shape");
  if (!shaped) {
    std::printf("mlm masking: %d check(s) FAILED\n", failed);
    return failed;
  }
  Tally t;
  tally(id_values, first, static_cast<size_t>(ids.size(1)), t);
  for (int draw = 1; draw < 3000; ++draw)
    tally(id_values, exercises::mask_tokens(ids, kVocab, draws), static_cast<size_t>(ids.size(1)), t);
  rule("every draw keeps the rules", t.broken);
  share("word positions chosen", t.chosen, t.words, 0.15);
  share("first words of a sentence chosen", t.first_chosen, t.first_words, 0.15);
  // A random word equals the original one time in kWords: it looks kept.
  share("chosen -> <mask>", t.masked, t.chosen, 0.8);
  share("chosen -> another word", t.replaced, t.chosen, 0.1 * (1 - 1.0 / kWords));
  share("chosen, unchanged", t.kept, t.chosen, 0.1 + 0.1 / kWords);
  std::string uneven;
  for (int64_t w = kFirstWordId; w < kVocab && uneven.empty(); ++w) {
    const double expected = t.expected_by[static_cast<size_t>(w)], sd = std::sqrt(expected * (1 - 1.0 / (kWords - 1)));
    if (!(std::abs(static_cast<double>(t.replaced_by[static_cast<size_t>(w)]) - expected) < 5 * sd + 1e-9))
      uneven = "word " + std::to_string(w) + " came in " + std::to_string(t.replaced_by[static_cast<size_t>(w)]) +
               " times, expected " + std::to_string(expected);
  }
  rule("replacements uniform over the words", uneven);
  // The same generator state gives the same draw; the next state another.
  Generator a(7), b(7);
  const MlmBatch one = exercises::mask_tokens(ids, kVocab, a), again = exercises::mask_tokens(ids, kVocab, b),
                 next = exercises::mask_tokens(ids, kVocab, a);
  const auto same = [](const MlmBatch& x, const MlmBatch& y) {
    return x.input.to_vector<int64_t>() == y.input.to_vector<int64_t>() &&
           x.labels.to_vector<int64_t>() == y.labels.to_vector<int64_t>();
  };
  rule("the same generator, the same draw", same(one, again) ? "" : "two generators seeded alike gave different draws");
  rule("the next draw is another", same(one, next) ? "the generator's next draw was the same: is it used?" : "");
  std::printf(failed == 0 ? "mlm masking: all checks pass\n" : "mlm masking: %d check(s) FAILED\n", failed);
  return failed;
}

int main() { return exercises::run_checks("17_mlm_masking.cpp", 15, checks); }
