#include "transformer/data/toy_corpus.h"

#include <cmath>
#include <filesystem>
#include <unordered_map>
#include <unordered_set>

#include "transformer/data/toy_lexicon.h"

namespace gradformer {
namespace {

// What a sentence means, before either language spells it.
struct NounPhrase {
  size_t noun = 0;
  bool plural = false;
  bool definite = true;
  int before = -1;  // index of a before-the-noun adjective (petit, grand, ...), or -1
  int after = -1;   // index of an after-the-noun adjective (noir, rouge, ...), or -1
};

// Either "subject verb object" or "subject is adjective" (a copular clause, with être).
struct Clause {
  int pronoun = -1;                    // subject pronoun, or -1 for a noun phrase subject
  Gender speaker = Gender::masculine;  // what je, tu, nous and vous agree with (English cannot tell)
  NounPhrase subject;
  bool copular = false;
  size_t verb = 0;     // when not copular
  int predicate = -1;  // when copular: the adjective
  bool negated = false;
  NounPhrase object;  // when not copular
};

// The French person (0 je ... 5 ils/elles) and gender of a clause's subject.
std::pair<int, Gender> subject_person(const Clause& clause) {
  const ToyLexicon& lex = toy_lexicon();
  if (clause.pronoun < 0) return {clause.subject.plural ? 5 : 2, lex.nouns[clause.subject.noun].gender};
  const ToyPronoun& pronoun = lex.pronouns[static_cast<size_t>(clause.pronoun)];
  if (pronoun.fr == "il" || pronoun.fr == "ils") return {pronoun.person, Gender::masculine};
  if (pronoun.fr == "elle" || pronoun.fr == "elles") return {pronoun.person, Gender::feminine};
  return {pronoun.person, clause.speaker};
}

bool chance(Generator& gen, double p) { return gen.uniform() < p; }

template <class T>
size_t pick(const std::vector<T>& items, Generator& gen) {
  return static_cast<size_t>(gen.integer(0, static_cast<int64_t>(items.size())));
}

int pick_adjective(Generator& gen, bool before_noun, double p) {
  if (!chance(gen, p)) return -1;
  const auto& adjectives = toy_lexicon().adjectives;
  while (true) {
    const size_t a = pick(adjectives, gen);
    if (adjectives[a].before_noun == before_noun) return static_cast<int>(a);
  }
}

NounPhrase sample_noun_phrase(Generator& gen, bool animate) {
  const auto& nouns = toy_lexicon().nouns;
  NounPhrase np;
  do np.noun = pick(nouns, gen);
  while (animate && !nouns[np.noun].animate);
  np.plural = chance(gen, 0.4);
  np.definite = chance(gen, 0.55);
  np.before = pick_adjective(gen, true, 0.25);
  np.after = pick_adjective(gen, false, 0.4);
  return np;
}

Clause sample_clause(Generator& gen) {
  Clause clause;
  if (chance(gen, 0.4))
    clause.pronoun = static_cast<int>(pick(toy_lexicon().pronouns, gen));
  else
    clause.subject = sample_noun_phrase(gen, /*animate=*/true);
  clause.speaker = chance(gen, 0.5) ? Gender::feminine : Gender::masculine;
  clause.negated = chance(gen, 0.35);
  clause.copular = chance(gen, 0.2);
  if (clause.copular) {
    clause.predicate = static_cast<int>(pick(toy_lexicon().adjectives, gen));
    return clause;
  }
  clause.verb = pick(toy_lexicon().verbs, gen);
  clause.object = sample_noun_phrase(gen, /*animate=*/false);  // any noun, animate or not
  // "pas de souris" could be "a mouse" or "any mice": French shows the number only in the article
  // for a noun spelled alike in both, and "de" hides it. Keep the translation a function of the source.
  const ToyNoun& object = toy_lexicon().nouns[clause.object.noun];
  if (clause.negated && !clause.object.definite && object.fr_singular == object.fr_plural) clause.object.plural = false;
  return clause;
}

// ---- French ---------------------------------------------------------------------------------

void french_noun_phrase(const NounPhrase& np, bool object_of_negation, std::vector<std::string>& out) {
  const ToyLexicon& lex = toy_lexicon();
  const ToyNoun& noun = lex.nouns[np.noun];
  const bool feminine = noun.gender == Gender::feminine;
  if (np.definite)
    out.push_back(np.plural ? "les" : feminine ? "la" : "le");
  else if (object_of_negation || (np.plural && np.before >= 0))
    out.push_back("de");  // "pas de pommes"; "de petits chats" (des before a plural adjective)
  else
    out.push_back(np.plural ? "des" : feminine ? "une" : "un");
  const size_t form = ToyAdjective::form_index(noun.gender, np.plural);
  if (np.before >= 0) out.push_back(lex.adjectives[static_cast<size_t>(np.before)].fr[form]);
  out.push_back(np.plural ? noun.fr_plural : noun.fr_singular);
  if (np.after >= 0) out.push_back(lex.adjectives[static_cast<size_t>(np.after)].fr[form]);
}

bool starts_with_vowel(const std::string& word) {
  // "ê" is two bytes in UTF-8; its first byte, 0xC3, begins every accented Latin vowel we use.
  return std::string("aeiou").find(word[0]) != std::string::npos || static_cast<unsigned char>(word[0]) == 0xC3;
}

std::vector<std::string> french(const Clause& clause) {
  const ToyLexicon& lex = toy_lexicon();
  std::vector<std::string> out;
  const auto [person, gender] = subject_person(clause);
  if (clause.pronoun >= 0)
    out.push_back(lex.pronouns[static_cast<size_t>(clause.pronoun)].fr);
  else
    french_noun_phrase(clause.subject, false, out);
  if (clause.copular) {  // "elle n' est pas heureuse": ne elides before a vowel; the adjective agrees
    const std::string& etre = lex.copula.fr[static_cast<size_t>(person)];
    if (clause.negated) out.push_back(starts_with_vowel(etre) ? "n'" : "ne");
    out.push_back(etre);
    if (clause.negated) out.push_back("pas");
    const bool plural = person >= 3;
    out.push_back(lex.adjectives[static_cast<size_t>(clause.predicate)].fr[ToyAdjective::form_index(gender, plural)]);
    out.push_back(".");
    return out;
  }
  if (clause.negated) out.push_back("ne");
  out.push_back(lex.verbs[clause.verb].fr[static_cast<size_t>(person)]);
  if (clause.negated) out.push_back("pas");
  french_noun_phrase(clause.object, clause.negated, out);
  out.push_back(".");
  return out;
}

// ---- English --------------------------------------------------------------------------------

void english_noun_phrase(const NounPhrase& np, bool object_of_negation, std::vector<std::string>& out) {
  const ToyLexicon& lex = toy_lexicon();
  const ToyNoun& noun = lex.nouns[np.noun];
  std::vector<std::string> words;  // adjectives and noun; the article depends on the first
  if (np.before >= 0) words.push_back(lex.adjectives[static_cast<size_t>(np.before)].en);
  if (np.after >= 0) words.push_back(lex.adjectives[static_cast<size_t>(np.after)].en);
  words.push_back(np.plural ? noun.en_plural : noun.en_singular);
  if (np.definite)
    out.push_back("the");
  else if (np.plural)
    out.push_back(object_of_negation ? "any" : "some");
  else
    out.push_back(starts_with_vowel(words.front()) ? "an" : "a");
  out.insert(out.end(), words.begin(), words.end());
}

std::vector<std::string> english(const Clause& clause) {
  const ToyLexicon& lex = toy_lexicon();
  std::vector<std::string> out;
  bool third_singular;
  if (clause.pronoun >= 0) {
    const ToyPronoun& pronoun = lex.pronouns[static_cast<size_t>(clause.pronoun)];
    out.push_back(pronoun.en);
    third_singular = pronoun.person == 2;
  } else {
    english_noun_phrase(clause.subject, false, out);
    third_singular = !clause.subject.plural;
  }
  if (clause.copular) {  // "she is not happy": no do-support with to be
    out.push_back(lex.copula.en[static_cast<size_t>(subject_person(clause).first)]);
    if (clause.negated) out.push_back("not");
    out.push_back(lex.adjectives[static_cast<size_t>(clause.predicate)].en);
    out.push_back(".");
    return out;
  }
  const ToyVerb& verb = lex.verbs[clause.verb];
  if (clause.negated) {
    out.push_back(third_singular ? "does" : "do");
    out.push_back("not");
  }
  const std::vector<std::string> verb_words =
      split_words(third_singular && !clause.negated ? verb.en_third_person : verb.en_base);
  out.insert(out.end(), verb_words.begin(), verb_words.end());
  english_noun_phrase(clause.object, clause.negated, out);
  out.push_back(".");
  return out;
}

// ---- the probability of a path -------------------------------------------------------------------

// P(a noun phrase) under sample_noun_phrase: each draw's probability, multiplied. `forced_singular`:
// the number was overwritten after drawing ("pas de souris"), so both draws lead here.
double noun_phrase_probability(const NounPhrase& np, bool animate, bool forced_singular) {
  const ToyLexicon& lex = toy_lexicon();
  double nouns = 0, before = 0, after = 0;
  for (const ToyNoun& n : lex.nouns) nouns += !animate || n.animate;
  for (const ToyAdjective& a : lex.adjectives) (a.before_noun ? before : after) += 1;
  double p = 1 / nouns;                                                    // the noun, uniform over the allowed ones
  p *= forced_singular ? (np.plural ? 0.0 : 1.0) : np.plural ? 0.4 : 0.6;  // number
  p *= np.definite ? 0.55 : 0.45;                                          // article
  p *= np.before >= 0 ? 0.25 / before : 0.75;                              // adjective before the noun
  p *= np.after >= 0 ? 0.4 / after : 0.6;                                  // adjective after the noun
  return p;
}

// P(clause) under sample_clause, draw by draw.
double clause_probability(const Clause& c) {
  const ToyLexicon& lex = toy_lexicon();
  double p = c.pronoun >= 0 ? 0.4 / static_cast<double>(lex.pronouns.size())
                            : 0.6 * noun_phrase_probability(c.subject, /*animate=*/true, false);
  p *= 0.5;  // the speaker's gender, either way
  p *= c.negated ? 0.35 : 0.65;
  p *= c.copular ? 0.2 : 0.8;
  if (c.copular) return p / static_cast<double>(lex.adjectives.size());
  p /= static_cast<double>(lex.verbs.size());
  const ToyNoun& object = lex.nouns[c.object.noun];
  const bool forced = c.negated && !c.object.definite && object.fr_singular == object.fr_plural;
  return p * noun_phrase_probability(c.object, /*animate=*/false, forced);
}

}  // namespace

ScoredToyPair sample_scored_toy_pair(Generator& gen) {
  const Clause drawn = sample_clause(gen);
  const std::vector<std::string> sentence = french(drawn);
  // p(s) = sum over the paths that differ from the drawn one only in invisible choices and spell s
  double p = 0;
  for (Gender speaker : {Gender::masculine, Gender::feminine})
    for (bool object_plural : {false, true}) {
      Clause c = drawn;
      c.speaker = speaker;
      if (!c.copular)
        c.object.plural = object_plural;
      else if (object_plural)
        continue;  // a copular clause has no object
      if (french(c) == sentence) p += clause_probability(c);
    }
  return {{sentence, english(drawn)}, std::log(p)};
}

SentencePair sample_toy_pair(Generator& gen) {
  const Clause clause = sample_clause(gen);
  return {french(clause), english(clause)};
}

ToyCorpus make_toy_corpus(const ToyCorpusOptions& options) {
  if (options.train_size < 0 || options.valid_size < 0 || options.test_size < 0)
    throw ValueError(message("make_toy_corpus: split sizes must not be negative, got ", options.train_size, ", ",
                             options.valid_size, ", ", options.test_size));
  Generator gen(options.seed);
  ToyCorpus corpus;
  std::unordered_set<std::string> sources;                    // every French sentence so far
  std::unordered_map<std::string, const void*> target_split;  // English sentence -> its split
  const std::pair<std::vector<SentencePair>*, int64_t> splits[] = {
      {&corpus.train, options.train_size}, {&corpus.valid, options.valid_size}, {&corpus.test, options.test_size}};
  for (const auto& [split, size] : splits) {
    // Far more sentences exist than any sensible corpus asks for; the cap only stops a
    // request for more than the grammar can say from looping forever.
    const int64_t max_attempts = 100 * size + 1000;
    int64_t attempts = 0;
    while (static_cast<int64_t>(split->size()) < size) {
      if (++attempts > max_attempts)
        throw ValueError(message("make_toy_corpus: could not find ", size, " new sentences for a split"));
      SentencePair pair = sample_toy_pair(gen);
      std::string source = join_words(pair.source), target = join_words(pair.target);
      auto [it, unseen_target] = target_split.emplace(target, split);
      if (sources.count(source) || (!unseen_target && it->second != split)) continue;
      sources.insert(std::move(source));
      split->push_back(std::move(pair));
    }
  }
  return corpus;
}

std::vector<std::string> write_toy_corpus(const ToyCorpus& corpus, const std::string& directory) {
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) throw DataError(message(directory, ": cannot create directory: ", error.message()));
  std::vector<std::string> paths;
  for (const auto& [name, pairs] :
       {std::pair{"train", &corpus.train}, {"valid", &corpus.valid}, {"test", &corpus.test}}) {
    const std::string path = (std::filesystem::path(directory) / (std::string("toy-fr-en.") + name + ".tsv")).string();
    write_tsv(path, *pairs);
    paths.push_back(path);
  }
  return paths;
}

}  // namespace gradformer
