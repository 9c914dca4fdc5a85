#include "transformer/data/length_kinds.h"

#include <algorithm>
#include <set>
#include <string>

#include "tensor/random.h"

namespace gradformer {

namespace {

constexpr int64_t kLetters = 12;

std::string letter(int64_t i) { return std::string(1, static_cast<char>('a' + i % kLetters)); }

SentencePair sample_pair(Generator& gen) {
  const int64_t kind = gen.integer(0, 4);
  const int64_t length = 2 + 3 * kind + gen.integer(0, 3);  // copy 2-4, reverse 5-7, shift 8-10, swap 11-13
  std::vector<int64_t> ids(static_cast<size_t>(length));
  for (int64_t& id : ids) id = gen.integer(0, kLetters);
  std::vector<int64_t> out = ids;
  if (kind == 1) std::reverse(out.begin(), out.end());
  if (kind == 2)
    for (int64_t& id : out) id += 1;  // letter() wraps l to a
  if (kind == 3)
    for (size_t i = 0; i + 1 < out.size(); i += 2) std::swap(out[i], out[i + 1]);
  SentencePair pair;
  for (int64_t id : ids) pair.source.push_back(letter(id));
  for (int64_t id : out) pair.target.push_back(letter(id));
  return pair;
}

}  // namespace

LengthKindsCorpus make_length_kinds_corpus(const LengthKindsOptions& options) {
  Generator gen(options.seed);
  LengthKindsCorpus corpus;
  std::set<std::vector<std::string>> train_sources;
  for (int64_t i = 0; i < options.train_size; ++i) {
    corpus.train.push_back(sample_pair(gen));
    train_sources.insert(corpus.train.back().source);
  }
  while (static_cast<int64_t>(corpus.test.size()) < options.test_size) {
    SentencePair pair = sample_pair(gen);
    if (!train_sources.count(pair.source)) corpus.test.push_back(std::move(pair));
  }
  return corpus;
}

}  // namespace gradformer
