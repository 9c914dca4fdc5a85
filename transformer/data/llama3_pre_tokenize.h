// The pre-tokenizers of Llama 3 and Qwen2: the Split step of their tokenizer.json files, a regular
// expression whose matches become the pieces merges never cross, written by hand (no regular-
// expression library) for any UTF-8 text. Llama 3's pattern, as its tokenizer.json writes it:
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
// Qwen2's is the same with \p{N} in place of \p{N}{1,3}. At each place the alternatives are tried in
// this order and the first that matches wins, as a backtracking regex engine does:
//   (?i:'s|...|'d)          an English contraction's ending, in either case ("'T", "'LL")
//   [^\r\n\p{L}\p{N}]?\p{L}+  a run of letters, with one character before it that is neither a line
//                           end, a letter nor a digit: a space, a tab, punctuation ("!abc", " abc")
//   \p{N}{1,3}              up to three digits: "1234567" is 123|456|7 (Qwen2: one digit a piece)
//   ' ?[^\s\p{L}\p{N}]+[\r\n]*'  punctuation with its space and the line ends after it
//   \s*[\r\n]+              whitespace up to and with its last line end (greedy \s*, backing off)
//   \s+(?!\S)               whitespace not followed by a non-space: of "   x" it takes "  "
//   \s+                     any other whitespace
// Every character starts a match of some alternative, so the matches are the whole text: Split's
// "Isolated" behaviour then gives exactly them. The classes \p{L}, \p{N} and \s are
// pre_tokenize.h's (character_class). Case-insensitivity is ASCII's: the few non-ASCII characters
// Unicode folds to s, t, ... (U+017F long s) are not read as the letters they fold to.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gradformer {

/// Llama 3's pattern and Qwen2's, exactly as their tokenizer.json files hold them (JSON unescaped).
inline constexpr std::string_view kLlama3SplitPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
inline constexpr std::string_view kQwen2SplitPattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

/// The UTF-8 text cut by Llama 3's pattern: non-empty pieces of whole characters whose concatenation
/// is the text. ValueError naming the offset of the first byte that is not UTF-8.
std::vector<std::string> llama3_pre_tokens(std::string_view text);
/// The same by Qwen2's pattern.
std::vector<std::string> qwen2_pre_tokens(std::string_view text);

}  // namespace gradformer
