// Which sentences go into which batch. Padding costs compute, so sentences of similar length
// share a batch: shuffle, cut the corpus into pools, sort each pool by length, cut the pool into
// batches by a token budget (or a sentence count), then shuffle the order of the batches — the
// Annotated Transformer's and fairseq's recipe. The same seed gives the same batches.
#pragma once

#include <cstdint>
#include <vector>

#include "tensor/random.h"
#include "transformer/data/batch.h"

namespace gradformer {

struct BatchingOptions {
  /// Budget of padded tokens per batch: sentences * max(longest source, longest target), both
  /// counted with their added </s> or <s>. 0: no token budget.
  int64_t max_tokens = 0;
  /// At most this many sentences per batch. 0: no cap. At least one of the two limits is needed.
  int64_t max_sentences = 0;
  /// Sentences sorted together: longer pools waste less padding, shorter ones mix more.
  int64_t pool_size = 100 * 64;
};

/// The batches of one epoch, as lists of indices into `pairs`. With a generator: shuffled, pooled
/// and with the batch order shuffled (training). Without (nullptr): the whole corpus sorted by
/// length, stably, in that order (evaluation, reproducible without a seed). A sentence alone over
/// the token budget gets a batch of its own; no sentence is ever dropped.
std::vector<std::vector<int64_t>> plan_batches(const std::vector<EncodedPair>& pairs, const BatchingOptions& options,
                                               Generator* gen);

/// Fisher-Yates with our generator, so every standard library shuffles alike.
void shuffle_indices(std::vector<int64_t>& indices, Generator& gen);

}  // namespace gradformer
