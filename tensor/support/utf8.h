// UTF-8 checked strictly, for every reader of text a user hands us: JSON headers, vocabularies,
// corpora. One validator, so "valid" means the same everywhere; and text made safe to print.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gradformer {

/// One character of UTF-8 text: its code point and how many bytes it takes (1 to 4).
struct Utf8Char {
  uint32_t code_point;
  size_t length;
};

/// The character starting at byte `at` of `text`, or nullopt if the bytes there do not start a valid
/// one: shortest forms only, no surrogates, nothing past U+10FFFF. `at` must be < text.size().
std::optional<Utf8Char> utf8_char_at(std::string_view text, size_t at);

/// The byte offset of the first byte that does not start a valid UTF-8 character, or nullopt if
/// the whole text is valid.
std::optional<size_t> invalid_utf8_at(std::string_view text);

/// `text` as it is safe to show on a terminal: what a terminal would act on, hide or cut written as
/// an escape: NUL as \0, a carriage return as \r, other control bytes and bytes that are not UTF-8 as
/// \xNN, and the invisible characters that reorder or hide text (the byte order mark U+FEFF, zero-width
/// and direction marks, C1 controls, line and paragraph separators, tags) as \u{XXXX}. Line ends, tabs
/// and every visible character, in any script, are kept, and so is a backslash: escaping twice changes
/// nothing, so text that already spells "\x1B" reads as an escape too.
std::string printable(std::string_view text);

}  // namespace gradformer
