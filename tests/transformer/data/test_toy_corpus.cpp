#include <filesystem>
#include <map>
#include <set>

#include "catch.h"
#include "transformer/data/toy_corpus.h"
#include "transformer/data/toy_lexicon.h"
#include "transformer/data/vocab.h"

using namespace gradformer;

namespace {

const ToyCorpus& corpus() {
  static const ToyCorpus c = make_toy_corpus();
  return c;
}

std::vector<const SentencePair*> all_pairs() {
  std::vector<const SentencePair*> pairs;
  for (const auto* split : {&corpus().train, &corpus().valid, &corpus().test})
    for (const SentencePair& p : *split) pairs.push_back(&p);
  return pairs;
}

std::set<std::string> sentences(const std::vector<SentencePair>& split, bool source) {
  std::set<std::string> out;
  for (const SentencePair& p : split) out.insert(join_words(source ? p.source : p.target));
  return out;
}

bool disjoint(const std::set<std::string>& a, const std::set<std::string>& b) {
  for (const std::string& s : a)
    if (b.count(s)) return false;
  return true;
}

int count(const std::vector<std::string>& words, const std::string& word) {
  return static_cast<int>(std::count(words.begin(), words.end(), word));
}

}  // namespace

TEST_CASE("toy corpus has the promised split sizes and short sentences") {
  CHECK(corpus().train.size() == 10000);
  CHECK(corpus().valid.size() == 1000);
  CHECK(corpus().test.size() == 1000);
  for (const SentencePair* p : all_pairs()) {
    CHECK(p->source.size() <= 12);
    CHECK(p->target.size() <= 13);
    CHECK(p->source.back() == ".");
    CHECK(p->target.back() == ".");
  }
}

TEST_CASE("toy corpus splits share no sentence on either side") {
  const std::vector<SentencePair>* splits[] = {&corpus().train, &corpus().valid, &corpus().test};
  for (int side = 0; side < 2; ++side)
    for (int a = 0; a < 3; ++a)
      for (int b = a + 1; b < 3; ++b) CHECK(disjoint(sentences(*splits[a], side), sentences(*splits[b], side)));
  // no French sentence twice, even within a split
  for (const auto* split : splits) CHECK(sentences(*split, true).size() == split->size());
}

TEST_CASE("toy corpus is deterministic for a seed") {
  const ToyCorpusOptions small{.train_size = 200, .valid_size = 20, .test_size = 20, .seed = 9};
  const ToyCorpus a = make_toy_corpus(small), b = make_toy_corpus(small);
  CHECK(a.train == b.train);
  CHECK(a.test == b.test);
  CHECK(make_toy_corpus({.train_size = 200, .valid_size = 20, .test_size = 20, .seed = 10}).train != a.train);
  CHECK(make_toy_corpus().train == corpus().train);
  CHECK_THROWS_MSG(make_toy_corpus({.train_size = -1}), ValueError, "must not be negative");
}

TEST_CASE("toy corpus vocabularies are small") {
  std::vector<std::vector<std::string>> french, english;
  for (const SentencePair& p : corpus().train) french.push_back(p.source), english.push_back(p.target);
  const int64_t fr = Vocab::build(french).size() - 4, en = Vocab::build(english).size() - 4;
  CHECK(fr >= 100);
  CHECK(fr <= 200);
  CHECK(en >= 80);
  CHECK(en <= 200);
}

TEST_CASE("toy corpus negation is ne verb pas in French and not in English") {
  int negatives = 0;
  for (const SentencePair* p : all_pairs()) {
    const auto& fr = p->source;
    const auto ne = std::find_if(fr.begin(), fr.end(), [](const std::string& w) { return w == "ne" || w == "n'"; });
    const bool negative = ne != fr.end();
    CHECK(count(fr, "ne") + count(fr, "n'") == count(fr, "pas"));
    CHECK(count(p->target, "not") == (negative ? 1 : 0));
    if (negative) {
      ++negatives;
      REQUIRE(ne + 2 < fr.end());
      CHECK(*(ne + 2) == "pas");  // ne <verb> pas
      // ne elides to n' exactly before a vowel: "il n' est pas", "je ne suis pas"
      const bool vowel =
          std::string("aeiou").find((ne + 1)->front()) != std::string::npos || (ne + 1)->rfind("ê", 0) == 0;
      CHECK(*ne == (vowel ? "n'" : "ne"));
      // an indefinite object after "pas" is "de", never un/une/des
      CHECK(*(ne + 3) != "un");
      CHECK(*(ne + 3) != "une");
      CHECK(*(ne + 3) != "des");
      const auto no = std::find(p->target.begin(), p->target.end(), "not");
      const bool copular = *(no - 1) == "am" || *(no - 1) == "is" || *(no - 1) == "are";  // to be: no do-support
      CHECK((*(no - 1) == "does" || *(no - 1) == "do" || copular));
      // "pas de souris" hides the number, so the grammar never means "any mice" by it
      CHECK(join_words(p->target).find("any mice") == std::string::npos);
    }
  }
  CHECK(negatives > 2000);
}

TEST_CASE("toy corpus articles and adjectives agree with the noun") {
  const ToyLexicon& lex = toy_lexicon();
  std::map<std::string, std::pair<const ToyNoun*, int>> nouns;  // word -> noun, 0 singular / 1 plural / 2 either
  for (const ToyNoun& n : lex.nouns) {
    nouns[n.fr_singular] = {&n, n.fr_singular == n.fr_plural ? 2 : 0};
    if (n.fr_plural != n.fr_singular) nouns[n.fr_plural] = {&n, 1};
  }
  std::map<std::string, const ToyAdjective*> adjectives;
  for (const ToyAdjective& a : lex.adjectives)
    for (const std::string& form : a.fr) adjectives[form] = &a;
  const std::map<std::string, std::pair<int, int>> articles = {// gender (-1 any), number (-1 any)
                                                               {"le", {0, 0}},  {"la", {1, 0}},  {"les", {-1, 1}},
                                                               {"un", {0, 0}},  {"une", {1, 0}}, {"des", {-1, 1}},
                                                               {"de", {-1, -1}}};
  int noun_phrases = 0, after_adjectives = 0;
  for (const SentencePair* p : all_pairs()) {
    const auto& fr = p->source;
    for (size_t i = 0; i < fr.size(); ++i) {
      const auto found = nouns.find(fr[i]);
      if (found == nouns.end()) continue;
      ++noun_phrases;
      const ToyNoun& noun = *found->second.first;
      const int gender = noun.gender == Gender::feminine ? 1 : 0;
      size_t article = i - 1;
      const auto check_adjective = [&](const std::string& word, bool before) {
        const ToyAdjective& adjective = *adjectives.at(word);
        CHECK(adjective.before_noun == before);
        for (int plural = 0; plural < 2; ++plural)
          if (found->second.second == plural)
            CHECK(word == adjective.fr[ToyAdjective::form_index(noun.gender, plural)]);
      };
      if (adjectives.count(fr[article])) check_adjective(fr[article--], true);
      const auto& [article_gender, article_number] = articles.at(fr[article]);
      if (article_gender >= 0) CHECK(article_gender == gender);
      if (article_number >= 0 && found->second.second != 2) CHECK(article_number == found->second.second);
      if (i + 1 < fr.size() && adjectives.count(fr[i + 1])) {
        check_adjective(fr[i + 1], false);
        // ... and in English the adjective comes right before the noun
        const std::string& en_noun = found->second.second == 1 ? noun.en_plural : noun.en_singular;
        const std::string& en_adjective = adjectives.at(fr[i + 1])->en;
        bool adjacent = false;
        for (size_t j = 0; j + 1 < p->target.size(); ++j)
          adjacent |=
              p->target[j] == en_adjective && (p->target[j + 1] == en_noun || p->target[j + 1] == noun.en_plural);
        CHECK(adjacent);
        ++after_adjectives;
      }
    }
  }
  CHECK(noun_phrases > 18000);
  CHECK(after_adjectives > 3000);
}

TEST_CASE("toy corpus verbs agree with the subject in both languages") {
  const ToyLexicon& lex = toy_lexicon();
  for (const SentencePair* p : all_pairs()) {
    const auto& fr = p->source;
    if (std::any_of(fr.begin(), fr.end(), [&](const std::string& w) {
          return std::find(lex.copula.fr.begin(), lex.copula.fr.end(), w) != lex.copula.fr.end();
        }))
      continue;  // être: the next test
    // find the verb: the first word that is a form of some verb
    for (size_t i = 0; i < fr.size(); ++i) {
      for (const ToyVerb& verb : lex.verbs) {
        const auto form = std::find(verb.fr.begin(), verb.fr.end(), fr[i]);
        if (form == verb.fr.end()) continue;
        const auto pronoun = std::find_if(lex.pronouns.begin(), lex.pronouns.end(),
                                          [&](const ToyPronoun& pr) { return pr.fr == fr[0]; });
        const bool plural_subject = fr[0] == "les" || fr[0] == "des" || fr[0] == "de";
        const int person = pronoun != lex.pronouns.end() ? pronoun->person : plural_subject ? 5 : 2;
        CHECK(fr[i] == verb.fr[static_cast<size_t>(person)]);  // je mange, nous mangeons, ils mangent
        if (pronoun != lex.pronouns.end()) CHECK(p->target[0] == pronoun->en);
        const bool third_singular = person == 2;
        const auto& en = p->target;
        if (fr[i - 1] == "ne")
          CHECK(count(en, third_singular ? "does" : "do") == 1);  // he does not eat, they do not eat
        else
          CHECK(count(en, split_words(third_singular ? verb.en_third_person : verb.en_base)[0]) >= 1);
        goto next_pair;
      }
    }
    FAIL("no verb in: " << join_words(fr));
  next_pair:;
  }
}

TEST_CASE("toy corpus copular clauses: être agrees with the subject, the adjective with its gender and number") {
  const ToyLexicon& lex = toy_lexicon();
  const std::map<std::string, std::pair<int, std::string>> pronouns = {
      // person, gender ("" when free)
      {"je", {0, ""}},   {"tu", {1, ""}},   {"il", {2, "m"}},  {"elle", {2, "f"}},
      {"nous", {3, ""}}, {"vous", {4, ""}}, {"ils", {5, "m"}}, {"elles", {5, "f"}}};
  int copular = 0;
  for (const SentencePair* p : all_pairs()) {
    const auto& fr = p->source;
    const auto etre = std::find_if(fr.begin(), fr.end(), [&](const std::string& w) {
      return std::find(lex.copula.fr.begin(), lex.copula.fr.end(), w) != lex.copula.fr.end();
    });
    if (etre == fr.end()) continue;
    ++copular;
    const auto person =
        static_cast<size_t>(std::find(lex.copula.fr.begin(), lex.copula.fr.end(), *etre) - lex.copula.fr.begin());
    const std::string& adjective = *(fr.end() - 2);  // ... heureuse .
    const auto is = std::find(p->target.begin(), p->target.end(), lex.copula.en[person]);
    REQUIRE(is != p->target.end());  // je suis -> i am, il est -> he is, nous sommes -> we are
    const auto pronoun = pronouns.find(fr[0]);
    if (pronoun != pronouns.end()) {
      CHECK(pronoun->second.first == static_cast<int>(person));
      CHECK(p->target[0] ==
            (fr[0] == "tu" || fr[0] == "vous"
                 ? "you"
                 : lex.pronouns[static_cast<size_t>(std::find_if(lex.pronouns.begin(), lex.pronouns.end(),
                                                                 [&](const ToyPronoun& x) { return x.fr == fr[0]; }) -
                                                    lex.pronouns.begin())]
                       .en));
    } else {
      CHECK((person == 2 || person == 5));  // a noun phrase subject: il/elle or ils/elles
    }
    // The adjective's form: feminine for elle(s) and feminine nouns; plural from nous on.
    bool matched = false;
    for (const ToyAdjective& a : lex.adjectives)
      for (int gender = 0; gender < 2; ++gender)
        if (adjective == a.fr[ToyAdjective::form_index(gender ? Gender::feminine : Gender::masculine, person >= 3)]) {
          matched = true;
          CHECK(*(p->target.end() - 2) == a.en);
          if (pronoun != pronouns.end() && pronoun->second.second == "m")
            CHECK(adjective == a.fr[ToyAdjective::form_index(Gender::masculine, person >= 3)]);
          if (pronoun != pronouns.end() && pronoun->second.second == "f")
            CHECK(adjective == a.fr[ToyAdjective::form_index(Gender::feminine, person >= 3)]);
        }
    CHECK(matched);
  }
  CHECK(copular > 1500);
}

TEST_CASE("toy corpus says je suis heureux as i am happy") {
  // The sentence the Transformer is usually first shown translating, and its agreement.
  Generator gen(1);
  std::map<std::string, std::string> seen;
  for (int i = 0; i < 200000; ++i) {
    const SentencePair pair = sample_toy_pair(gen);
    seen.emplace(join_words(pair.source), join_words(pair.target));
  }
  CHECK(seen.at("je suis heureux .") == "i am happy .");
  CHECK(seen.at("je suis heureuse .") == "i am happy .");
  CHECK(seen.at("elle est heureuse .") == "she is happy .");
  CHECK(seen.at("il n' est pas heureux .") == "he is not happy .");
  CHECK(seen.at("nous sommes heureux .") == "we are happy .");
  CHECK(seen.at("les chats sont contents .") == "the cats are glad .");
}

TEST_CASE("toy corpus English picks a or an by the next word") {
  int an = 0;
  for (const SentencePair* p : all_pairs()) {
    const auto& en = p->target;
    for (size_t i = 0; i + 1 < en.size(); ++i) {
      const bool vowel = std::string("aeiou").find(en[i + 1][0]) != std::string::npos;
      if (en[i] == "a") CHECK(!vowel);
      if (en[i] == "an") {
        CHECK(vowel);
        ++an;
      }
    }
  }
  CHECK(an > 200);
}

TEST_CASE("toy corpus writes three TSV files that read back unchanged") {
  const ToyCorpus small = make_toy_corpus({.train_size = 50, .valid_size = 5, .test_size = 5});
  const auto dir = std::filesystem::temp_directory_path() / "gradformer_test_toy_corpus";
  std::filesystem::remove_all(dir);
  const auto paths = write_toy_corpus(small, dir.string());
  REQUIRE(paths.size() == 3);
  CHECK(std::filesystem::path(paths[0]).filename() == "toy-fr-en.train.tsv");
  CHECK(std::filesystem::path(paths[1]).filename() == "toy-fr-en.valid.tsv");
  CHECK(std::filesystem::path(paths[2]).filename() == "toy-fr-en.test.tsv");
  CHECK(read_tsv(paths[0]) == small.train);
  CHECK(read_tsv(paths[1]) == small.valid);
  CHECK(read_tsv(paths[2], 12) == small.test);
  std::filesystem::remove_all(dir);
}

TEST_CASE("toy grammar translates each French sentence one way only") {
  // If two meanings shared a French spelling (as "pas de souris" could), the model could not
  // learn which English to write, and BLEU would stop short of 100 for no fault of its own.
  Generator gen(123);
  std::map<std::string, std::string> translation;
  for (int i = 0; i < 100000; ++i) {
    const SentencePair pair = sample_toy_pair(gen);
    const auto [it, inserted] = translation.emplace(join_words(pair.source), join_words(pair.target));
    if (!inserted && it->second != join_words(pair.target))
      FAIL(it->first << " -> " << it->second << " and " << join_words(pair.target));
  }
  CHECK(translation.size() > 50000);
}
