#include <map>
#include <random>
#include <set>

#include "catch.h"
#include "transformer/data/learn_bpe.h"

using namespace gradformer;
using Merges = std::vector<BytePairEncoding::Merge>;
using Ids = std::vector<int64_t>;

namespace {

/// What learning gives: the tokens by id and the merges in order.
struct Learned {
  std::vector<std::string> tokens;
  Merges merges;
};

/// The definition, written the simple and slow way as an independent reference: every merge
/// recounts every pair of every word. Pairs that join into a reserved string are passed over.
Learned reference_learn(const std::vector<std::string>& pre_tokens, int64_t vocab_size,
                        const std::set<std::string>& reserved = {}) {
  using Pair = std::pair<int64_t, int64_t>;
  std::map<std::string, int64_t> counts;
  for (const std::string& pre_token : pre_tokens) ++counts[pre_token];
  std::vector<std::pair<std::vector<int64_t>, int64_t>> words;  // (ids, count)
  for (const auto& [pre_token, count] : counts) {
    std::vector<int64_t> ids;
    for (const char c : pre_token) ids.push_back(static_cast<unsigned char>(c));
    words.emplace_back(ids, count);
  }
  Learned learned;
  std::map<std::string, int64_t> ids;
  for (int b = 0; b < 256; ++b) {
    learned.tokens.emplace_back(1, static_cast<char>(b));
    ids[learned.tokens.back()] = b;
  }
  while (static_cast<int64_t>(learned.tokens.size()) < vocab_size) {
    std::map<Pair, int64_t> pair_counts;  // every position i, i + 1: overlapping pairs count twice
    for (const auto& [word, count] : words) {
      for (size_t i = 0; i + 1 < word.size(); ++i) pair_counts[{word[i], word[i + 1]}] += count;
    }
    Pair best{0, 0};
    int64_t best_count = 0;
    for (const auto& [pair, count] : pair_counts) {  // ascending pairs: a tie keeps the smaller
      const std::string joined =
          learned.tokens[static_cast<size_t>(pair.first)] + learned.tokens[static_cast<size_t>(pair.second)];
      if (count > best_count && !reserved.count(joined)) {
        best = pair;
        best_count = count;
      }
    }
    if (best_count == 0) break;
    const std::string left = learned.tokens[static_cast<size_t>(best.first)];
    const std::string right = learned.tokens[static_cast<size_t>(best.second)];
    learned.merges.emplace_back(left, right);
    const auto [it, added] = ids.emplace(left + right, static_cast<int64_t>(learned.tokens.size()));
    if (added) learned.tokens.push_back(left + right);
    for (auto& [word, count] : words) {
      std::vector<int64_t> joined;
      for (size_t i = 0; i < word.size();) {
        const bool here = i + 1 < word.size() && word[i] == best.first && word[i + 1] == best.second;
        joined.push_back(here ? it->second : word[i]);
        i += here ? 2 : 1;
      }
      word = joined;
    }
  }
  return learned;
}

std::vector<std::string> tokens_of(const BytePairEncoding& bpe) {
  std::vector<std::string> tokens;
  for (int64_t id = 0; id < bpe.size(); ++id) tokens.push_back(bpe.token(id));
  return tokens;
}

/// Random words from a small alphabet, so that ties and overlapping pairs ("aaaa", "abab") are common.
std::vector<std::string> random_pre_tokens(std::mt19937& rng, const std::string& alphabet, int count, int max_length) {
  std::vector<std::string> pre_tokens;
  for (int w = 0; w < count; ++w) {
    std::string word;
    const int length = 1 + static_cast<int>(rng() % static_cast<unsigned>(max_length));
    for (int i = 0; i < length; ++i) word += alphabet[rng() % alphabet.size()];
    pre_tokens.push_back(word);
  }
  return pre_tokens;
}

}  // namespace

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

TEST_CASE("learn_bpe counts overlapping pairs at every position: (z,z) three times in zzzz") {
  // zzzz: (z,z) at 0, 1 and 2 counts 3, though only two can be joined; abab: (a,b) 2, (b,a) 1. By
  // the count of joinable places it would be a tie, 2 and 2, going to the smaller pair (a,b); as
  // counted, (z,z) wins. Then [zz zz] [a b a b]: (a,b) 2. Then [zz zz] [ab ab]: (zz,zz) and
  // (ab,ab) 1 each, the tie going to the smaller ids (256,256).
  const BytePairEncoding bpe = learn_bpe({"zzzz", "abab"}, 1000);
  CHECK(bpe.merges() == Merges{{"z", "z"}, {"a", "b"}, {"zz", "zz"}, {"ab", "ab"}});
  CHECK(bpe.size() == 260);
}

TEST_CASE("learn_bpe with no room or nothing to join gives the bytes alone") {
  CHECK(learn_bpe({"hello"}, 256).merges().empty());
  CHECK(learn_bpe(std::vector<std::string>{}, 300).size() == 256);
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

TEST_CASE("learn_bpe_from_counts: a pre-token with count n learns as n copies of it") {
  const PreTokenCounts counts = {{"ab", 2}, {"ba", 1}, {"a", 1}, {"b", 1}, {"zz", 0}};
  const BytePairEncoding bpe = learn_bpe_from_counts(counts, 1000);
  CHECK(bpe.merges() == Merges{{"a", "b"}, {"b", "a"}});  // as above; a count of 0 adds nothing
  PreTokenCounts added;
  add_pre_token_counts(added, {"ab", "ba"});
  add_pre_token_counts(added, {"ab", "a"});
  CHECK(added == PreTokenCounts{{"ab", 2}, {"ba", 1}, {"a", 1}});
  CHECK_THROWS_MSG(learn_bpe_from_counts({{"ab", 2}, {"c d", -1}}, 300), ValueError,
                   "learn_bpe: pre-token \"cĠd\" has a negative count, -1");
}

TEST_CASE("learn_bpe gives the reference's tokens and merges on random texts full of ties and overlaps") {
  const std::vector<std::string> alphabets = {"a", "ab", "ab ", "abc", "aab", "abcd ", "xy\x01\xff"};
  for (uint32_t seed = 0; seed < 300; ++seed) {
    std::mt19937 rng(seed);
    const std::string& alphabet = alphabets[seed % alphabets.size()];
    const std::vector<std::string> pre_tokens =
        random_pre_tokens(rng, alphabet, 1 + static_cast<int>(rng() % 40), 1 + static_cast<int>(rng() % 12));
    const int64_t vocab_size = 256 + static_cast<int64_t>(rng() % 40);
    INFO("seed " << seed << ", alphabet \"" << alphabet << "\", vocab_size " << vocab_size);
    const Learned expected = reference_learn(pre_tokens, vocab_size);
    const BytePairEncoding bpe = learn_bpe(pre_tokens, vocab_size);
    REQUIRE(bpe.merges() == expected.merges);
    REQUIRE(tokens_of(bpe) == expected.tokens);
  }
}

TEST_CASE("learn_bpe gives the reference's merges on a larger text of repeated words") {
  // 3,000 words drawn unevenly from a lexicon of 200, so that counts differ and change a lot.
  std::mt19937 rng(7);
  const std::vector<std::string> lexicon = random_pre_tokens(rng, "abcdefgh ", 200, 9);
  std::vector<std::string> pre_tokens;
  for (int i = 0; i < 3000; ++i) {
    const size_t a = rng() % lexicon.size(), b = rng() % lexicon.size();
    pre_tokens.push_back(lexicon[std::min(a, b)]);  // smaller indices more often
  }
  const Learned expected = reference_learn(pre_tokens, 600);
  const BytePairEncoding bpe = learn_bpe(pre_tokens, 600);
  CHECK(expected.merges.size() > 300);  // so that the check below covers many merges
  CHECK(bpe.merges() == expected.merges);
  CHECK(tokens_of(bpe) == expected.tokens);
}

TEST_CASE("learn_bpe gives the reference's merges on long pre-tokens: a text without spaces is one") {
  // Each merge visits the places of its pair alone, wherever they are: in one pre-token of 5,000
  // bytes as in many short ones. Three long pre-tokens (one given twice) of words run together.
  std::mt19937 rng(11);
  const std::vector<std::string> lexicon = random_pre_tokens(rng, "abcdef", 60, 7);
  std::vector<std::string> pre_tokens(3);
  for (std::string& long_one : pre_tokens)
    while (long_one.size() < 5000) long_one += lexicon[std::min(rng() % lexicon.size(), rng() % lexicon.size())];
  pre_tokens.push_back(pre_tokens[0]);
  const Learned expected = reference_learn(pre_tokens, 256 + 150);
  const BytePairEncoding bpe = learn_bpe(pre_tokens, 256 + 150);
  CHECK(expected.merges.size() == 150);
  CHECK(bpe.merges() == expected.merges);
  CHECK(tokens_of(bpe) == expected.tokens);
}

TEST_CASE("learn_bpe never merges a pair into a reserved string, and takes the next best instead") {
  // <s> three times: (<,s) and (s,>) count 3 each; the tie goes to (<,s) = (60,115). Then (<s,>)
  // would make "<s>".
  CHECK(learn_bpe({"<s>", "<s>", "<s>"}, 300).merges() == Merges{{"<", "s"}, {"<s", ">"}});
  CHECK(learn_bpe({"<s>", "<s>", "<s>"}, 300, {"<s>"}).merges() == Merges{{"<", "s"}});
  // With "<s" reserved too, (s,>) is taken instead; then (<,s>) would make "<s>" again.
  CHECK(learn_bpe({"<s>", "<s>", "<s>"}, 300, {"<s>", "<s"}).merges() == Merges{{"s", ">"}});
  // Longer tokens holding a reserved string are allowed: only the string itself is kept out.
  const BytePairEncoding longer = learn_bpe({"<s>x", "<s>x"}, 300, {"<s>"});
  CHECK(longer.id("<s>") == -1);
  CHECK(longer.id("<s>x") >= 256);
}

TEST_CASE("learn_bpe keeps the special tokens' names out of a vocabulary learned on text full of them") {
  const std::vector<std::string> specials = {"<pad>", "<s>", "</s>", "<unk>", "<sep>", "<mask>"};
  std::mt19937 rng(11);
  std::vector<std::string> pre_tokens;
  for (int i = 0; i < 400; ++i) {
    pre_tokens.push_back(specials[rng() % specials.size()]);
    pre_tokens.push_back(rng() % 2 ? " pad" : " mask");
  }
  const auto spelled = [&](const BytePairEncoding& bpe) {
    int count = 0;
    for (const std::string& name : specials) count += bpe.id(name) >= 0;
    return count;
  };
  CHECK(spelled(learn_bpe(pre_tokens, 320)) == 6);  // unreserved, every name becomes a token
  const BytePairEncoding bpe = learn_bpe(pre_tokens, 320, specials);
  CHECK(spelled(bpe) == 0);
  for (const std::string& name : specials) CHECK(bpe.encode({name}).size() >= 2);
  // And the reference agrees on what is learned instead.
  const Learned expected = reference_learn(pre_tokens, 320, {specials.begin(), specials.end()});
  CHECK(bpe.merges() == expected.merges);
}

TEST_CASE("learn_bpe with reserved strings gives the reference's merges on random texts") {
  const std::vector<std::string> reserved = {"ab", "aab", "ba ", "bb", "abab"};
  for (uint32_t seed = 0; seed < 150; ++seed) {
    std::mt19937 rng(1000 + seed);
    const std::vector<std::string> pre_tokens =
        random_pre_tokens(rng, seed % 2 ? "ab " : "ab", 1 + static_cast<int>(rng() % 30), 10);
    const std::vector<std::string> some(reserved.begin(), reserved.begin() + 1 + seed % reserved.size());
    INFO("seed " << seed);
    const Learned expected = reference_learn(pre_tokens, 300, {some.begin(), some.end()});
    const BytePairEncoding bpe = learn_bpe(pre_tokens, 300, some);
    REQUIRE(bpe.merges() == expected.merges);
    REQUIRE(tokens_of(bpe) == expected.tokens);
    for (const std::string& name : some) CHECK(bpe.id(name) == -1);
  }
}

TEST_CASE("learn_bpe rejects a reserved string it cannot keep out: a single byte, or nothing") {
  CHECK_THROWS_MSG(learn_bpe({"ab"}, 300, {"<s>", "a"}), ValueError,
                   "learn_bpe: reserved string \"a\" is shorter than two bytes");
  CHECK_THROWS_MSG(learn_bpe({"ab"}, 300, {""}), ValueError, "learn_bpe: reserved string \"\" is shorter");
}
