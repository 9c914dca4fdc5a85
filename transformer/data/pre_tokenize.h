// GPT-2's pre-tokenization: before any merge, a text is cut into pieces that merges never cross,
// by the pattern of OpenAI's encoder.py, tried at each place in this order, the first that matches
// winning:
//   's|'t|'re|'ve|'m|'ll|'d            an English contraction's ending
//   ' ?\p{L}+'  ' ?\p{N}+'             a run of letters, or of digits, with the space before it
//   ' ?[^\s\p{L}\p{N}]+'               a run of other characters (punctuation), with its space
//   \s+(?!\S)                          a run of whitespace not followed by a non-space: so of
//                                      "   x" it takes "  " and leaves " x" for the word
//   \s+                                any other run of whitespace ("\n" before a word)
// Written by hand, no regular-expression library, for any UTF-8 text: "any character" above means
// any code point, and the classes are those Python's regex module (which encoder.py runs the
// pattern with) gives every code point 0..U+10FFFF, in the generated table unicode_classes.h:
//   \p{L}  letters, the general categories Lu Ll Lt Lm Lo ("é", "日", "ㅎ", "ß")
//   \p{N}  numbers, Nd Nl No ("٣" Arabic-Indic three, "Ⅻ" Roman twelve, "½", "²")
//   \s     whitespace: tab, newline, vertical tab, form feed, return, space, U+0085, U+00A0 (no-break
//          space), U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000; not U+001C..U+001F
//          (which Python's str.isspace() counts), nor U+180E or U+200B (zero-width space)
//   Other  the rest: punctuation, symbols, emoji, combining marks, control and format characters
// Only U+0020 is the optional space before a word, and the contractions are ASCII and lower case:
// "'S" is punctuation then a letter. So " 日本" is one pre-token, "\u3000日本" two.
//
// Tested: the classes of all of Unicode (checked against the regex module on
// sample code points and, through tests/transformer/data/gpt2_reference/, on texts in many scripts
// and emoji), invalid UTF-8 refused with the offending byte and offset (utf8.h says what UTF-8 is).
// The table follows the regex module that wrote it (Unicode 17.0.0); a text whose characters a newer
// Unicode version classifies differently could split differently from a newer regex module.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tensor/support/error.h"

namespace gradformer {

/// The four classes GPT-2's pattern tells apart.
enum class CharacterClass { Letter, Number, Space, Other };

/// The class of a code point as GPT-2's pattern sees it (see above); any char32_t, a value above
/// U+10FFFF being Other. ASCII is a table lookup, the rest a binary search of the generated ranges.
CharacterClass character_class(char32_t code_point);

/// One character of a UTF-8 text at a byte offset: its code point, its class and its length in bytes.
struct Character {
  char32_t code_point = 0;
  CharacterClass character_class = CharacterClass::Other;
  size_t length = 0;
};

/// The character at text[i] (i < text.size()); ValueError "OPERATION: not UTF-8 at offset N ..." if
/// the bytes there are not UTF-8. The scanners below read a text through it, for this pattern and
/// for Llama 3's (llama3_pre_tokenize.h).
Character character_at(std::string_view text, size_t i, const char* operation);

/// Where the run of characters of class `run_class` starting at text[i] ends (i itself if none is).
size_t run_end(std::string_view text, size_t i, CharacterClass run_class, const char* operation);

/// The run of whitespace starting at text[i], as the patterns' whitespace alternatives need it:
/// where it ends, where its last character starts, how many characters it holds, and where its last
/// line end (\r or \n) ends (i when it holds none).
struct SpaceRun {
  size_t end = 0, last_start = 0, after_line_end = 0;
  int count = 0;
};
SpaceRun space_run(std::string_view text, size_t i, const char* operation);

/// The UTF-8 text cut into GPT-2's pre-tokens, each a non-empty string of whole characters; their
/// concatenation is the text. ValueError "gpt2_pre_tokens: not UTF-8 at offset N: byte 0xXX ..."
/// for a text that Python's strict UTF-8 decoder refuses (utf8.h), naming the first bad byte.
std::vector<std::string> gpt2_pre_tokens(std::string_view text);

}  // namespace gradformer
