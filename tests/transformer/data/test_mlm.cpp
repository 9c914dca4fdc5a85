// The masked-LM corruption (transformer/data/mlm.h): BERT's 15% and 80/10/10, measured over many
// draws against the binomial's standard error; the vocabulary scheme; the negation labels.
#include <cmath>

#include "catch.h"
#include "transformer/data/mlm.h"

using namespace gradformer;

namespace {

// |count - n p| within 5 binomial standard errors sqrt(n p (1 - p)).
void check_binomial(int64_t count, int64_t n, double p) {
  const double mean = static_cast<double>(n) * p, se = std::sqrt(static_cast<double>(n) * p * (1 - p));
  INFO("count " << count << " of " << n << ", expected " << mean << " +- " << se);
  CHECK(std::abs(static_cast<double>(count) - mean) < 5 * se);
}

}  // namespace

TEST_CASE("mask_tokens: 15% of the words chosen, of those 80% <mask>, 10% random, 10% kept, within 5 standard errors") {
  // 64 sentences of 40 words (ids 5..24), <s> and </s> around, 3 pad positions in the last row.
  std::vector<std::vector<int64_t>> sentences(64);
  for (size_t b = 0; b < sentences.size(); ++b)
    for (int64_t t = 0; t < (b == 63 ? 37 : 40); ++t)
      sentences[b].push_back(5 + (static_cast<int64_t>(b) * 7 + t) % 20);
  const Tensor ids = encode_sequences(sentences);
  Generator gen(11);
  int64_t candidates = 0, chosen = 0, masked = 0, randomized = 0, kept = 0;
  for (int draw = 0; draw < 60; ++draw) {
    const MlmBatch b = mask_tokens(ids, 25, gen);
    const auto in = ids.to_vector<int64_t>(), out = b.input.to_vector<int64_t>(),
               labels = b.labels.to_vector<int64_t>();
    for (size_t i = 0; i < in.size(); ++i) {
      if (labels[i] == 0) {
        REQUIRE(out[i] == in[i]);  // not chosen: untouched (specials included)
        continue;
      }
      REQUIRE(labels[i] == in[i]);  // chosen: the label is the original word
      REQUIRE(in[i] >= kFirstWordId);
      REQUIRE(out[i] >= kMaskId);  // <mask> or a word, never another special
      REQUIRE(out[i] < 25);
    }
    candidates += b.candidates, chosen += b.chosen, masked += b.masked, randomized += b.randomized, kept += b.kept;
  }
  CHECK(candidates == 60 * (64 * 40 - 3));
  CHECK(masked + randomized + kept == chosen);
  check_binomial(chosen, candidates, 0.15);
  check_binomial(masked, chosen, 0.8);
  check_binomial(randomized, chosen, 0.1);
  check_binomial(kept, chosen, 0.1);
}

TEST_CASE("mask_tokens: a random replacement is uniform over the words, specials never drawn") {
  const Tensor ids = encode_sequences({std::vector<int64_t>(2000, 5)});
  Generator gen(3);
  std::vector<int64_t> counts(10, 0);
  int64_t randomized = 0;
  for (int draw = 0; draw < 50; ++draw) {
    const MlmBatch b = mask_tokens(ids, 10, gen, {.select = 1.0, .mask = 0.0, .random = 1.0});
    randomized += b.randomized;
    for (int64_t id : b.input.to_vector<int64_t>()) ++counts[static_cast<size_t>(id)];
  }
  CHECK(randomized == 100000);
  CHECK(counts[0] == 0);
  CHECK(counts[4] == 0);   // <mask> is not a word
  CHECK(counts[1] == 50);  // the <s> and </s> of each draw, untouched
  CHECK(counts[2] == 50);
  for (size_t id = 5; id < 10; ++id) check_binomial(counts[id], randomized, 0.2);
}

TEST_CASE("mask_tokens: the same generator state gives the same corruption, and bad arguments name the values") {
  const Tensor ids = encode_sequences({{5, 6, 7, 8, 9}, {9, 8}});
  Generator a(5), b(5);
  CHECK(mask_tokens(ids, 12, a).input.to_vector<int64_t>() == mask_tokens(ids, 12, b).input.to_vector<int64_t>());
  CHECK_THROWS_MSG(mask_tokens(ids, 5, a), ValueError,
                   "mask_tokens: vocab_size must exceed 5 (the specials and <mask>), got 5");
  CHECK_THROWS_AS(mask_tokens(ids, 12, a, {.select = 1.5}), ValueError);
  CHECK_THROWS_MSG(mask_tokens(ids, 12, a, {.mask = 0.8, .random = 0.3}), ValueError,
                   "mask 0.8 + random 0.3 exceeds 1");
  CHECK_THROWS_AS(mask_tokens(ids.to(DType::Float32), 12, a), DTypeError);
}

TEST_CASE(
    "encoder_only_vocab: the four fixed specials, then <mask> at id 4, then the words, and from_text reads it back") {
  const Vocab v = encoder_only_vocab({{"b", "a", "b"}});
  CHECK(v.size() == 7);
  CHECK(v.token(0) == "<pad>");
  CHECK(v.token(3) == "<unk>");
  CHECK(v.token(kMaskId) == "<mask>");
  CHECK(v.token(5) == "b");  // most frequent first
  CHECK(Vocab::from_text(v.to_text()) == v);
  CHECK_NOTHROW(check_encoder_only_vocab(v, "test"));
  // A vocabulary of the other architectures (four specials, then words) is not an encoder-only one.
  CHECK_THROWS_MSG(check_encoder_only_vocab(Vocab::build({{"x", "y"}}), "ckpt"), DataError,
                   "ckpt: an encoder-only vocabulary needs <mask> at id 4");
}

TEST_CASE("encode_sequences: <s> words </s> then <pad>") {
  CHECK(encode_sequences({{7, 8, 9}, {5}}).to_vector<int64_t>() == std::vector<int64_t>{1, 7, 8, 9, 2, 1, 5, 2, 0, 0});
  CHECK_THROWS_AS(encode_sequences({}), ValueError);
  CHECK_THROWS_MSG(encode_sequences({{5}, {}}), ValueError, "sentence 1 is empty");
}

TEST_CASE("negation task: label 1 exactly when the French sentence holds 'pas'") {
  CHECK(negation_label({"il", "ne", "mange", "pas", "."}) == 1);
  CHECK(negation_label({"les", "chats", "noirs", "n'", "aiment", "pas", "les", "pommes", "."}) == 1);
  CHECK(negation_label({"je", "mange", "une", "pomme", "."}) == 0);
  const Vocab v = encoder_only_vocab({{"il", "mange", "pas", "."}});
  const ClassifyBatch b = collate_labelled({{{"il", "mange", "."}, 0}, {{"il", "pas", "."}, 1}}, {1, 0}, v);
  CHECK(b.labels.to_vector<int64_t>() == std::vector<int64_t>{1, 0});
  CHECK(b.ids.shape() == Shape{2, 5});
  CHECK_THROWS_AS(collate_labelled({}, {0}, v), IndexError);
}
