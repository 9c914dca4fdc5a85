#include "tensor/support/utf8.h"

#include <cstdint>

namespace gradformer {

std::optional<size_t> invalid_utf8_at(std::string_view text) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const auto continuation = [&](size_t i) { return i < text.size() && (byte(i) & 0xC0) == 0x80; };
  for (size_t i = 0; i < text.size();) {
    const unsigned char b = byte(i);
    size_t length;
    uint32_t cp;
    if (b < 0x80)
      length = 1, cp = b;
    else if ((b & 0xE0) == 0xC0)
      length = 2, cp = b & 0x1F;
    else if ((b & 0xF0) == 0xE0)
      length = 3, cp = b & 0x0F;
    else if ((b & 0xF8) == 0xF0)
      length = 4, cp = b & 0x07;
    else
      return i;  // a continuation byte where a character should start, or 0xF8..0xFF
    for (size_t k = 1; k < length; ++k) {
      if (!continuation(i + k)) return i;
      cp = (cp << 6) | (byte(i + k) & 0x3F);
    }
    // The shortest form only; no surrogates (UTF-16's, not characters); nothing past U+10FFFF.
    constexpr uint32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < smallest[length] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return i;
    i += length;
  }
  return std::nullopt;
}

}  // namespace gradformer
