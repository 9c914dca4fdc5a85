#include "transformer/data/pre_tokenize.h"

#include <array>
#include <cstdio>

namespace gradformer {

namespace {

/// The length of the contraction ending at text[i] ("'s", "'ll", ...), or 0 if none starts there.
size_t contraction_length(std::string_view text, size_t i) {
  static const std::array<std::string_view, 7> endings = {"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"};
  for (const std::string_view ending : endings) {
    if (text.substr(i, ending.size()) == ending) return ending.size();
  }
  return 0;
}

/// The length of ' ?X+' at text[i] for class X: an optional space, then one or more of X; 0 if
/// it does not match.
size_t run_length(std::string_view text, size_t i, CharacterClass run_class) {
  const auto is_run = [&](size_t k) { return k < text.size() && character_class(text[k]) == run_class; };
  size_t end = i;
  if (text[end] == ' ' && is_run(end + 1)) ++end;
  if (!is_run(end)) return 0;
  while (is_run(end)) ++end;
  return end - i;
}

/// The length of '\s+(?!\S)|\s+' at text[i], a whitespace character. The first takes the run of
/// whitespace less its last character when a non-space follows (the space before a word stays with
/// the word); a single whitespace character before a non-space is left to the second.
size_t space_length(std::string_view text, size_t i) {
  size_t end = i;
  while (end < text.size() && character_class(text[end]) == CharacterClass::Space) ++end;
  if (end == text.size()) return end - i;  // \s+ at the end of the text: (?!\S) holds
  if (end - i >= 2) return end - i - 1;    // \s+(?!\S), backing off one: a space follows
  return 1;                                // \s+
}

}  // namespace

CharacterClass character_class(char32_t code_point) {
  if (code_point >= 0x80) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "U+%04X", static_cast<unsigned>(code_point));
    throw ValueError(message("character_class: ", hex, " is outside ASCII; only ASCII is classified so far"));
  }
  if ((code_point >= 'a' && code_point <= 'z') || (code_point >= 'A' && code_point <= 'Z')) {
    return CharacterClass::Letter;
  }
  if (code_point >= '0' && code_point <= '9') return CharacterClass::Number;
  if (code_point == ' ' || (code_point >= '\t' && code_point <= '\r')) return CharacterClass::Space;
  return CharacterClass::Other;
}

std::vector<std::string> gpt2_pre_tokens(std::string_view text) {
  for (size_t i = 0; i < text.size(); ++i) {
    if (static_cast<unsigned char>(text[i]) >= 0x80) {
      throw ValueError(message("gpt2_pre_tokens: byte ", static_cast<int>(static_cast<unsigned char>(text[i])),
                               " at offset ", i, " is outside ASCII; only ASCII text is pre-tokenized so far"));
    }
  }
  std::vector<std::string> pieces;
  size_t i = 0;
  while (i < text.size()) {
    // The alternatives in the pattern's order; the first that matches wins.
    size_t length = contraction_length(text, i);
    for (const CharacterClass run_class : {CharacterClass::Letter, CharacterClass::Number, CharacterClass::Other}) {
      if (length == 0) length = run_length(text, i, run_class);
    }
    if (length == 0) length = space_length(text, i);  // every character is in one of the classes
    pieces.emplace_back(text.substr(i, length));
    i += length;
  }
  return pieces;
}

}  // namespace gradformer
