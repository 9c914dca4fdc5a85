// Checks exercises::corpus_bleu (tutorials/exercises/14_corpus_bleu.cpp, or the reference solution)
// against the chapter's BLEU worked by hand and the library's corpus_bleu (transformer/evaluate/bleu.h):
// clipping, the brevity penalty, a zero precision, and a corpus of toy sentences with mistakes put
// in. Prints what it found; exits 1 if a check fails or the file is still the stub.
#include <array>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "exercises.h"
#include "transformer/data/toy_corpus.h"

using namespace gradformer;

namespace {

using Corpus = std::vector<std::vector<std::string>>;

int failed = 0;

std::vector<std::string> words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string word; in >> word;) out.push_back(word);
  return out;
}

// "" if the two scores agree in every field (the real ones within 1e-9), else the first that differs.
std::string difference(const BleuScore& mine, const BleuScore& expected) {
  auto differs = [](double a, double b) { return !(std::abs(a - b) <= 1e-9); };
  auto both = [](const std::string& what, auto a, auto b) {
    std::ostringstream out;
    out.precision(10);
    out << what << " is " << a << ", expected " << b;
    return out.str();
  };
  for (size_t n = 0; n < 4; ++n) {
    const std::string gram = std::to_string(n + 1) + "-gram ";
    if (mine.matches[n] != expected.matches[n]) return both(gram + "matches", mine.matches[n], expected.matches[n]);
    if (mine.totals[n] != expected.totals[n]) return both(gram + "totals", mine.totals[n], expected.totals[n]);
    if (differs(mine.precisions[n], expected.precisions[n]))
      return both("p_" + std::to_string(n + 1), mine.precisions[n], expected.precisions[n]);
  }
  if (mine.hypothesis_length != expected.hypothesis_length)
    return both("c", mine.hypothesis_length, expected.hypothesis_length);
  if (mine.reference_length != expected.reference_length)
    return both("r", mine.reference_length, expected.reference_length);
  if (differs(mine.brevity_penalty, expected.brevity_penalty))
    return both("the brevity penalty", mine.brevity_penalty, expected.brevity_penalty);
  if (differs(mine.bleu, expected.bleu)) return both("BLEU", mine.bleu, expected.bleu);
  return "";
}

void check(const std::string& what, const BleuScore& mine, const BleuScore& expected) {
  const std::string differs = difference(mine, expected);
  std::printf("%-50s: %s\n", what.c_str(), differs.empty() ? "yes" : ("NO, " + differs).c_str());
  if (!differs.empty()) ++failed;
}

// A score from its counts, by the formulas (the chapter's by-hand computation).
BleuScore by_hand(std::array<int64_t, 4> matches, std::array<int64_t, 4> totals, int64_t c, int64_t r) {
  BleuScore s{.matches = matches, .totals = totals, .hypothesis_length = c, .reference_length = r};
  double product = 1;
  for (size_t n = 0; n < 4; ++n) {
    s.precisions[n] = static_cast<double>(matches[n]) / static_cast<double>(totals[n]);
    product *= s.precisions[n];
  }
  s.brevity_penalty = c > r ? 1.0 : std::exp(1 - static_cast<double>(r) / static_cast<double>(c));
  s.bleu = 100 * s.brevity_penalty * std::pow(product, 0.25);
  return s;
}

// The toy corpus's English sentences, each hypothesis a reference with a mistake or two put in.
void toy_corpus(Corpus& hypotheses, Corpus& references) {
  Generator gen(13);
  for (int i = 0; i < 60; ++i) {
    std::vector<std::string> reference = sample_toy_pair(gen).target, hypothesis = reference;
    const auto at = [&] {
      return static_cast<std::ptrdiff_t>(gen.integer(0, static_cast<int64_t>(hypothesis.size())));
    };
    switch (i % 6) {
      case 0:
        break;  // right
      case 1:
        hypothesis.erase(hypothesis.begin() + at());
        break;  // a word left out
      case 2:
        hypothesis.insert(hypothesis.begin() + at(), "the");
        break;  // one too many
      case 3:
        hypothesis[static_cast<size_t>(at())] = "apple";
        break;  // a wrong word
      case 4:
        hypothesis.resize(2);
        break;  // too short for a 4-gram
      case 5:
        hypothesis.insert(hypothesis.end(), reference.begin(), reference.end());
        break;  // said twice
    }
    hypotheses.push_back(hypothesis), references.push_back(reference);
  }
}

}  // namespace

static int checks() {
  const std::vector<std::string> hypothesis1 = words("the black cat does not eat the apple ."),
                                 reference1 = words("the black cat does not eat any apples ."),
                                 hypothesis2 = words("the black cat ."), reference2 = words("the black cat sleeps .");
  // The chapter's sentence by hand: 7/9, 5/8, 4/7, 3/6, both 9 tokens long.
  check("the chapter's sentence, by hand (61.05)", exercises::corpus_bleu({hypothesis1}, {reference1}),
        by_hand({7, 5, 4, 3}, {9, 8, 7, 6}, 9, 9));
  // With the short second sentence: the counts add up before the division, and c < r.
  const Corpus hypotheses{hypothesis1, hypothesis2}, references{reference1, reference2};
  check("the chapter's two sentences, by hand (55.41)", exercises::corpus_bleu(hypotheses, references),
        by_hand({11, 7, 5, 3}, {13, 11, 9, 7}, 13, 14));
  // Clipping: "the" four times earns one match against a reference that holds it once.
  const Corpus the4{words("the the the the")}, the_cat{words("the cat sat")};
  check("clipping: 'the the the the' against 'the cat sat'", exercises::corpus_bleu(the4, the_cat),
        corpus_bleu(the4, the_cat));
  // The second sentence alone: its only 4-gram misses, so BLEU is 0 whatever the other precisions.
  const Corpus second{hypothesis2}, second_reference{reference2};
  check("a precision of 0 makes BLEU 0", exercises::corpus_bleu(second, second_reference),
        corpus_bleu(second, second_reference));
  Corpus toy_hypotheses, toy_references;
  toy_corpus(toy_hypotheses, toy_references);
  check("60 toy sentences with mistakes: the library's", exercises::corpus_bleu(toy_hypotheses, toy_references),
        corpus_bleu(toy_hypotheses, toy_references));
  std::printf(failed == 0 ? "corpus BLEU: all checks pass\n" : "corpus BLEU: %d check(s) FAILED\n", failed);
  return failed;
}

int main() { return exercises::run_checks("14_corpus_bleu.cpp", 13, checks); }
