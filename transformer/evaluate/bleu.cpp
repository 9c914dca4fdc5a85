#include "transformer/evaluate/bleu.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace gradformer {
namespace {

template <class Token>
void check_corpus(const std::vector<std::vector<Token>>& hypotheses, const std::vector<std::vector<Token>>& references,
                  const char* op) {
  if (hypotheses.size() != references.size())
    throw ValueError(message(op, ": ", hypotheses.size(), " hypotheses but ", references.size(), " references"));
  if (hypotheses.empty()) throw ValueError(message(op, ": empty corpus"));
}

// Every n-gram of the sentence with how often it occurs.
template <class Token>
std::map<std::vector<Token>, int64_t> count_ngrams(const std::vector<Token>& sentence, size_t n) {
  std::map<std::vector<Token>, int64_t> counts;
  for (size_t i = 0; i + n <= sentence.size(); ++i)
    ++counts[std::vector<Token>(sentence.begin() + static_cast<std::ptrdiff_t>(i),
                                sentence.begin() + static_cast<std::ptrdiff_t>(i + n))];
  return counts;
}

template <class Token>
BleuScore bleu(const std::vector<std::vector<Token>>& hypotheses, const std::vector<std::vector<Token>>& references) {
  check_corpus(hypotheses, references, "corpus_bleu");
  BleuScore score;
  for (size_t s = 0; s < hypotheses.size(); ++s) {
    const auto& hypothesis = hypotheses[s];
    const auto& reference = references[s];
    score.hypothesis_length += static_cast<int64_t>(hypothesis.size());
    score.reference_length += static_cast<int64_t>(reference.size());
    for (size_t n = 1; n <= 4; ++n) {
      const auto reference_counts = count_ngrams(reference, n);
      for (const auto& [ngram, count] : count_ngrams(hypothesis, n)) {
        // "Clipped": an n-gram matches at most as often as the reference holds it, so
        // "the the the the" earns one match against "the cat", not four.
        const auto found = reference_counts.find(ngram);
        const int64_t in_reference = found == reference_counts.end() ? 0 : found->second;
        score.matches[n - 1] += std::min(count, in_reference);
        score.totals[n - 1] += count;
      }
    }
  }
  double log_precision_sum = 0;
  bool any_zero = false;
  for (size_t n = 0; n < 4; ++n) {
    score.precisions[n] =
        score.totals[n] == 0 ? 0.0 : static_cast<double>(score.matches[n]) / static_cast<double>(score.totals[n]);
    if (score.matches[n] == 0)
      any_zero = true;
    else
      log_precision_sum += std::log(score.precisions[n]);
  }
  const auto c = static_cast<double>(score.hypothesis_length), r = static_cast<double>(score.reference_length);
  score.brevity_penalty = c == 0 ? 0.0 : c > r ? 1.0 : std::exp(1.0 - r / c);
  score.bleu = any_zero ? 0.0 : 100.0 * score.brevity_penalty * std::exp(log_precision_sum / 4.0);
  return score;
}

template <class Token>
double exact_match(const std::vector<std::vector<Token>>& hypotheses,
                   const std::vector<std::vector<Token>>& references) {
  check_corpus(hypotheses, references, "exact_match_rate");
  size_t equal = 0;
  for (size_t s = 0; s < hypotheses.size(); ++s) equal += hypotheses[s] == references[s] ? 1 : 0;
  return static_cast<double>(equal) / static_cast<double>(hypotheses.size());
}

}  // namespace

BleuScore corpus_bleu(const std::vector<std::vector<std::string>>& hypotheses,
                      const std::vector<std::vector<std::string>>& references) {
  return bleu(hypotheses, references);
}
BleuScore corpus_bleu(const std::vector<std::vector<int64_t>>& hypotheses,
                      const std::vector<std::vector<int64_t>>& references) {
  return bleu(hypotheses, references);
}
double exact_match_rate(const std::vector<std::vector<std::string>>& hypotheses,
                        const std::vector<std::vector<std::string>>& references) {
  return exact_match(hypotheses, references);
}
double exact_match_rate(const std::vector<std::vector<int64_t>>& hypotheses,
                        const std::vector<std::vector<int64_t>>& references) {
  return exact_match(hypotheses, references);
}

}  // namespace gradformer
