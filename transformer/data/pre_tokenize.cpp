#include "transformer/data/pre_tokenize.h"

#include <algorithm>
#include <array>
#include <iterator>

#include "transformer/data/unicode_classes.h"
#include "transformer/data/utf8.h"

namespace gradformer {

namespace {

constexpr const char* kOperation = "gpt2_pre_tokens";

using unicode_classes::kClassRanges;

/// The class of a code point from the generated table: the range holding it, or Other if none.
constexpr CharacterClass table_class(char32_t code_point) {
  // The first range that starts after the code point; the one before it is the only candidate.
  const auto after = std::upper_bound(std::begin(kClassRanges), std::end(kClassRanges), code_point,
                                      [](char32_t c, const unicode_classes::Range& range) { return c < range.first; });
  if (after == std::begin(kClassRanges) || std::prev(after)->last < code_point) return CharacterClass::Other;
  return std::prev(after)->character_class;
}

/// The table is what the binary search needs: sorted, each range non-empty and before the next.
constexpr bool ranges_are_sorted() {
  for (size_t i = 0; i < std::size(kClassRanges); ++i) {
    if (kClassRanges[i].first > kClassRanges[i].last) return false;
    if (i > 0 && kClassRanges[i - 1].last >= kClassRanges[i].first) return false;
  }
  return kClassRanges[std::size(kClassRanges) - 1].last <= 0x10FFFF;
}
static_assert(ranges_are_sorted(), "unicode_classes.h: the ranges must be sorted and disjoint");

/// The fast path: the classes of the 128 ASCII code points, looked up in the same table once, when
/// compiled.
constexpr std::array<CharacterClass, 128> kAsciiClasses = [] {
  std::array<CharacterClass, 128> classes{};
  for (char32_t c = 0; c < 128; ++c) classes[c] = table_class(c);
  return classes;
}();

/// The length of the contraction ending at text[i] ("'s", "'ll", ...), or 0 if none starts there.
/// All ASCII, so comparing bytes at a character's start compares characters.
size_t contraction_length(std::string_view text, size_t i) {
  if (text[i] != '\'') return 0;
  static const std::array<std::string_view, 7> endings = {"'s", "'t", "'re", "'ve", "'m", "'ll", "'d"};
  for (const std::string_view ending : endings) {
    if (text.substr(i, ending.size()) == ending) return ending.size();
  }
  return 0;
}

/// The length in bytes of '\s+(?!\S)|\s+' at text[i], a whitespace character. The first takes the
/// run of whitespace less its last character when a non-space follows (the space before a word
/// stays with the word); a single whitespace character before a non-space is left to the second.
size_t space_length(std::string_view text, size_t i) {
  const SpaceRun run = space_run(text, i, kOperation);
  if (run.end == text.size()) return run.end - i;  // \s+ at the end of the text: (?!\S) holds
  if (run.count >= 2) return run.last_start - i;   // \s+(?!\S), backing off one character: a space follows
  return run.end - i;                              // \s+
}

/// The length in bytes of the pre-token starting at text[i]: the first alternative of the pattern
/// that matches there. As the classes do not overlap, at most one of ' ?\p{L}+', ' ?\p{N}+' and
/// ' ?[^\s\p{L}\p{N}]+' can match, and the class of the first character (or of the one after a
/// space) says which.
size_t pre_token_length(std::string_view text, size_t i) {
  if (const size_t contraction = contraction_length(text, i)) return contraction;
  if (text[i] == ' ' && i + 1 < text.size()) {
    const CharacterClass after_space = character_at(text, i + 1, kOperation).character_class;
    if (after_space != CharacterClass::Space) return 1 + run_end(text, i + 1, after_space, kOperation) - (i + 1);
  }
  const CharacterClass first = character_at(text, i, kOperation).character_class;
  if (first != CharacterClass::Space) return run_end(text, i, first, kOperation) - i;
  return space_length(text, i);
}

}  // namespace

CharacterClass character_class(char32_t code_point) {
  if (code_point < 128) return kAsciiClasses[code_point];
  return table_class(code_point);
}

Character character_at(std::string_view text, size_t i, const char* operation) {
  const auto byte = static_cast<unsigned char>(text[i]);
  if (byte < 0x80) return {byte, kAsciiClasses[byte], 1};
  const Utf8Step step = decode_utf8(text, i, operation);
  return {step.code_point, table_class(step.code_point), step.length};
}

size_t run_end(std::string_view text, size_t i, CharacterClass run_class, const char* operation) {
  while (i < text.size()) {
    const Character next = character_at(text, i, operation);
    if (next.character_class != run_class) break;
    i += next.length;
  }
  return i;
}

SpaceRun space_run(std::string_view text, size_t i, const char* operation) {
  SpaceRun run{.end = i, .last_start = i, .after_line_end = i};
  while (run.end < text.size()) {
    const Character next = character_at(text, run.end, operation);
    if (next.character_class != CharacterClass::Space) break;
    run.last_start = run.end;
    run.end += next.length;
    ++run.count;
    if (next.code_point == U'\r' || next.code_point == U'\n') run.after_line_end = run.end;
  }
  return run;
}

std::vector<std::string> gpt2_pre_tokens(std::string_view text) {
  std::vector<std::string> pieces;
  for (size_t i = 0; i < text.size();) {
    const size_t length = pre_token_length(text, i);
    pieces.emplace_back(text.substr(i, length));
    i += length;
  }
  return pieces;
}

}  // namespace gradformer
