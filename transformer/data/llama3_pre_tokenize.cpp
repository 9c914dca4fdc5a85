#include "transformer/data/llama3_pre_tokenize.h"

#include <array>

#include "transformer/data/pre_tokenize.h"

namespace gradformer {

namespace {

constexpr const char* kOperation = "llama3_pre_tokens";

Character character_at(std::string_view text, size_t i) { return gradformer::character_at(text, i, kOperation); }

size_t run_end(std::string_view text, size_t i, CharacterClass run_class) {
  return gradformer::run_end(text, i, run_class, kOperation);
}

bool is_line_end(char32_t c) { return c == U'\r' || c == U'\n'; }

char ascii_lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

// (?i:'s|'t|'re|'ve|'m|'ll|'d): the length of the contraction at text[i], or 0.
size_t contraction_length(std::string_view text, size_t i) {
  if (text[i] != '\'') return 0;
  static constexpr std::array<std::string_view, 7> endings = {"s", "t", "re", "ve", "m", "ll", "d"};
  for (const std::string_view ending : endings) {
    if (i + 1 + ending.size() > text.size()) continue;
    bool same = true;
    for (size_t k = 0; k < ending.size(); ++k) same = same && ascii_lower(text[i + 1 + k]) == ending[k];
    if (same) return 1 + ending.size();
  }
  return 0;
}

// [^\r\n\p{L}\p{N}]?\p{L}+: the optional character is tried first (the regex is greedy), so a
// character that is no letter, digit or line end joins the letters right after it.
size_t letters_length(std::string_view text, size_t i) {
  const Character first = character_at(text, i);
  size_t letters_start = i;
  if (first.character_class != CharacterClass::Letter) {
    if (first.character_class == CharacterClass::Number || is_line_end(first.code_point)) return 0;
    letters_start = i + first.length;
  }
  const size_t end = run_end(text, letters_start, CharacterClass::Letter);
  return end == letters_start ? 0 : end - i;
}

// \p{N}{1,3} (max_digits 3) or \p{N} (max_digits 1).
size_t digits_length(std::string_view text, size_t i, int max_digits) {
  size_t end = i;
  for (int count = 0; count < max_digits && end < text.size(); ++count) {
    const Character next = character_at(text, end);
    if (next.character_class != CharacterClass::Number) break;
    end += next.length;
  }
  return end - i;
}

//  ?[^\s\p{L}\p{N}]+[\r\n]*
size_t punctuation_length(std::string_view text, size_t i) {
  const size_t start = text[i] == ' ' ? i + 1 : i;
  const size_t end = run_end(text, start, CharacterClass::Other);
  if (end == start) return 0;
  size_t with_line_ends = end;
  while (with_line_ends < text.size() && (text[with_line_ends] == '\r' || text[with_line_ends] == '\n'))
    ++with_line_ends;
  return with_line_ends - i;
}

// \s*[\r\n]+|\s+(?!\S)|\s+ at a run of whitespace. \s* takes the whole run and backs off until a
// line end follows, so the first alternative ends just after the run's last line end. The second
// takes the run, less its last character when a non-space follows (nothing for a run of one).
size_t whitespace_length(std::string_view text, size_t i) {
  const SpaceRun run = space_run(text, i, kOperation);
  if (run.after_line_end > i) return run.after_line_end - i;        // \s*[\r\n]+
  if (run.end == text.size() || run.count < 2) return run.end - i;  // \s+(?!\S) to the text's end, or \s+
  return run.last_start - i;                                        // \s+(?!\S), backing off one character
}

/// The length of the match at text[i]: the first alternative that matches there.
size_t match_length(std::string_view text, size_t i, int max_digits) {
  if (const size_t n = contraction_length(text, i)) return n;
  if (const size_t n = letters_length(text, i)) return n;
  if (const size_t n = digits_length(text, i, max_digits)) return n;
  if (const size_t n = punctuation_length(text, i)) return n;
  return whitespace_length(text, i);
}

std::vector<std::string> split_by_pattern(std::string_view text, int max_digits) {
  std::vector<std::string> pieces;
  for (size_t i = 0; i < text.size();) {
    const size_t length = match_length(text, i, max_digits);
    pieces.emplace_back(text.substr(i, length));
    i += length;
  }
  return pieces;
}

}  // namespace

std::vector<std::string> llama3_pre_tokens(std::string_view text) { return split_by_pattern(text, 3); }

std::vector<std::string> qwen2_pre_tokens(std::string_view text) { return split_by_pattern(text, 1); }

}  // namespace gradformer
