#include <set>

#include "catch.h"
#include "transformer/data/length_kinds.h"

using namespace gradformer;

namespace {

// The kind's rule, written out word by word from the header's table (not the generator's code).
std::vector<std::string> expected_target(const std::vector<std::string>& s) {
  const size_t n = s.size();
  std::vector<std::string> t(n);
  for (size_t i = 0; i < n; ++i) {
    if (n <= 4)
      t[i] = s[i];  // copy
    else if (n <= 7)
      t[i] = s[n - 1 - i];  // reverse
    else if (n <= 10)
      t[i] = s[i] == "l" ? "a" : std::string(1, static_cast<char>(s[i][0] + 1));  // shift
    else
      t[i] = i % 2 == 0 ? (i + 1 < n ? s[i + 1] : s[i]) : s[i - 1];  // swap
  }
  return t;
}

}  // namespace

TEST_CASE("length-kinds corpus: the length says the kind, every target follows its kind's rule") {
  const LengthKindsCorpus corpus = make_length_kinds_corpus({.train_size = 400, .test_size = 100, .seed = 3});
  REQUIRE(corpus.train.size() == 400);
  REQUIRE(corpus.test.size() == 100);
  std::set<size_t> lengths;
  std::set<std::vector<std::string>> train_sources;
  for (const auto* split : {&corpus.train, &corpus.test})
    for (const SentencePair& p : *split) {
      REQUIRE(p.source.size() >= 2);
      REQUIRE(p.source.size() <= 13);
      for (const std::string& w : p.source) CHECK((w.size() == 1 && w[0] >= 'a' && w[0] <= 'l'));
      CHECK(p.target == expected_target(p.source));
      lengths.insert(p.source.size());
    }
  CHECK(lengths.size() == 12);  // every length of every kind occurs
  for (const SentencePair& p : corpus.train) train_sources.insert(p.source);
  for (const SentencePair& p : corpus.test) CHECK(!train_sources.count(p.source));
  const LengthKindsCorpus again = make_length_kinds_corpus({.train_size = 400, .test_size = 100, .seed = 3});
  CHECK(again.train == corpus.train);
  CHECK(make_length_kinds_corpus({.train_size = 400, .test_size = 100, .seed = 4}).train != corpus.train);
}
