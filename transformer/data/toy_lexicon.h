// The words of the toy French->English corpus, with what the grammar needs to know about each:
// a noun's gender, an adjective's four French forms and which side of the noun it goes on, a
// verb's six French persons. French nouns and adjectives never start with a vowel, so no elision
// (l', d') is needed; only "ne" before a form of être that does ("il n' est pas", "tu n' es pas",
// with n' as its own token). English a/an and the English plurals are spelled out in the tables.
#pragma once

#include <array>
#include <string>
#include <vector>

namespace gradformer {

enum class Gender { masculine, feminine };

struct ToyNoun {
  std::string fr_singular, fr_plural;
  Gender gender;
  std::string en_singular, en_plural;
  bool animate;  // only animate nouns are subjects: "the cat eats the apple", never the reverse
};

/// French adjective forms by agreement; index with ToyAdjective::form_index.
struct ToyAdjective {
  std::array<std::string, 4> fr;  // masculine singular, feminine singular, masculine plural, feminine plural
  std::string en;
  bool before_noun;  // French "petit chat" (size, age) vs "chat noir" (colour, quality)
  static size_t form_index(Gender gender, bool plural) {
    return (plural ? 2 : 0) + (gender == Gender::feminine ? 1 : 0);
  }
};

struct ToyVerb {
  std::array<std::string, 6> fr;  // je, tu, il/elle, nous, vous, ils/elles
  std::string en_base;            // "eat", "look for" (may be two words)
  std::string en_third_person;    // "eats", "looks for"
};

/// Subject pronouns; French person index 0..5 as in ToyVerb::fr.
struct ToyPronoun {
  std::string fr, en;
  int person;  // 0 je, 1 tu, 2 il/elle, 3 nous, 4 vous, 5 ils/elles
};

/// Être and to be, by French person: "je suis heureux" -> "i am happy".
struct ToyCopula {
  std::array<std::string, 6> fr;  // suis, es, est, sommes, êtes, sont
  std::array<std::string, 6> en;  // am, are, is, are, are, are
};

struct ToyLexicon {
  ToyCopula copula;
  std::vector<ToyNoun> nouns;
  std::vector<ToyAdjective> adjectives;
  std::vector<ToyVerb> verbs;
  std::vector<ToyPronoun> pronouns;
};

/// The one lexicon the toy corpus is generated from (built once, never changes).
const ToyLexicon& toy_lexicon();

}  // namespace gradformer
