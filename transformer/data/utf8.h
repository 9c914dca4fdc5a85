// UTF-8, read strictly: the bytes of a text become code points, and bytes that are not UTF-8 are
// either an error or replaced, exactly as Python does (bytes.decode('utf-8') and
// bytes.decode('utf-8', errors='replace')).
//
// A code point is 1 to 4 bytes. Well-formed UTF-8 is exactly these byte sequences (the Unicode
// Standard, table 3-7); nothing else is:
//   U+0000..U+007F      00..7F
//   U+0080..U+07FF      C2..DF  80..BF
//   U+0800..U+0FFF      E0      A0..BF  80..BF
//   U+1000..U+CFFF      E1..EC  80..BF  80..BF
//   U+D000..U+D7FF      ED      80..9F  80..BF
//   U+E000..U+FFFF      EE..EF  80..BF  80..BF
//   U+10000..U+3FFFF    F0      90..BF  80..BF  80..BF
//   U+40000..U+FFFFF    F1..F3  80..BF  80..BF  80..BF
//   U+100000..U+10FFFF  F4      80..8F  80..BF  80..BF
// So these are not UTF-8: a continuation byte 80..BF where a character should start; C0, C1 and
// F5..FF anywhere; a sequence cut short by a byte that does not fit or by the end of the text; an
// overlong form (C0 80 or E0 80 80 for U+0000, a longer form than the code point needs); a surrogate
// U+D800..U+DFFF (ED A0 80 ...); a code point above U+10FFFF (F4 90 80 80 ...).
//
// Which bytes are UTF-8 is the same here as for every other reader of the library, which asks
// tensor/support/utf8.h's invalid_utf8_at (the tests and fuzz_bpe check that the two agree byte for byte);
// this unit adds what a validator does not give: the code points, the length of each invalid part,
// what is wrong with it, and the replacement Python makes.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gradformer {

/// What the bytes at an offset hold: one code point and its length in bytes (valid), or, when
/// they are not UTF-8 (not valid), the length of the maximal invalid subpart: the longest start of
/// a well-formed sequence found there, at least one byte. Python's decoder replaces each maximal
/// invalid subpart by one U+FFFD, so E0 80 80 is three of them (E0 cannot be followed by 80) and
/// F0 9F 98 followed by "x" is one (a 4-byte sequence cut short after 3).
struct Utf8Step {
  char32_t code_point;  // 0 when not valid
  size_t length;
  bool valid;
};

/// Reads bytes[offset...] (offset < bytes.size()).
Utf8Step read_utf8(std::string_view bytes, size_t offset);

/// The code point at bytes[offset] and its length. ValueError
/// "<operation>: not UTF-8: byte 0xE9 at offset 3 ..." naming the byte that starts the invalid
/// sequence, its offset and what is wrong, when the bytes there are not UTF-8.
Utf8Step decode_utf8(std::string_view bytes, size_t offset, std::string_view operation);

/// Appends the UTF-8 bytes of a code point (at most U+10FFFF, not a surrogate; ValueError else).
void append_utf8(std::string& out, char32_t code_point);

/// Python's bytes.decode('utf-8', errors='replace'), encoded as UTF-8 again: the bytes with each
/// maximal invalid subpart replaced by U+FFFD (EF BF BD). UTF-8 in, the same bytes out.
std::string utf8_replace_invalid(std::string_view bytes);

}  // namespace gradformer
