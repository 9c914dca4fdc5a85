// A corpus for measuring what subwords buy: German-like compounds translated into English word
// pairs, "ich sehe zwei hausbooten" -> "i see two house boats", whose test split holds only
// compounds the training split never has, every one made of stems it has. A model of words meets
// an unknown word (<unk>) in every test sentence; a model of subwords can spell it from pieces
// it knows. ASCII only. The compound_corpus program writes it as train.tsv, valid.tsv, test.tsv.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tensor/random.h"
#include "transformer/data/tsv.h"

namespace test {

struct CompoundCorpus {
  std::vector<gradformer::SentencePair> train;  // a fifth plain nouns, the rest compounds of the seen quarter
  std::vector<gradformer::SentencePair> valid;  // compounds the training split has
  std::vector<gradformer::SentencePair> test;   // compounds it never has (a quarter of all of them)
};

// Each stem with its English word; a compound of stems a, b is "a b" in English ("hausboot":
// "house boat"), and its plural ends in -en ("hausbooten": "house boats").
inline constexpr std::array<std::pair<const char*, const char*>, 20> kCompoundStems = {{
    {"haus", "house"},  {"boot", "boat"},     {"baum", "tree"},   {"tisch", "table"},   {"hund", "dog"},
    {"stein", "stone"}, {"wasser", "water"},  {"feuer", "fire"},  {"garten", "garden"}, {"tor", "gate"},
    {"turm", "tower"},  {"berg", "mountain"}, {"wald", "forest"}, {"brot", "bread"},    {"stuhl", "chair"},
    {"tasse", "cup"},   {"buch", "book"},     {"hand", "hand"},   {"schuh", "shoe"},    {"licht", "light"},
}};

inline CompoundCorpus make_compound_corpus(uint64_t seed = 1, int64_t train = 4000, int64_t valid = 200,
                                           int64_t test = 200) {
  using gradformer::split_words;
  static constexpr std::array<std::pair<const char*, const char*>, 5> subjects = {{{"ich sehe", "i see"},
                                                                                   {"du hast", "you have"},
                                                                                   {"wir kaufen", "we buy"},
                                                                                   {"sie malen", "they paint"},
                                                                                   {"er findet", "he finds"}}};
  static constexpr std::array<std::pair<const char*, const char*>, 5> numbers = {
      {{"ein", "one"}, {"zwei", "two"}, {"drei", "three"}, {"vier", "four"}, {"fuenf", "five"}}};
  gradformer::Generator gen(seed);
  const auto pick = [&](size_t n) { return static_cast<size_t>(gen.integer(0, static_cast<int64_t>(n))); };
  std::vector<std::pair<size_t, size_t>> compounds;  // every ordered pair of two different stems, shuffled
  for (size_t a = 0; a < kCompoundStems.size(); ++a)
    for (size_t b = 0; b < kCompoundStems.size(); ++b)
      if (a != b) compounds.emplace_back(a, b);
  for (size_t i = compounds.size() - 1; i > 0; --i) std::swap(compounds[i], compounds[pick(i + 1)]);
  const std::vector<std::pair<size_t, size_t>> held(compounds.begin(), compounds.begin() + compounds.size() / 4),
      seen(compounds.begin() + compounds.size() / 4, compounds.end());
  // "<subject> <verb> <number> <noun>": a plain noun (with probability `plain`) or a compound of `pool`.
  const auto sentences = [&](int64_t count, const std::vector<std::pair<size_t, size_t>>& pool, double plain) {
    std::vector<gradformer::SentencePair> out;
    for (int64_t i = 0; i < count; ++i) {
      const auto& [subject_de, subject_en] = subjects[pick(subjects.size())];
      const size_t number = pick(numbers.size());
      std::string noun_de, noun_en;
      if (gen.uniform() < plain) {
        const auto& [de, en] = kCompoundStems[pick(kCompoundStems.size())];
        noun_de = de, noun_en = en;
      } else {
        const auto& [a, b] = pool[pick(pool.size())];
        noun_de = std::string(kCompoundStems[a].first) + kCompoundStems[b].first;
        noun_en = std::string(kCompoundStems[a].second) + " " + kCompoundStems[b].second;
      }
      if (number > 0) noun_de += "en", noun_en += "s";
      out.push_back({split_words(std::string(subject_de) + " " + numbers[number].first + " " + noun_de),
                     split_words(std::string(subject_en) + " " + numbers[number].second + " " + noun_en)});
    }
    return out;
  };
  CompoundCorpus corpus;
  corpus.train = sentences(train, seen, 0.2);
  corpus.valid = sentences(valid, seen, 0.0);
  corpus.test = sentences(test, held, 0.0);
  return corpus;
}

}  // namespace test
