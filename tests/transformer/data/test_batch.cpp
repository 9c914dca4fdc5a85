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

// Sentences of every length from 1 to 8 tokens, 64 of each, target as long as source: 512 pairs.
std::vector<EncodedPair> eight_lengths() {
  std::vector<EncodedPair> pairs;
  for (int64_t copy = 0; copy < 64; ++copy)
    for (size_t length = 1; length <= 8; ++length)
      pairs.push_back({std::vector<int64_t>(length, 5), std::vector<int64_t>(length, 6)});
  return pairs;
}

// Token slots and real tokens of the padded rectangles of `pieces` (source side: source + </s>).
std::pair<int64_t, int64_t> slots_and_real(const std::vector<EncodedPair>& pairs,
                                           const std::vector<std::vector<int64_t>>& pieces) {
  int64_t slots = 0, real = 0;
  for (const auto& piece : pieces) {
    const Batch batch = collate(pairs, piece);
    slots += batch.src.numel();
    real += static_cast<int64_t>(sum(ne(batch.src, scalar(0.0, DType::Int64)).to(DType::Int64)).item());
  }
  return {slots, real};
}

TEST_CASE("plan_batches, random and by length, covers every sentence once an epoch and respects both limits") {
  const auto pairs = corpus(500);
  for (const Batching batching : {Batching::Random, Batching::Length}) {
    INFO(batching_name(batching));
    Generator gen(7);
    for (int epoch = 0; epoch < 3; ++epoch) {
      const auto batches =
          plan_batches(pairs, {.max_tokens = 120, .max_sentences = 16, .pool_size = 100, .batching = batching}, &gen);
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
  }
}

TEST_CASE("plan_batches groups similar lengths so padding is small") {
  const auto pairs = corpus(2000);
  Generator gen(1);
  const auto batches =
      plan_batches(pairs, {.max_sentences = 32, .pool_size = 2000, .batching = Batching::Length}, &gen);
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
  for (const Batching batching : {Batching::Random, Batching::Length}) {
    INFO(batching_name(batching));
    const BatchingOptions options{.max_tokens = 64, .pool_size = 50, .batching = batching};
    Generator a(3), b(3), c(4);
    const auto first = plan_batches(pairs, options, &a);
    CHECK(plan_batches(pairs, options, &b) == first);
    CHECK(plan_batches(pairs, options, &c) != first);
    CHECK(plan_batches(pairs, options, &a) != first);  // the next epoch is shuffled anew
  }
  CHECK(parse_batching("random") == Batching::Random);
  CHECK(parse_batching(batching_name(Batching::Length)) == Batching::Length);
  CHECK_THROWS_MSG(parse_batching("sorted"), ValueError, "batching: 'sorted' is neither random nor length");
}

TEST_CASE("padding of the plans on eight lengths x 64 sentences, as counted by hand") {
  const auto pairs = eight_lengths();
  // A padded source row is its sentence + </s>: 2 to 9 slots. Real slots per epoch: 64 x (2 + ... + 9).
  const int64_t real = 64 * 44;
  Generator gen(5);
  // By length, one pool: 8 batches of 64, each one length: no padding at all.
  const auto by_length = plan_batches(pairs, {.max_sentences = 64, .batching = Batching::Length}, &gen);
  CHECK(by_length.size() == 8);
  CHECK(slots_and_real(pairs, by_length) == std::pair{real, real});
  // Random: 8 batches of 64 padded to their longest. A batch misses the 64 longest sentences with
  // probability C(448, 64) / C(512, 64) < 2e-4; when every batch holds one, each pads to 9 slots:
  // padding 1 - 44 / (8 x 9) = 0.389, the most padding any plan of batches of 64 can have.
  const auto random = plan_batches(pairs, {.max_sentences = 64}, &gen);
  REQUIRE(random.size() == 8);
  for (const auto& batch : random)
    REQUIRE(std::any_of(batch.begin(), batch.end(),
                        [&](int64_t i) { return pairs[static_cast<size_t>(i)].source.size() == 8; }));
  CHECK(slots_and_real(pairs, random) == std::pair{int64_t{8 * 64 * 9}, real});
  // The same batches in 4 length-sorted pieces of 16: piece k's longest is at most piece k+1's
  // shortest, so a batch's padding slots are at most 16 x (9 - 2) (the lengths' range, telescoped).
  std::vector<std::vector<int64_t>> pieces;
  for (const auto& batch : random)
    for (auto& piece : split_by_length(pairs, batch, 4)) {
      CHECK(piece.size() == 16);
      pieces.push_back(std::move(piece));
    }
  const auto [slots, counted] = slots_and_real(pairs, pieces);
  CHECK(counted == real);
  CHECK(slots - real <= 8 * 16 * 7);
  CHECK(slots - real > 0);  // random batches do not split into single lengths
}

TEST_CASE("split_by_length cuts one batch into runs of lengths, as computed by hand") {
  const auto pairs = eight_lengths();
  // Indices 0..63 hold each length 8 times: 4 pieces of lengths {1,2}, {3,4}, {5,6}, {7,8}, padded
  // to 3, 5, 7, 9 slots: 16 x (3 + 5 + 7 + 9) = 384 slots for 8 x 44 = 352 real, 1/12 padding (one
  // rectangle: 64 x 9 = 576 slots, 0.389).
  std::vector<int64_t> batch(64);
  for (int64_t i = 0; i < 64; ++i) batch[static_cast<size_t>(i)] = 63 - i;
  const auto pieces = split_by_length(pairs, batch, 4);
  REQUIRE(pieces.size() == 4);
  for (size_t k = 0; k < 4; ++k)
    for (int64_t i : pieces[k]) CHECK((pairs[static_cast<size_t>(i)].source.size() + 1) / 2 == k + 1);
  CHECK(slots_and_real(pairs, pieces) == std::pair{int64_t{384}, int64_t{352}});
  CHECK(slots_and_real(pairs, {batch}) == std::pair{int64_t{576}, int64_t{352}});
  // Sizes differ by at most one; never more pieces than sentences; never an empty piece.
  const auto five = split_by_length(pairs, {0, 1, 2, 3, 4}, 3);
  CHECK(five.size() == 3);
  CHECK((five[0].size() == 1 && five[1].size() == 2 && five[2].size() == 2));
  CHECK(split_by_length(pairs, {7, 3}, 4).size() == 2);
  CHECK_THROWS_MSG(split_by_length(pairs, {0}, 0), ValueError, "split_by_length: pieces must be at least 1, got 0");
}

// The share of the corpus's length variance that lies inside batches: about 1 when batches are
// random samples (each batch spans all lengths), 0 when every batch holds one length.
double within_batch_share(const std::vector<EncodedPair>& pairs, const std::vector<std::vector<int64_t>>& batches) {
  double total_mean = 0;
  for (const auto& p : pairs) total_mean += static_cast<double>(p.source.size());
  total_mean /= static_cast<double>(pairs.size());
  double within = 0, total = 0;
  for (const auto& batch : batches) {
    double mean = 0;
    for (int64_t i : batch) mean += static_cast<double>(pairs[static_cast<size_t>(i)].source.size());
    mean /= static_cast<double>(batch.size());
    for (int64_t i : batch) {
      const auto length = static_cast<double>(pairs[static_cast<size_t>(i)].source.size());
      within += (length - mean) * (length - mean), total += (length - total_mean) * (length - total_mean);
    }
  }
  return within / total;
}

TEST_CASE("the default plan's batches are not sorted by length, the length plan's are") {
  const auto pairs = eight_lengths();
  Generator gen(9);
  // Random batches of 64 from 512: the expected share is 1 - (8 - 1) / (512 - 1) = 0.986.
  CHECK(within_batch_share(pairs, plan_batches(pairs, {.max_sentences = 64}, &gen)) > 0.9);
  CHECK(within_batch_share(pairs, plan_batches(pairs, {.max_sentences = 64, .batching = Batching::Length}, &gen)) == 0);
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
