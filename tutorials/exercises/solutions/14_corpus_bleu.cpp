// Reference solution of tutorials/exercises/14_corpus_bleu.cpp: counts summed over the corpus, then
// the precisions, the brevity penalty and their geometric mean.
#include <algorithm>
#include <cmath>
#include <map>

#include "exercises.h"

namespace exercises {

using namespace gradformer;

namespace {

using Sentence = std::vector<std::string>;

std::map<Sentence, int64_t> count_ngrams(const Sentence& sentence, size_t n) {
  std::map<Sentence, int64_t> counts;
  for (size_t i = 0; i + n <= sentence.size(); ++i) ++counts[Sentence(sentence.begin() + i, sentence.begin() + i + n)];
  return counts;
}

}  // namespace

BleuScore corpus_bleu(const std::vector<Sentence>& hypotheses, const std::vector<Sentence>& references) {
  BleuScore score;
  for (size_t s = 0; s < hypotheses.size(); ++s) {
    score.hypothesis_length += static_cast<int64_t>(hypotheses[s].size());
    score.reference_length += static_cast<int64_t>(references[s].size());
    for (size_t n = 1; n <= 4; ++n) {
      const std::map<Sentence, int64_t> in_reference = count_ngrams(references[s], n);
      for (const auto& [ngram, count] : count_ngrams(hypotheses[s], n)) {
        const auto found = in_reference.find(ngram);
        score.matches[n - 1] += std::min(count, found == in_reference.end() ? int64_t{0} : found->second);
        score.totals[n - 1] += count;
      }
    }
  }
  double log_sum = 0;
  bool any_zero = false;
  for (size_t n = 0; n < 4; ++n) {
    if (score.totals[n] > 0)
      score.precisions[n] = static_cast<double>(score.matches[n]) / static_cast<double>(score.totals[n]);
    if (score.matches[n] == 0)
      any_zero = true;
    else
      log_sum += std::log(score.precisions[n]);
  }
  const auto c = static_cast<double>(score.hypothesis_length), r = static_cast<double>(score.reference_length);
  score.brevity_penalty = c == 0 ? 0.0 : c > r ? 1.0 : std::exp(1 - r / c);
  score.bleu = any_zero ? 0.0 : 100 * score.brevity_penalty * std::exp(log_sum / 4);
  return score;
}

}  // namespace exercises
