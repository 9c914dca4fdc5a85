#include "transformer/data/toy_lexicon.h"

namespace gradformer {
namespace {

using enum Gender;

// Regular -er verbs: stem + e, es, e, ons, ez, ent ("manger" keeps its e before -ons: mangeons).
ToyVerb er_verb(const std::string& stem, const std::string& en_base, const std::string& en_third_person) {
  const std::string nous_stem = stem.back() == 'g' ? stem + "e" : stem;
  return {
      {stem + "e", stem + "es", stem + "e", nous_stem + "ons", stem + "ez", stem + "ent"}, en_base, en_third_person};
}

// Adjectives whose feminine adds -e and plural adds -s ("vert verte verts vertes"), or that
// already end in -e and only take -s ("rouge rouge rouges rouges").
ToyAdjective regular(const std::string& masculine, const std::string& en, bool before_noun = false) {
  const std::string feminine = masculine.back() == 'e' ? masculine : masculine + "e";
  return {{masculine, feminine, masculine + "s", feminine + "s"}, en, before_noun};
}

ToyLexicon build() {
  ToyLexicon lexicon;
  lexicon.copula = {{"suis", "es", "est", "sommes", "êtes", "sont"}, {"am", "are", "is", "are", "are", "are"}};
  lexicon.nouns = {
      // animate: subjects and objects
      {"chat", "chats", masculine, "cat", "cats", true},
      {"chien", "chiens", masculine, "dog", "dogs", true},
      {"garçon", "garçons", masculine, "boy", "boys", true},
      {"cheval", "chevaux", masculine, "horse", "horses", true},
      {"professeur", "professeurs", masculine, "teacher", "teachers", true},
      {"frère", "frères", masculine, "brother", "brothers", true},
      {"hibou", "hiboux", masculine, "owl", "owls", true},
      {"fille", "filles", feminine, "girl", "girls", true},
      {"femme", "femmes", feminine, "woman", "women", true},
      {"souris", "souris", feminine, "mouse", "mice", true},
      {"sœur", "sœurs", feminine, "sister", "sisters", true},
      {"vache", "vaches", feminine, "cow", "cows", true},
      {"poule", "poules", feminine, "hen", "hens", true},
      {"fourmi", "fourmis", feminine, "ant", "ants", true},
      // inanimate: objects only
      {"livre", "livres", masculine, "book", "books", false},
      {"gâteau", "gâteaux", masculine, "cake", "cakes", false},
      {"stylo", "stylos", masculine, "pen", "pens", false},
      {"vélo", "vélos", masculine, "bike", "bikes", false},
      {"ballon", "ballons", masculine, "ball", "balls", false},
      {"chapeau", "chapeaux", masculine, "hat", "hats", false},
      {"parapluie", "parapluies", masculine, "umbrella", "umbrellas", false},
      {"pomme", "pommes", feminine, "apple", "apples", false},
      {"maison", "maisons", feminine, "house", "houses", false},
      {"voiture", "voitures", feminine, "car", "cars", false},
      {"table", "tables", feminine, "table", "tables", false},
      {"fleur", "fleurs", feminine, "flower", "flowers", false},
      {"lettre", "lettres", feminine, "letter", "letters", false},
      {"chaise", "chaises", feminine, "chair", "chairs", false},
      {"robe", "robes", feminine, "dress", "dresses", false},
  };
  lexicon.adjectives = {
      // before the noun in French, as in English: "le petit chat" -> "the small cat"
      regular("petit", "small", true),
      regular("grand", "big", true),
      regular("jeune", "young", true),
      {{"vieux", "vieille", "vieux", "vieilles"}, "old", true},
      // after the noun in French, before it in English: "le chat noir" -> "the black cat"
      regular("noir", "black"),
      {{"blanc", "blanche", "blancs", "blanches"}, "white", false},
      regular("vert", "green"),
      regular("bleu", "blue"),
      regular("rouge", "red"),
      regular("jaune", "yellow"),
      {{"gris", "grise", "gris", "grises"}, "grey", false},
      {{"orange", "orange", "orange", "orange"}, "orange", false},  // invariable
      regular("lourd", "heavy"),
      regular("rapide", "fast"),
      regular("content", "glad"),
      {{"heureux", "heureuse", "heureux", "heureuses"}, "happy", false},
  };
  lexicon.verbs = {
      er_verb("mang", "eat", "eats"),
      er_verb("regard", "watch", "watches"),
      er_verb("cherch", "look for", "looks for"),
      er_verb("trouv", "find", "finds"),
      er_verb("port", "carry", "carries"),
      er_verb("lav", "wash", "washes"),
      er_verb("gard", "keep", "keeps"),
      er_verb("dessin", "draw", "draws"),
      er_verb("cach", "hide", "hides"),
      er_verb("pouss", "push", "pushes"),
      er_verb("touch", "touch", "touches"),
      er_verb("visit", "visit", "visits"),
  };
  lexicon.pronouns = {
      {"je", "i", 0},    {"tu", "you", 1},   {"il", "he", 2},    {"elle", "she", 2},
      {"nous", "we", 3}, {"vous", "you", 4}, {"ils", "they", 5}, {"elles", "they", 5},
  };
  return lexicon;
}

}  // namespace

const ToyLexicon& toy_lexicon() {
  static const ToyLexicon lexicon = build();
  return lexicon;
}

}  // namespace gradformer
