#include "catch.h"
#include "transformer/data/learn_bpe.h"

using namespace gradformer;
using Merges = std::vector<BytePairEncoding::Merge>;
using Ids = std::vector<int64_t>;

TEST_CASE("learn_bpe on aaabdaaabac: aa, then ab, then aa+ab, worked by hand") {
  // Pairs of a a a b d a a a b a c: aa 4, ab 2, bd 1, da 1, ba 1, ac 1 -> join aa (256):
  //   aa a b d aa a b a c. Pairs: (aa,a) 2, (a,b) 2, the rest 1; the tie goes to the smaller
  //   pair, (97,98) before (256,97) -> join ab (257): aa ab d aa ab a c. Pairs: (aa,ab) 2, the
  //   rest 1 -> join aa+ab (258): aaab d aaab a c.
  const BytePairEncoding bpe = learn_bpe({"aaabdaaabac"}, 259);
  CHECK(bpe.merges() == Merges{{"a", "a"}, {"a", "b"}, {"aa", "ab"}});
  REQUIRE(bpe.size() == 259);
  CHECK(bpe.token(256) == "aa");
  CHECK(bpe.token(257) == "ab");
  CHECK(bpe.token(258) == "aaab");
  CHECK(bpe.encode({"aaabdaaabac"}) == Ids{258, 'd', 258, 'a', 'c'});
  // One more: every pair left counts 1; the smallest is (97,99), "ac".
  CHECK(learn_bpe({"aaabdaaabac"}, 260).merges().back() == BytePairEncoding::Merge{"a", "c"});
}

TEST_CASE("learn_bpe counts a pre-token as often as it occurs and never joins across pre-tokens") {
  // (a,b) occurs in two of the three pre-tokens, (b,a) in one; "a" "b" apart are no pair.
  const BytePairEncoding bpe = learn_bpe({"ab", "ba", "ab", "a", "b"}, 1000);
  // After ab: the words are [ab], [b a], [ab], [a], [b] -> ba; then no neighbours are left, so the
  // vocabulary stops short of the size asked for.
  CHECK(bpe.merges() == Merges{{"a", "b"}, {"b", "a"}});
  CHECK(bpe.size() == 258);
}

TEST_CASE("learn_bpe with no room or nothing to join gives the bytes alone") {
  CHECK(learn_bpe({"hello"}, 256).merges().empty());
  CHECK(learn_bpe({}, 300).size() == 256);
  CHECK(learn_bpe({"x", "y"}, 300).merges().empty());
  CHECK_THROWS_MSG(learn_bpe({"ab"}, 255), ValueError, "learn_bpe: vocab_size 255 is below 256");
}

TEST_CASE("learned merges encode their own text and round-trip any bytes") {
  const std::vector<std::string> text = {"the", " cat", " sat", " on", " the", " mat", std::string("\xff\x00", 2),
                                         " the"};
  const BytePairEncoding bpe = learn_bpe(text, 270);
  std::string joined;
  for (const std::string& piece : text) joined += piece;
  const Ids ids = bpe.encode(text);
  CHECK(ids.size() < joined.size());  // some merges fired
  CHECK(bpe.decode(ids) == joined);
  // Its first merge, by hand: "th" 3 (once in "the", twice in " the"), "he" 3, "at" 3 (cat, sat,
  // mat), " t" 2, the rest less; the tie goes to the smallest pair, ('a','t') = (97,116).
  CHECK(bpe.merges().front() == BytePairEncoding::Merge{"a", "t"});
}
