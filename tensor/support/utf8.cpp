#include "tensor/support/utf8.h"

#include <cstdio>

namespace gradformer {

std::optional<Utf8Char> utf8_char_at(std::string_view text, size_t at) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const auto continuation = [&](size_t i) { return i < text.size() && (byte(i) & 0xC0) == 0x80; };
  const unsigned char b = byte(at);
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
    return std::nullopt;  // a continuation byte where a character should start, or 0xF8..0xFF
  for (size_t k = 1; k < length; ++k) {
    if (!continuation(at + k)) return std::nullopt;
    cp = (cp << 6) | (byte(at + k) & 0x3F);
  }
  // The shortest form only; no surrogates (UTF-16's, not characters); nothing past U+10FFFF.
  constexpr uint32_t smallest[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < smallest[length] || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) return std::nullopt;
  return Utf8Char{cp, length};
}

std::optional<size_t> invalid_utf8_at(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const auto c = utf8_char_at(text, i);
    if (!c) return i;
    i += c->length;
  }
  return std::nullopt;
}

namespace {

// Characters a terminal shows as nothing, or that move or reorder what follows them.
bool invisible(uint32_t cp) {
  return (cp >= 0x80 && cp <= 0x9F) ||      // C1 controls
         cp == 0xAD || cp == 0x61C ||       // the soft hyphen, the Arabic letter mark
         (cp >= 0x200B && cp <= 0x200F) ||  // zero-width space, joiners, direction marks
         (cp >= 0x2028 && cp <= 0x202E) ||  // line and paragraph separators, direction embeddings
         (cp >= 0x2060 && cp <= 0x2064) ||  // word joiner, invisible operators
         (cp >= 0x2066 && cp <= 0x2069) ||  // direction isolates
         cp == 0xFEFF ||                    // the byte order mark (a zero-width no-break space)
         (cp >= 0xE0000 && cp <= 0xE007F);  // tag characters
}

}  // namespace

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  char escape[16];
  for (size_t i = 0; i < text.size();) {
    const auto c = utf8_char_at(text, i);
    const unsigned char b = static_cast<unsigned char>(text[i]);
    if (!c || (c->length == 1 && ((b < 0x20 && b != '\n' && b != '\t') || b == 0x7F))) {
      if (b == 0)
        out += "\\0";
      else if (b == '\r')
        out += "\\r";
      else
        std::snprintf(escape, sizeof escape, "\\x%02X", b), out += escape;
      ++i;
    } else if (invisible(c->code_point)) {
      std::snprintf(escape, sizeof escape, "\\u{%04X}", static_cast<unsigned>(c->code_point));
      out += escape;
      i += c->length;
    } else {
      out.append(text.substr(i, c->length));
      i += c->length;
    }
  }
  return out;
}

}  // namespace gradformer
