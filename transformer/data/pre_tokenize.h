// GPT-2's pre-tokenization: before any merge, a text is cut into pieces that merges never cross,
// by the pattern of OpenAI's encoder.py, tried at each place in this order, the first that matches
// winning:
//   's|'t|'re|'ve|'m|'ll|'d            an English contraction's ending
//   ' ?\p{L}+'  ' ?\p{N}+'             a run of letters, or of digits, with the space before it
//   ' ?[^\s\p{L}\p{N}]+'               a run of other characters (punctuation), with its space
//   \s+(?!\S)                          a run of whitespace not followed by a non-space: so of
//                                      "   x" it takes "  " and leaves " x" for the word
//   \s+                                any other run of whitespace ("\n" before a word)
// Written by hand, no regular-expression library.
//
// STATUS: ASCII text only. What Unicode needs: the classes of every code point, \p{L} (letters:
// the general categories Lu Ll Lt Lm Lo), \p{N} (numbers: Nd Nl No) and \s (the White_Space
// property: U+0085, U+00A0, U+1680, U+2000..U+200A, U+2028, U+2029, U+202F, U+205F, U+3000 besides
// ASCII's tab, newline, vertical tab, form feed, return and space), as tables generated from the
// Unicode Character Database; then character_class() below reads them and nothing else changes.
// Until then a text holding a byte outside ASCII is a ValueError rather than a silently wrong split.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "tensor/error.h"

namespace gradformer {

/// The four classes GPT-2's pattern tells apart.
enum class CharacterClass { Letter, Number, Space, Other };

/// The class of an ASCII code point: A-Z a-z letters, 0-9 numbers, tab, newline, vertical tab,
/// form feed, return and space whitespace, everything else (punctuation, control characters)
/// other. ValueError for a code point outside ASCII (not yet classified).
CharacterClass character_class(char32_t code_point);

/// The text cut into GPT-2's pre-tokens; their concatenation is the text. ValueError for a text
/// that is not ASCII, naming the byte offset.
std::vector<std::string> gpt2_pre_tokens(std::string_view text);

}  // namespace gradformer
