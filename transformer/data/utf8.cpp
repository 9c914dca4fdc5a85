#include "transformer/data/utf8.h"

#include <cstdio>

#include "tensor/support/error.h"

namespace gradformer {

namespace {

/// How a byte starts a sequence: its length in bytes (0: no sequence starts with it) and the range
/// its second byte must be in. That range is 80..BF but after E0, ED, F0 and F4, where it is
/// narrower to rule out overlong forms, surrogates and code points above U+10FFFF (utf8.h's table).
struct Lead {
  size_t length;
  unsigned char second_low;
  unsigned char second_high;
};

Lead lead(unsigned char byte) {
  if (byte < 0x80) return {1, 0, 0};
  if (byte < 0xC2) return {0, 0, 0};  // a continuation byte, or C0 C1 (only overlong forms)
  if (byte < 0xE0) return {2, 0x80, 0xBF};
  if (byte == 0xE0) return {3, 0xA0, 0xBF};
  if (byte == 0xED) return {3, 0x80, 0x9F};
  if (byte < 0xF0) return {3, 0x80, 0xBF};
  if (byte == 0xF0) return {4, 0x90, 0xBF};
  if (byte < 0xF4) return {4, 0x80, 0xBF};
  if (byte == 0xF4) return {4, 0x80, 0x8F};
  return {0, 0, 0};  // F5..FF
}

unsigned char byte_at(std::string_view bytes, size_t i) { return static_cast<unsigned char>(bytes[i]); }

std::string hex_byte(unsigned char byte) {
  char hex[8];
  std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned>(byte));
  return hex;
}

/// What is wrong with the invalid subpart of `length` bytes at bytes[offset], in words.
std::string what_is_wrong(std::string_view bytes, size_t offset, size_t length) {
  const unsigned char first = byte_at(bytes, offset);
  const std::string byte = "byte " + hex_byte(first);
  if (first >= 0x80 && first <= 0xBF) return byte + " is a continuation byte, which cannot start a character";
  if (first == 0xC0 || first == 0xC1) return byte + " never occurs in UTF-8 (it could only start an overlong form)";
  if (first >= 0xF5) return byte + " never occurs in UTF-8 (it would start a code point above U+10FFFF)";
  const size_t sequence_length = lead(first).length;
  if (offset + length == bytes.size()) {
    return message(byte, " starts a ", sequence_length, "-byte sequence that the end of the text cuts short");
  }
  const unsigned char next = byte_at(bytes, offset + length);
  if (length == 1 && next >= 0x80 && next <= 0xBF) {  // a continuation byte outside the lead's range
    const std::string pair = byte + " followed by byte " + hex_byte(next) + " would be ";
    if (first == 0xE0 || first == 0xF0) return pair + "an overlong form (a code point that has a shorter one)";
    if (first == 0xED) return pair + "a surrogate (U+D800..U+DFFF)";
    return pair + "a code point above U+10FFFF";  // F4
  }
  return message(byte, " starts a ", sequence_length, "-byte sequence, but byte ", hex_byte(next), " at offset ",
                 offset + length, " is not a continuation byte (0x80..0xBF)");
}

}  // namespace

Utf8Step read_utf8(std::string_view bytes, size_t offset) {
  const unsigned char first = byte_at(bytes, offset);
  if (first < 0x80) return {first, 1, true};
  const Lead sequence = lead(first);
  if (sequence.length == 0) return {0, 1, false};
  // The lead byte's low bits, then 6 bits from each continuation byte: 110xxxxx 10xxxxxx ...
  char32_t code_point = first & (0xFFu >> (sequence.length + 1));
  for (size_t k = 1; k < sequence.length; ++k) {
    const unsigned char low = k == 1 ? sequence.second_low : 0x80;
    const unsigned char high = k == 1 ? sequence.second_high : 0xBF;
    if (offset + k >= bytes.size()) return {0, k, false};
    const unsigned char byte = byte_at(bytes, offset + k);
    if (byte < low || byte > high) return {0, k, false};
    code_point = (code_point << 6) | (byte & 0x3Fu);
  }
  return {code_point, sequence.length, true};
}

Utf8Step decode_utf8(std::string_view bytes, size_t offset, std::string_view operation) {
  const Utf8Step step = read_utf8(bytes, offset);
  if (!step.valid) {
    throw ValueError(
        message(operation, ": not UTF-8 at offset ", offset, ": ", what_is_wrong(bytes, offset, step.length)));
  }
  return step;
}

void append_utf8(std::string& out, char32_t code_point) {
  if (code_point > 0x10FFFF || (code_point >= 0xD800 && code_point <= 0xDFFF)) {
    char hex[16];
    std::snprintf(hex, sizeof hex, "U+%04X", static_cast<unsigned>(code_point));
    throw ValueError(message("append_utf8: ", hex, " is ",
                             code_point > 0x10FFFF ? "above U+10FFFF" : "a surrogate (U+D800..U+DFFF)",
                             ", which UTF-8 cannot encode"));
  }
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
    return;
  }
  // 110xxxxx 10xxxxxx, 1110xxxx 10xxxxxx 10xxxxxx or 11110xxx 10xxxxxx 10xxxxxx 10xxxxxx.
  const int length = code_point < 0x800 ? 2 : code_point < 0x10000 ? 3 : 4;
  const unsigned lead_marks[] = {0, 0, 0xC0, 0xE0, 0xF0};
  out += static_cast<char>(lead_marks[length] | (code_point >> (6 * (length - 1))));
  for (int k = length - 2; k >= 0; --k) out += static_cast<char>(0x80 | ((code_point >> (6 * k)) & 0x3F));
}

std::string utf8_replace_invalid(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (size_t i = 0; i < bytes.size();) {
    const Utf8Step step = read_utf8(bytes, i);
    if (step.valid) {
      out.append(bytes.substr(i, step.length));
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD REPLACEMENT CHARACTER
    }
    i += step.length;
  }
  return out;
}

}  // namespace gradformer
