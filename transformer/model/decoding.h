// Turning a trained model into output sequences.
//
//   Greedy: at each step take the single most likely next token.
//   Beam search (paper, section 6.1: "beam search with a beam size of 4 and length penalty
//   alpha = 0.6"): keep the `beam` most likely prefixes, extend each by every token, keep the best
//   `beam` again; a finished hypothesis (ending in </s>) is ranked by
//       score = log P(y) / lp(y),   lp(y) = ((5 + |y|) / 6)^alpha      (Wu et al., 2016)
//   so longer sentences are not punished merely for having more factors below one.
//
// Both decode incrementally by default: the decoder keeps each layer's keys and values of the
// positions already decoded (DecoderCache), so step t costs one position's work, not t positions'.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "transformer/model/encoder_decoder.h"
#include "transformer/model/masks.h"

namespace gradformer {

struct Hypothesis {
  std::vector<int64_t> tokens;  // generated tokens, without the leading bos, with the final eos if any
  double log_prob = 0;          // sum of the log-probabilities of the tokens
  double score = 0;             // what beam search ranked by (log_prob for greedy)
};

/// What beam search did with one extension it weighed: kept it alive, finished it (it ended in
/// </s>, or reached max_len and made the list of finished ones), or pruned it (the beam was full).
enum class BeamFate { Alive, Finished, Pruned };
struct WeighedExtension {
  Hypothesis hypothesis;  // the extended prefix, its log P, and its score (log P over the length penalty)
  BeamFate fate = BeamFate::Alive;
};

struct DecodeOptions {
  // The defaults are the data layer's ids of <s> and </s> (Vocab::bos, Vocab::eos; the training
  // layer checks that they agree, since the model knows nothing of vocabularies).
  static constexpr int64_t default_bos = 1, default_eos = 2;
  int64_t max_len = 64;       // tokens generated at most, </s> included
  int64_t bos = default_bos;  // the first decoder input
  int64_t eos = default_eos;  // stops a hypothesis; -1: never stop early (the copy task)
  bool use_cache = true;      // false: recompute the whole prefix at each step (for comparison)
  /// Beam search calls it after every step with the live hypotheses, best first (score: log P
  /// over the length penalty), so a tracer can show the beams; empty: nothing is called.
  std::function<void(int64_t step, const std::vector<Hypothesis>& alive)> on_step = nullptr;
  /// Beam search calls it after every step with each extension it weighed there (the 2 x beam
  /// most probable, best first) and its fate, so a picture can show the search's tree; empty: nothing.
  std::function<void(int64_t step, const std::vector<WeighedExtension>& weighed)> on_weigh = nullptr;
};

/// src: [B, S] int64, src_mask: [B, 1, S] bool -> one hypothesis per sentence. Runs without
/// recording a graph and in eval mode (dropout off; the model's mode is restored afterwards).
std::vector<Hypothesis> greedy_decode(EncoderDecoder& model, const Tensor& src, const Tensor& src_mask,
                                      const DecodeOptions& options = {});

/// One extension of a live beam hypothesis: hypothesis `row` followed by `token`, and the
/// log-probability of the longer prefix.
struct BeamCandidate {
  int64_t row = 0, token = 0;
  double log_prob = 0;
};

/// The heart of a beam-search step. Of every extension (row, token) of the live hypotheses, the
/// `count` most probable, best first:
///   log P(prefix_row, token) = alive_log_probs[row] + log_probs[row, token]
/// alive_log_probs: [rows], log_probs: [rows, V] float64. Extensions of log-probability -inf (a row
/// not alive) are left out, so fewer than `count` may come back; of equal ones, the smaller
/// row * V + token comes first. ShapeError unless the sizes agree.
std::vector<BeamCandidate> best_extensions(const std::vector<double>& alive_log_probs, const Tensor& log_probs,
                                           int64_t count);

/// One sentence, src: [1, S]. ValueError unless beam >= 1 and alpha >= 0.
Hypothesis beam_search(EncoderDecoder& model, const Tensor& src, const Tensor& src_mask, int64_t beam,
                       double alpha = 0.6, const DecodeOptions& options = {});

}  // namespace gradformer
