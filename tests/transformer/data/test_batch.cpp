#include <algorithm>

#include "catch.h"
#include "transformer/data/batch_plan.h"

using namespace gradformer;

namespace {

std::vector<int64_t> ints(const Tensor& t) { return t.to_vector<int64_t>(); }

// Pairs whose source and target lengths are i % 13 + 1 and i % 7 + 1 tokens.
std::vector<EncodedPair> corpus(int64_t count) {
  std::vector<EncodedPair> pairs;
  for (int64_t i = 0; i < count; ++i)
    pairs.push_back({std::vector<int64_t>(static_cast<size_t>(i % 13 + 1), 4 + i % 5),
                     std::vector<int64_t>(static_cast<size_t>(i % 7 + 1), 4 + i % 3)});
  return pairs;
}

}  // namespace

TEST_CASE("collate pads a tiny batch as computed by hand") {
  const std::vector<EncodedPair> pairs = {{{5, 6, 7}, {8, 9}}, {{5}, {8, 9, 10}}};
  const Batch batch = collate(pairs, {0, 1});
  CHECK(batch.size() == 2);
  CHECK(batch.src.shape() == Shape{2, 4});
  CHECK(ints(batch.src) == std::vector<int64_t>{5, 6, 7, 2,  //
                                                5, 2, 0, 0});
  CHECK(ints(batch.tgt_in) == std::vector<int64_t>{1, 8, 9, 0,  //
                                                   1, 8, 9, 10});
  CHECK(ints(batch.tgt_out) == std::vector<int64_t>{8, 9, 2, 0,  //
                                                    8, 9, 10, 2});
  CHECK(batch.ntokens == 7);  // 8 9 </s> + 8 9 10 </s>
}

TEST_CASE("collate and encode_source without the source's </s> give the words only") {
  const std::vector<EncodedPair> pairs = {{{5, 6, 7}, {8, 9}}, {{5}, {8, 9, 10}}};
  const Batch batch = collate(pairs, {0, 1}, /*source_eos=*/false);
  CHECK(batch.src.shape() == Shape{2, 3});
  CHECK(ints(batch.src) == std::vector<int64_t>{5, 6, 7,  //
                                                5, 0, 0});
  // The target side is the same either way.
  CHECK(ints(batch.tgt_in) == ints(collate(pairs, {0, 1}).tgt_in));
  CHECK(ints(batch.tgt_out) == ints(collate(pairs, {0, 1}).tgt_out));
  CHECK(batch.ntokens == 7);

  const Vocab vocab = Vocab::build({{"le", "chat"}});  // chat 4, le 5 (equal counts: alphabetical)
  CHECK(encode_source(vocab, {"le", "chat", "noir"}) == std::vector<int64_t>{5, 4, 3, 2});
  CHECK(encode_source(vocab, {"le", "chat", "noir"}, /*source_eos=*/false) == std::vector<int64_t>{5, 4, 3});
}

TEST_CASE("collate and make_batch reject bad input") {
  const std::vector<EncodedPair> pairs = {{{5}, {6}}, {{}, {6}}};
  CHECK_THROWS_MSG(collate(pairs, {}), ValueError, "no sentences");
  CHECK_THROWS_MSG(collate(pairs, {2}), IndexError, "index 2 is outside [0, 2)");
  CHECK_THROWS_MSG(collate(pairs, {1}), DataError, "pair 1 has an empty side");
  const Tensor ids = zeros({2, 3}, DType::Int64);
  CHECK_THROWS_MSG(make_batch(ids, ids, zeros({2, 4}, DType::Int64)), ShapeError, "make_batch");
  CHECK_THROWS_MSG(make_batch(ids, ids, zeros({2, 3})), DTypeError, "int64");
}

TEST_CASE("plan_batches covers every sentence once and respects both limits") {
  const auto pairs = corpus(500);
  Generator gen(7);
  const auto batches = plan_batches(pairs, {.max_tokens = 120, .max_sentences = 16, .pool_size = 100}, &gen);
  std::vector<int64_t> seen;
  for (const auto& batch : batches) {
    REQUIRE(!batch.empty());
    CHECK(batch.size() <= 16);
    size_t longest = 0;
    for (int64_t i : batch) {
      const auto& p = pairs[static_cast<size_t>(i)];
      longest = std::max({longest, p.source.size() + 1, p.target.size() + 1});
    }
    CHECK(batch.size() * longest <= 120);
    seen.insert(seen.end(), batch.begin(), batch.end());
  }
  std::sort(seen.begin(), seen.end());
  std::vector<int64_t> all(500);
  for (int64_t i = 0; i < 500; ++i) all[static_cast<size_t>(i)] = i;
  CHECK(seen == all);
}

TEST_CASE("plan_batches groups similar lengths so padding is small") {
  const auto pairs = corpus(2000);
  Generator gen(1);
  const auto batches = plan_batches(pairs, {.max_sentences = 32, .pool_size = 2000}, &gen);
  int64_t real = 0, padded = 0;
  for (const auto& indices : batches) {
    const Batch batch = collate(pairs, indices);
    real += static_cast<int64_t>(sum(ne(batch.src, scalar(0.0, DType::Int64)).to(DType::Int64)).item());
    padded += batch.src.numel();
  }
  // Sorted by source length within one pool, a batch of 32 spans at most two lengths.
  CHECK(static_cast<double>(real) / static_cast<double>(padded) > 0.95);
}

TEST_CASE("plan_batches is deterministic for a seed and differs across seeds") {
  const auto pairs = corpus(300);
  const BatchingOptions options{.max_tokens = 64, .pool_size = 50};
  Generator a(3), b(3), c(4);
  const auto first = plan_batches(pairs, options, &a);
  CHECK(plan_batches(pairs, options, &b) == first);
  CHECK(plan_batches(pairs, options, &c) != first);
  CHECK(plan_batches(pairs, options, &a) != first);  // the next epoch is shuffled anew
}

TEST_CASE("plan_batches without a generator sorts the whole corpus by length") {
  const std::vector<EncodedPair> pairs = {{{1, 1, 1}, {1}}, {{1}, {1}}, {{1, 1}, {1}}, {{1}, {1, 1}}};
  const auto batches = plan_batches(pairs, {.max_sentences = 3}, nullptr);
  CHECK(batches == std::vector<std::vector<int64_t>>{{1, 3, 2}, {0}});
  CHECK_THROWS_MSG(plan_batches(pairs, {}, nullptr), ValueError, "max_tokens > 0 or max_sentences > 0");
  CHECK_THROWS_MSG(plan_batches(pairs, {.max_sentences = 1, .pool_size = 0}, nullptr), ValueError, "pool_size");
}

TEST_CASE("plan_batches gives a sentence over the token budget its own batch") {
  const std::vector<EncodedPair> pairs = {{{1, 1, 1, 1, 1, 1, 1, 1, 1}, {1}}, {{1}, {1}}, {{1}, {1}}};
  const auto batches = plan_batches(pairs, {.max_tokens = 4}, nullptr);
  CHECK(batches == std::vector<std::vector<int64_t>>{{1, 2}, {0}});
}

TEST_CASE("encode_pairs then collate turns a text corpus into a batch") {
  const std::vector<SentencePair> text = {{{"le", "chat"}, {"the", "cat"}}, {{"un", "zèbre"}, {"a", "zebra"}}};
  const Vocab fr = Vocab::build({{"le", "chat"}, {"le"}}), en = Vocab::build({{"the", "cat"}, {"the"}});
  const auto pairs = encode_pairs(text, fr, en);
  REQUIRE(pairs.size() == 2);
  CHECK(pairs[0].source == std::vector<int64_t>{4, 5});
  CHECK(pairs[1].source == std::vector<int64_t>{Vocab::unk, Vocab::unk});
  CHECK(pairs[1].target == std::vector<int64_t>{Vocab::unk, Vocab::unk});
  CHECK(ints(collate(pairs, {0, 1}).tgt_out) == std::vector<int64_t>{4, 5, 2, 3, 3, 2});
}

// Found by fuzzing (tests/fuzz/fuzz_data, seed corpus/data/sentences_cap.tsv): a target "</s>
// <pad>" collated to tgt_out {2, 0, 2}, so ntokens counted 2 of its 3 tokens and the loss skipped
// the word "<pad>". Words that spell specials are <unk> now, and every word counts.
TEST_CASE("collate counts a target word that spells a special as a token") {
  const std::vector<SentencePair> text = {{{"<unk>", "<s>"}, {"</s>", "<pad>"}}};
  const Vocab vocab = Vocab::build({{"<unk>", "<s>", "</s>", "<pad>"}});
  const Batch batch = collate(encode_pairs(text, vocab, vocab), {0});
  CHECK(ints(batch.src) == std::vector<int64_t>{3, 3, 2});
  CHECK(ints(batch.tgt_in) == std::vector<int64_t>{1, 3, 3});
  CHECK(ints(batch.tgt_out) == std::vector<int64_t>{3, 3, 2});
  CHECK(batch.ntokens == 3);
}
