#include <cmath>

#include "catch.h"
#include "transformer/data/tsv.h"
#include "transformer/evaluate/bleu.h"

using namespace gradformer;

namespace {
using Corpus = std::vector<std::vector<std::string>>;
std::vector<std::string> words(const char* sentence) { return split_words(sentence); }
}  // namespace

TEST_CASE("bleu of a perfect translation is 100") {
  const Corpus refs = {words("the black cat eats an apple ."), words("i do not eat the cake .")};
  const BleuScore score = corpus_bleu(refs, refs);
  CHECK(score.bleu == Approx(100.0));
  CHECK(score.brevity_penalty == 1.0);
  for (double p : score.precisions) CHECK(p == 1.0);
  CHECK(exact_match_rate(refs, refs) == 1.0);
}

TEST_CASE("bleu hand-computed case") {
  // hypothesis "the cat sat on the mat", reference "the cat sat on a mat":
  //   1-grams: the(2, clipped to 1) cat sat on mat          -> 5/6
  //   2-grams: the cat, cat sat, sat on  | on the, the mat   -> 3/5
  //   3-grams: the cat sat, cat sat on   | sat on the, ...   -> 2/4
  //   4-grams: the cat sat on            | 2 others          -> 1/3
  //   c = r = 6, BP = 1;  BLEU = 100 * (5/6 * 3/5 * 2/4 * 1/3)^(1/4) = 100 * (1/12)^(1/4) = 53.7285
  const BleuScore score = corpus_bleu(Corpus{words("the cat sat on the mat")}, Corpus{words("the cat sat on a mat")});
  CHECK(score.matches == std::array<int64_t, 4>{5, 3, 2, 1});
  CHECK(score.totals == std::array<int64_t, 4>{6, 5, 4, 3});
  CHECK(score.bleu == Approx(53.7285).epsilon(1e-5));
  CHECK(score.bleu == Approx(100 * std::pow(1.0 / 12, 0.25)));
}

TEST_CASE("bleu sums counts over the corpus before dividing") {
  // A perfect "a b c d" (4/4, 3/3, 2/2, 1/1) plus the case above (5/6, 3/5, 2/4, 1/3):
  // 9/10 * 6/8 * 4/6 * 2/4 = 0.225, BLEU = 100 * 0.225^(1/4) = 68.87 — not the mean of 100 and 53.73.
  const BleuScore score = corpus_bleu(Corpus{words("a b c d"), words("the cat sat on the mat")},
                                      Corpus{words("a b c d"), words("the cat sat on a mat")});
  CHECK(score.bleu == Approx(100 * std::pow(0.225, 0.25)));
  CHECK(score.bleu == Approx(68.87).epsilon(1e-3));
}

TEST_CASE("bleu with no matching 4-gram is 0") {
  // "the cat sat on the mat" against "the cat is on the mat": p1 = 5/6, p2 = 3/5, p3 = 1/4, p4 = 0/3
  const BleuScore score = corpus_bleu(Corpus{words("the cat sat on the mat")}, Corpus{words("the cat is on the mat")});
  CHECK(score.matches == std::array<int64_t, 4>{5, 3, 1, 0});
  CHECK(score.bleu == 0.0);
  // sentences shorter than four tokens have no 4-grams at all: also 0, without smoothing
  CHECK(corpus_bleu(Corpus{words("a b c")}, Corpus{words("a b c")}).bleu == 0.0);
}

TEST_CASE("bleu brevity penalty for a short hypothesis") {
  // "the cat sat on" against "the cat sat on the mat": every precision is 1, c = 4, r = 6,
  // BP = exp(1 - 6/4) = exp(-0.5) = 0.6065, BLEU = 60.65
  const BleuScore score = corpus_bleu(Corpus{words("the cat sat on")}, Corpus{words("the cat sat on the mat")});
  CHECK(score.hypothesis_length == 4);
  CHECK(score.reference_length == 6);
  CHECK(score.brevity_penalty == Approx(std::exp(-0.5)));
  CHECK(score.bleu == Approx(60.6531).epsilon(1e-5));
  // a longer hypothesis is not rewarded: BP stays 1 and precision pays instead
  CHECK(corpus_bleu(Corpus{words("the cat sat on the mat today")}, Corpus{words("the cat sat on the mat")})
            .brevity_penalty == 1.0);
}

TEST_CASE("bleu clips repeated n-grams") {
  const BleuScore score = corpus_bleu(Corpus{words("the the the the")}, Corpus{words("the cat")});
  CHECK(score.precisions[0] == 0.25);
  CHECK(score.bleu == 0.0);
  CHECK(corpus_bleu(Corpus{{}}, Corpus{words("a b")}).bleu == 0.0);  // empty hypothesis
}

TEST_CASE("bleu and exact match on token ids agree with strings") {
  const std::vector<std::vector<int64_t>> hyp = {{4, 5, 6, 7, 4, 8}, {9, 10}};
  const std::vector<std::vector<int64_t>> ref = {{4, 5, 6, 7, 11, 8}, {9, 10}};
  const Corpus hyp_s = {words("the cat sat on the mat"), words("x y")};
  const Corpus ref_s = {words("the cat sat on a mat"), words("x y")};
  CHECK(corpus_bleu(hyp, ref).bleu == Approx(corpus_bleu(hyp_s, ref_s).bleu));
  CHECK(exact_match_rate(hyp, ref) == 0.5);
  CHECK(exact_match_rate(hyp_s, ref_s) == 0.5);
}

TEST_CASE("bleu rejects mismatched or empty corpora") {
  CHECK_THROWS_MSG(corpus_bleu(Corpus{words("a")}, Corpus{}), ValueError, "1 hypotheses but 0 references");
  CHECK_THROWS_MSG(corpus_bleu(Corpus{}, Corpus{}), ValueError, "empty corpus");
  CHECK_THROWS_MSG(exact_match_rate(Corpus{}, Corpus{words("a")}), ValueError, "exact_match_rate");
}
