// Corpus BLEU-4 (Papineni et al., 2002, "BLEU: a Method for Automatic Evaluation of Machine
// Translation"), one reference per sentence, no smoothing:
//   p_n  = sum over sentences of n-gram matches clipped by the reference's counts
//          / sum over sentences of the hypothesis's n-gram count             (n = 1..4)
//   BP   = 1 if c > r, else exp(1 - r/c)     (c, r: total hypothesis and reference lengths)
//   BLEU = 100 * BP * exp(sum_n (1/4) log p_n)
// Any p_n of zero makes BLEU zero, as in the paper and sacreBLEU without smoothing. The counts are
// sums over the corpus before the division: corpus BLEU is not the mean of sentence BLEUs.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "tensor/support/error.h"

namespace gradformer {

struct BleuScore {
  double bleu = 0;                     // 0..100
  std::array<double, 4> precisions{};  // p_1..p_4, each 0..1
  std::array<int64_t, 4> matches{};    // clipped n-gram matches, summed over the corpus
  std::array<int64_t, 4> totals{};     // hypothesis n-grams, summed over the corpus
  double brevity_penalty = 0;          // 0..1
  int64_t hypothesis_length = 0;       // c
  int64_t reference_length = 0;        // r
};

/// hypotheses[i] is scored against references[i]. ValueError if the counts differ or are zero.
BleuScore corpus_bleu(const std::vector<std::vector<std::string>>& hypotheses,
                      const std::vector<std::vector<std::string>>& references);
/// The same on token ids (strip specials first: see strip_specials in vocab.h).
BleuScore corpus_bleu(const std::vector<std::vector<int64_t>>& hypotheses,
                      const std::vector<std::vector<int64_t>>& references);

/// Fraction of sentences (0..1) whose hypothesis equals its reference token for token.
double exact_match_rate(const std::vector<std::vector<std::string>>& hypotheses,
                        const std::vector<std::vector<std::string>>& references);
double exact_match_rate(const std::vector<std::vector<int64_t>>& hypotheses,
                        const std::vector<std::vector<int64_t>>& references);

}  // namespace gradformer
