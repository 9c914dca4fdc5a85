// Generating text with a decoder-only model: at each step the model gives a distribution over the
// next token, reshaped by three knobs, and one token is drawn from it.
//
//   temperature T:  p_i = exp(z_i / T) / sum_j exp(z_j / T)       (T -> 0: greedy, the argmax)
//   top-k (Fan et al., 2018): keep the k most likely tokens, renormalise.
//   top-p (Holtzman et al., 2020): "we select the highest probability tokens whose cumulative
//     probability mass exceeds the pre-chosen threshold p" — the smallest such set, renormalised.
//
// Generation runs incrementally: a key/value cache holds every earlier position's keys and values
// (DecoderOnly::forward_step), so each new token costs one position's work.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "tensor/random.h"
#include "tensor/tensor.h"
#include "transformer/model/decoder_only.h"

namespace gradformer {

struct SamplingOptions {
  int64_t max_tokens = 64;              // generated at most, </s> included
  double temperature = 1;               // 0: greedy
  int64_t top_k = 0;                    // 0: all tokens
  double top_p = 1;                     // 1: all tokens
  int64_t eos = 2;                      // stops generation (Vocab::eos); -1: never
  std::vector<int64_t> also_stop = {};  // more ids that stop it as eos does (a hub model's several end tokens)
  bool use_cache = true;                // false: recompute the whole sequence at every step (for comparison)
  /// Ids never drawn, whatever their scores: tokens the model was never trained to produce (<pad>,
  /// which no loss counts, and <s>) or that are not text where text is printed (every special).
  std::vector<int64_t> never = {};
  /// Whether `id` ends the generation: eos or one of also_stop.
  bool stops(int64_t id) const {
    return id == eos || std::find(also_stop.begin(), also_stop.end(), id) != also_stop.end();
  }
  /// ValueError naming the field: max_tokens < 1, temperature < 0, top_k < 0, top_p outside (0, 1].
  void validate() const;
};

/// logits [V] -> the distribution a token is drawn from, after temperature, top-k and top-p
/// (probabilities in double, zero outside the kept set and for the ids `never` names; one-hot on the
/// argmax of the others when temperature is 0). ValueError for an id of `never` outside [0, V), or
/// for `never` naming every id.
std::vector<double> next_token_distribution(const Tensor& logits, const SamplingOptions& options);

/// Draws an index from `probabilities` with one uniform number of `gen` (inverse CDF).
int64_t sample_index(const std::vector<double>& probabilities, Generator& gen);

/// sample_index(next_token_distribution(logits, options), gen), the same token for the same gen
/// state, without ranking the tokens when top-k and top-p are off (what generate draws with).
int64_t sample_next_token(const Tensor& logits, const SamplingOptions& options, Generator& gen);

/// prompt (ids, at least one: usually <s> first) -> the generated ids after it, ending in eos if it
/// was generated. In eval mode without a graph (the model's mode is restored). The same gen state
/// gives the same tokens; use_cache does not change them. ValueError for an empty prompt, a
/// ShapeError if prompt + max_tokens exceeds the model's max_len. on_token, if given, is called with
/// each token as soon as it is drawn (to print text as it comes).
std::vector<int64_t> generate(DecoderOnly& model, const std::vector<int64_t>& prompt, const SamplingOptions& options,
                              Generator& gen, const std::function<void(int64_t)>& on_token = {});

/// As generate, but on top of a cache that already holds earlier tokens (a conversation's turns):
/// `fresh` (at least one id) is read after them, then tokens are drawn until a stop or
/// options.max_tokens. Afterwards the cache holds every id read; the last drawn token is returned
/// but not read (the next call reads it first, in its `fresh`). ShapeError when the cache, `fresh`
/// and max_tokens - 1 more would exceed max_len.
std::vector<int64_t> generate_after(DecoderOnly& model, DecoderOnlyCache& cache, const std::vector<int64_t>& fresh,
                                    const SamplingOptions& options, Generator& gen,
                                    const std::function<void(int64_t)>& on_token = {});

/// As generate, but past the model's max_len: a window of at most max_len tokens is read at once,
/// and when a window is full its last half (max_len / 2 tokens, at least 1) becomes the next
/// window's prompt, whose keys and values are computed afresh. options.max_tokens counts the new
/// tokens; options.eos, if generated, ends them (and is the last one returned). With on_token, the
/// tokens go to it alone and none is returned: a stream of any length keeps one window's ids, not
/// all it made. ValueError for an empty prompt, a ShapeError for a prompt of more than max_len tokens.
std::vector<int64_t> continue_sequence(DecoderOnly& model, const std::vector<int64_t>& prompt,
                                       const SamplingOptions& options, Generator& gen,
                                       const std::function<void(int64_t)>& on_token = {});

}  // namespace gradformer
