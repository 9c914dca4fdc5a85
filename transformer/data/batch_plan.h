// Which sentences go into which batch, and how a batch is padded.
//
// Two plans for an epoch (the same seed gives the same batches):
//   random  shuffle, cut into batches by a token budget and/or a sentence count: every batch is a
//           random sample of the corpus, so its gradient is an unbiased, low-variance estimate.
//   length  shuffle, cut the corpus into pools, sort each pool by length, cut the pool into batches,
//           shuffle the order of the batches (the Annotated Transformer's and fairseq's recipe).
//           Little padding, but each batch holds sentences of one length: where length says what
//           a sentence is (chapter 12's length-kinds corpus), every batch is one kind and learning slows.
// And one way to pad a batch with little waste without changing what it learns: split_by_length
// cuts a batch, sorted by length, into pieces padded separately; the trainer adds up the pieces'
// gradients (weighted by their target tokens) into one step, the gradient of the whole batch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tensor/random.h"
#include "transformer/data/batch.h"

namespace gradformer {

enum class Batching { Random, Length };

/// "random" or "length"; ValueError naming the choices for anything else.
Batching parse_batching(const std::string& name);
std::string batching_name(Batching batching);

struct BatchingOptions {
  /// Budget of padded tokens per batch: sentences * max(longest source, longest target), both
  /// counted with their added </s> or <s>. 0: no token budget.
  int64_t max_tokens = 0;
  /// At most this many sentences per batch. 0: no cap. At least one of the two limits is needed.
  int64_t max_sentences = 0;
  /// Sentences sorted together: longer pools waste less padding, shorter ones mix more.
  int64_t pool_size = 100 * 64;
  Batching batching = Batching::Random;
  /// Each batch is padded as this many length-sorted pieces (split_by_length) whose gradients the
  /// trainer adds up: what the batch learns is unchanged, the padding shrinks. 1: one rectangle.
  int64_t pieces = 1;
};

/// The batches of one epoch, as lists of indices into `pairs`. With a generator: planned as
/// options.batching says (training). Without (nullptr): the whole corpus sorted by length, stably,
/// in that order (evaluation, reproducible without a seed). A sentence alone over the token budget
/// gets a batch of its own; no sentence is ever dropped.
std::vector<std::vector<int64_t>> plan_batches(const std::vector<EncodedPair>& pairs, const BatchingOptions& options,
                                               Generator* gen);

/// One batch cut into `pieces` runs of consecutive lengths (sorted by source then target length,
/// stably; sizes differ by at most one; fewer pieces if the batch has fewer sentences). ValueError
/// if pieces < 1.
std::vector<std::vector<int64_t>> split_by_length(const std::vector<EncodedPair>& pairs,
                                                  const std::vector<int64_t>& batch, int64_t pieces);

/// Fisher-Yates with our generator, so every standard library shuffles alike.
void shuffle_indices(std::vector<int64_t>& indices, Generator& gen);

}  // namespace gradformer
