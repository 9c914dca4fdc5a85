// Fuzzes the corpus path of transformer/data: a TSV corpus (parse_tsv, the reader behind
// read_tsv, on the bytes as a stream), Vocab::build with fuzzed min_count and max_size, the
// vocabulary's text round trip, encode_pairs, plan_batches with fuzzed options, with and without a
// generator, and collate of every batch. Input layout: 7 option bytes (one more byte, or 8, when
// the first asks for a 64-bit value), then the TSV text.
// Invariants checked (abort if broken): every sentence is planned exactly once; no batch is
// empty; a batch holds more than one sentence only within both limits; without a generator the
// plan is sorted by length; collate's shapes and token count follow from the sentences.
#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "fuzz/fuzz.h"
#include "transformer/data/batch_plan.h"
#include "transformer/data/tsv.h"
#include "transformer/data/vocab.h"

namespace {

using namespace gradformer;

// Small signed values most of the time (where the limits bite), any 64-bit value sometimes.
int64_t option(fuzz::Input& in) {
  const uint8_t kind = in.byte();
  if (kind < 200) return static_cast<int64_t>(kind % 24) - 2;
  return static_cast<int64_t>(in.below(UINT64_MAX));
}

void check_plan(const std::vector<EncodedPair>& pairs, const std::vector<std::vector<int64_t>>& batches,
                const BatchingOptions& options, bool sorted) {
  std::vector<int> seen(pairs.size(), 0);
  for (const auto& batch : batches) {
    if (batch.empty()) fuzz::fail("plan_batches made an empty batch");
    int64_t longest = 0;
    for (const int64_t i : batch) {
      if (i < 0 || i >= static_cast<int64_t>(pairs.size())) fuzz::fail("plan_batches planned an index out of range");
      ++seen[static_cast<size_t>(i)];
      const auto& p = pairs[static_cast<size_t>(i)];
      longest = std::max<int64_t>(longest, static_cast<int64_t>(std::max(p.source.size(), p.target.size())) + 1);
    }
    const auto count = static_cast<int64_t>(batch.size());
    if (count > 1 && options.max_sentences > 0 && count > options.max_sentences)
      fuzz::fail("a batch holds more sentences than max_sentences");
    if (count > 1 && options.max_tokens > 0 && count * longest > options.max_tokens)
      fuzz::fail("a batch of several sentences is over the token budget");
  }
  for (size_t i = 0; i < seen.size(); ++i)
    if (seen[i] != 1)
      fuzz::fail("sentence " + std::to_string(i) + " was planned " + std::to_string(seen[i]) + " times, not once");
  if (sorted) {
    std::vector<int64_t> order;
    for (const auto& batch : batches) order.insert(order.end(), batch.begin(), batch.end());
    for (size_t k = 1; k < order.size(); ++k) {
      const auto &a = pairs[static_cast<size_t>(order[k - 1])], &b = pairs[static_cast<size_t>(order[k])];
      if (std::pair(b.source.size(), b.target.size()) < std::pair(a.source.size(), a.target.size()))
        fuzz::fail("the plan without a generator is not sorted by length");
    }
  }
}

void check_batch(const std::vector<EncodedPair>& pairs, const std::vector<int64_t>& indices, const Batch& batch) {
  size_t src_len = 0, tgt_len = 0;
  int64_t ntokens = 0;
  for (const int64_t i : indices) {
    const auto& p = pairs[static_cast<size_t>(i)];
    src_len = std::max(src_len, p.source.size() + 1);
    tgt_len = std::max(tgt_len, p.target.size() + 1);
    ntokens += static_cast<int64_t>(p.target.size()) + 1;
  }
  const auto B = static_cast<int64_t>(indices.size());
  if (!(batch.src.shape() == Shape{B, static_cast<int64_t>(src_len)}) ||
      !(batch.tgt_in.shape() == Shape{B, static_cast<int64_t>(tgt_len)}) ||
      !(batch.tgt_out.shape() == Shape{B, static_cast<int64_t>(tgt_len)}))
    fuzz::fail("collate: a batch's shapes do not follow from its sentences");
  // Every id is positive apart from <pad>, so the non-pad count of tgt_out is target + </s>.
  if (batch.ntokens != ntokens)
    fuzz::fail("collate: ntokens " + std::to_string(batch.ntokens) + ", expected " + std::to_string(ntokens));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::Input in(data, size);
  const int64_t read_max_tokens = option(in);
  const int64_t min_count = option(in), max_size = option(in);
  BatchingOptions options;
  options.max_tokens = option(in);
  options.max_sentences = option(in);
  options.pool_size = option(in);
  options.batching = in.byte() % 2 ? Batching::Length : Batching::Random;
  const uint64_t seed = in.byte();
  const std::string text = in.rest();

  fuzz::guarded([&] {
    std::istringstream stream(text);
    const std::vector<SentencePair> pairs = parse_tsv(stream, "fuzz.tsv", read_max_tokens);
    std::vector<std::vector<std::string>> sources, targets;
    for (const SentencePair& p : pairs) {
      if (p.source.empty() || p.target.empty()) fuzz::fail("parse_tsv returned a pair with an empty side");
      if (read_max_tokens > 0 && (static_cast<int64_t>(p.source.size()) > read_max_tokens ||
                                  static_cast<int64_t>(p.target.size()) > read_max_tokens))
        fuzz::fail("parse_tsv returned a side over max_tokens");
      sources.push_back(p.source), targets.push_back(p.target);
    }
    const Vocab source_vocab = Vocab::build(sources, min_count, max_size);
    const Vocab target_vocab = Vocab::build(targets, min_count, max_size);
    for (const Vocab* v : {&source_vocab, &target_vocab}) {
      if (max_size > 0 && v->size() > max_size) fuzz::fail("Vocab::build went over max_size");
      // A built vocabulary must be one a checkpoint can store and read back.
      try {
        if (!(Vocab::from_text(v->to_text()) == *v))
          fuzz::fail("a vocabulary changed in a to_text/from_text round trip");
      } catch (const Error& e) {
        fuzz::fail(std::string("a built vocabulary does not read back from its text: ") + e.what());
      }
    }
    const std::vector<EncodedPair> encoded = encode_pairs(pairs, source_vocab, target_vocab);
    for (const bool shuffled : {false, true}) {
      Generator gen(seed);
      const auto batches = plan_batches(encoded, options, shuffled ? &gen : nullptr);
      check_plan(encoded, batches, options, !shuffled);
      for (const auto& batch : batches) check_batch(encoded, batch, collate(encoded, batch));
    }
  });
  return 0;
}
