#include "transformer/data/batch_plan.h"

#include <algorithm>
#include <numeric>

namespace gradformer {

void shuffle_indices(std::vector<int64_t>& indices, Generator& gen) {
  for (size_t i = indices.size(); i > 1; --i) {
    const auto j = static_cast<size_t>(gen.integer(0, static_cast<int64_t>(i)));
    std::swap(indices[i - 1], indices[j]);
  }
}

Batching parse_batching(const std::string& name) {
  if (name == "random") return Batching::Random;
  if (name == "length") return Batching::Length;
  throw ValueError(message("batching: '", name, "' is neither random nor length"));
}

std::string batching_name(Batching batching) { return batching == Batching::Random ? "random" : "length"; }

namespace {

// Sentences by length: source first, then target.
bool shorter(const EncodedPair& x, const EncodedPair& y) {
  return std::pair(x.source.size(), x.target.size()) < std::pair(y.source.size(), y.target.size());
}

// Lengths as the batch will hold them: source + </s>, target + <s> (or + </s>).
int64_t padded_length(const EncodedPair& pair) {
  return static_cast<int64_t>(std::max(pair.source.size(), pair.target.size())) + 1;
}

// Cuts one length-sorted run of sentences into batches that respect both limits.
void cut_into_batches(const std::vector<EncodedPair>& pairs, const std::vector<int64_t>& sorted,
                      const BatchingOptions& options, std::vector<std::vector<int64_t>>& batches) {
  std::vector<int64_t> current;
  int64_t longest = 0;
  for (int64_t index : sorted) {
    const int64_t length = padded_length(pairs[static_cast<size_t>(index)]);
    const int64_t new_longest = std::max(longest, length);
    const auto new_count = static_cast<int64_t>(current.size()) + 1;
    const bool over_tokens = options.max_tokens > 0 && new_count * new_longest > options.max_tokens;
    const bool over_sentences = options.max_sentences > 0 && new_count > options.max_sentences;
    if (!current.empty() && (over_tokens || over_sentences)) {
      batches.push_back(std::move(current));
      current.clear();
      longest = 0;
    }
    current.push_back(index);
    longest = std::max(longest, length);
  }
  if (!current.empty()) batches.push_back(std::move(current));
}

}  // namespace

std::vector<std::vector<int64_t>> plan_batches(const std::vector<EncodedPair>& pairs, const BatchingOptions& options,
                                               Generator* gen) {
  if (options.max_tokens < 0 || options.max_sentences < 0 || (options.max_tokens == 0 && options.max_sentences == 0))
    throw ValueError(message("plan_batches: need max_tokens > 0 or max_sentences > 0 (neither negative), got ",
                             options.max_tokens, " and ", options.max_sentences));
  if (options.pool_size < 1)
    throw ValueError(message("plan_batches: pool_size must be positive, got ", options.pool_size));

  std::vector<int64_t> order(pairs.size());
  std::iota(order.begin(), order.end(), int64_t{0});
  if (gen) shuffle_indices(order, *gen);
  const auto by_length = [&](int64_t a, int64_t b) {
    return shorter(pairs[static_cast<size_t>(a)], pairs[static_cast<size_t>(b)]);
  };
  std::vector<std::vector<int64_t>> batches;
  if (gen && options.batching == Batching::Random) {
    cut_into_batches(pairs, order, options, batches);
    return batches;
  }
  const size_t pool = gen ? static_cast<size_t>(options.pool_size) : std::max<size_t>(order.size(), 1);

  for (size_t start = 0; start < order.size(); start += pool) {
    std::vector<int64_t> run(order.begin() + static_cast<std::ptrdiff_t>(start),
                             order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), start + pool)));
    std::stable_sort(run.begin(), run.end(), by_length);
    cut_into_batches(pairs, run, options, batches);
  }
  if (gen) {
    std::vector<int64_t> batch_order(batches.size());
    std::iota(batch_order.begin(), batch_order.end(), int64_t{0});
    shuffle_indices(batch_order, *gen);
    std::vector<std::vector<int64_t>> shuffled;
    shuffled.reserve(batches.size());
    for (int64_t b : batch_order) shuffled.push_back(std::move(batches[static_cast<size_t>(b)]));
    batches = std::move(shuffled);
  }
  return batches;
}

std::vector<std::vector<int64_t>> split_by_length(const std::vector<EncodedPair>& pairs,
                                                  const std::vector<int64_t>& batch, int64_t pieces) {
  if (pieces < 1) throw ValueError(message("split_by_length: pieces must be at least 1, got ", pieces));
  std::vector<int64_t> sorted = batch;
  std::stable_sort(sorted.begin(), sorted.end(), [&](int64_t a, int64_t b) {
    return shorter(pairs[static_cast<size_t>(a)], pairs[static_cast<size_t>(b)]);
  });
  const auto n = static_cast<int64_t>(sorted.size()), count = std::min(pieces, n);
  std::vector<std::vector<int64_t>> split;
  for (int64_t p = 0; p < count; ++p)
    split.emplace_back(sorted.begin() + p * n / count, sorted.begin() + (p + 1) * n / count);
  return split;
}

}  // namespace gradformer
