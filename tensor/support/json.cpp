#include "tensor/support/json.h"

#include <cstdio>
#include <limits>

namespace gradformer {

namespace {

constexpr int kMaxDepth = 64;

/// Appends code point cp (<= U+10FFFF, not a surrogate) as UTF-8: 1 to 4 bytes.
void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

class Parser {
 public:
  Parser(std::string_view text, size_t max_array_items, bool literals = false)
      : text_(text), max_array_items_(max_array_items), literals_(literals) {}

  Json document() {
    Json value = parse_value(0);
    skip_whitespace();
    if (pos_ != text_.size()) fail("unexpected characters after the value");
    return value;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const { throw JsonError(message("json: ", what, " at byte ", pos_)); }
  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }
  void skip_whitespace() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r')) ++pos_;
  }
  void expect(char c) {
    if (at_end()) fail(message("expected '", c, "', found the end of the text"));
    if (peek() != c) fail(message("expected '", c, "', found '", peek(), "'"));
    ++pos_;
  }

  Json parse_value(int depth) {
    if (depth > kMaxDepth) fail(message("nested deeper than ", kMaxDepth, " levels"));
    skip_whitespace();
    if (at_end()) fail("expected a value, found the end of the text");
    const char c = peek();
    if (c == '{') return parse_object(depth);
    if (c == '[') return parse_array(depth);
    if (c == '"') return Json::string(parse_string());
    if (literals_ && (c == '-' || (c >= '0' && c <= '9')) && !is_integer_ahead()) return parse_literal_number();
    if (c == '-' || (c >= '0' && c <= '9')) return Json::integer(parse_integer());
    if (literals_)
      for (const char* word : {"true", "false", "null"})
        if (text_.substr(pos_, std::string_view(word).size()) == word)
          return pos_ += std::string_view(word).size(), Json::literal(word);
    if (c == 't' || c == 'f' || c == 'n')
      fail("unsupported value (true, false and null never appear in a safetensors header)");
    fail(message("unexpected character '", c, "'"));
  }

  Json parse_object(int depth) {
    expect('{');
    Json::Members members;
    skip_whitespace();
    if (peek() == '}') return ++pos_, Json::object();
    while (true) {
      skip_whitespace();
      if (peek() != '"') fail("expected a string as the member name");
      std::string key = parse_string();
      skip_whitespace();
      expect(':');
      members.emplace_back(std::move(key), parse_value(depth + 1));
      skip_whitespace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect('}');
      return Json::object(std::move(members));
    }
  }

  Json parse_array(int depth) {
    expect('[');
    std::vector<Json> items;
    skip_whitespace();
    if (peek() == ']') return ++pos_, Json::array();
    while (true) {
      if (items.size() == max_array_items_) fail(message("an array of more than ", max_array_items_, " items"));
      items.push_back(parse_value(depth + 1));
      skip_whitespace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      expect(']');
      return Json::array(std::move(items));
    }
  }

  // JSON's grammar: -?(0|[1-9][0-9]*), here without fraction or exponent.
  int64_t parse_integer() {
    const bool negative = peek() == '-';
    if (negative) ++pos_;
    if (!(peek() >= '0' && peek() <= '9')) fail("expected a digit");
    if (peek() == '0' && pos_ + 1 < text_.size() && text_[pos_ + 1] >= '0' && text_[pos_ + 1] <= '9')
      fail("a number cannot have a leading zero");
    // Accumulated as a negative number, whose range includes INT64_MIN.
    int64_t value = 0;
    while (peek() >= '0' && peek() <= '9') {
      const int digit = peek() - '0';
      if (value < (std::numeric_limits<int64_t>::min() + digit) / 10) fail("integer out of the 64-bit range");
      value = value * 10 - digit;
      ++pos_;
    }
    if (peek() == '.' || peek() == 'e' || peek() == 'E')
      fail("unsupported number (only integers appear in a safetensors header)");
    if (!negative) {
      if (value == std::numeric_limits<int64_t>::min()) fail("integer out of the 64-bit range");
      value = -value;
    }
    return value;
  }

  // Whether the number at pos_ has neither fraction nor exponent (then parse_integer reads it).
  bool is_integer_ahead() const {
    size_t p = pos_ + (peek() == '-' ? 1 : 0);
    while (p < text_.size() && text_[p] >= '0' && text_[p] <= '9') ++p;
    return p == text_.size() || (text_[p] != '.' && text_[p] != 'e' && text_[p] != 'E');
  }
  void digits() {
    if (!(peek() >= '0' && peek() <= '9')) fail("expected a digit");
    while (peek() >= '0' && peek() <= '9') ++pos_;
  }
  // JSON's grammar: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, kept as written.
  Json parse_literal_number() {
    const size_t start = pos_;
    if (peek() == '-') ++pos_;
    if (peek() == '0' && pos_ + 1 < text_.size() && text_[pos_ + 1] >= '0' && text_[pos_ + 1] <= '9')
      fail("a number cannot have a leading zero");
    digits();
    if (peek() == '.') ++pos_, digits();
    if (peek() == 'e' || peek() == 'E') {
      ++pos_;
      if (peek() == '+' || peek() == '-') ++pos_;
      digits();
    }
    return Json::literal(std::string(text_.substr(start, pos_ - start)));
  }

  uint32_t parse_hex4() {
    if (pos_ + 4 > text_.size()) fail("\\u needs 4 hex digits");
    uint32_t value = 0;
    for (int i = 0; i < 4; ++i) {
      const char h = text_[pos_++];
      value <<= 4;
      if (h >= '0' && h <= '9')
        value |= static_cast<uint32_t>(h - '0');
      else if (h >= 'a' && h <= 'f')
        value |= static_cast<uint32_t>(h - 'a' + 10);
      else if (h >= 'A' && h <= 'F')
        value |= static_cast<uint32_t>(h - 'A' + 10);
      else
        fail("\\u needs 4 hex digits");
    }
    return value;
  }

  std::string parse_string() {
    expect('"');
    std::string out;
    while (true) {
      if (at_end()) fail("unterminated string");
      const char c = text_[pos_];
      if (c == '"') return ++pos_, out;
      if (static_cast<unsigned char>(c) < 0x20) fail("control character in a string (it must be escaped)");
      if (c != '\\') {
        out += c;  // the text was checked to be UTF-8 before parsing
        ++pos_;
        continue;
      }
      ++pos_;
      if (at_end()) fail("unterminated escape");
      const char e = text_[pos_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          uint32_t cp = parse_hex4();
          // Outside the Basic Multilingual Plane a character is a UTF-16 surrogate pair:
          // \uD83D\uDE00 = 0x10000 + ((0xD83D - 0xD800) << 10) + (0xDE00 - 0xDC00) = U+1F600.
          if (cp >= 0xDC00 && cp <= 0xDFFF) fail("lone low surrogate in \\u escape");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (pos_ + 2 > text_.size() || text_[pos_] != '\\' || text_[pos_ + 1] != 'u')
              fail("high surrogate not followed by a low surrogate");
            pos_ += 2;
            const uint32_t low = parse_hex4();
            if (low < 0xDC00 || low > 0xDFFF) fail("high surrogate not followed by a low surrogate");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default:
          pos_ -= 2, fail(message("invalid escape '\\", e, "'"));
      }
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
  size_t max_array_items_;
  bool literals_;
};

void dump_string(std::string& out, const std::string& s) {
  if (const auto bad = invalid_utf8_at(s)) throw JsonError(message("json: string is not valid UTF-8 at byte ", *bad));
  out += '"';
  for (const char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof buffer, "\\u%04x", static_cast<unsigned>(c));
          out += buffer;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

}  // namespace

Json Json::object(Members members) {
  Json j;
  j.kind_ = Kind::Object;
  j.members_ = std::move(members);
  return j;
}
Json Json::array(std::vector<Json> items) {
  Json j;
  j.kind_ = Kind::Array;
  j.items_ = std::move(items);
  return j;
}
Json Json::string(std::string text) {
  Json j;
  j.kind_ = Kind::String;
  j.text_ = std::move(text);
  return j;
}
Json Json::integer(int64_t value) {
  Json j;
  j.kind_ = Kind::Integer;
  j.integer_ = value;
  return j;
}

Json Json::parse(std::string_view text, size_t max_array_items) {
  if (const auto bad = invalid_utf8_at(text)) throw JsonError(message("json: not valid UTF-8 at byte ", *bad));
  return Parser(text, max_array_items).document();
}

Json Json::parse_config(std::string_view text) {
  if (const auto bad = invalid_utf8_at(text)) throw JsonError(message("json: not valid UTF-8 at byte ", *bad));
  return Parser(text, SIZE_MAX, /*literals=*/true).document();
}

Json Json::literal(std::string text) {
  Json j;
  j.kind_ = Kind::Literal;
  j.text_ = std::move(text);
  return j;
}

std::string Json::dump() const {
  std::string out;
  dump_to(out);
  return out;
}

void Json::dump_to(std::string& out) const {
  switch (kind_) {
    case Kind::Integer:
      out += std::to_string(integer_);
      return;
    case Kind::Literal:
      out += text_;
      return;
    case Kind::String:
      dump_string(out, text_);
      return;
    case Kind::Array:
      out += '[';
      for (size_t i = 0; i < items_.size(); ++i) {
        if (i) out += ',';
        items_[i].dump_to(out);
      }
      out += ']';
      return;
    case Kind::Object:
      out += '{';
      for (size_t i = 0; i < members_.size(); ++i) {
        if (i) out += ',';
        dump_string(out, members_[i].first);
        out += ':';
        members_[i].second.dump_to(out);
      }
      out += '}';
      return;
  }
}

const char* kind_name(Json::Kind kind) {
  switch (kind) {
    case Json::Kind::Object:
      return "object";
    case Json::Kind::Array:
      return "array";
    case Json::Kind::String:
      return "string";
    case Json::Kind::Integer:
      return "integer";
    case Json::Kind::Literal:
      return "literal";
  }
  return "?";
}

}  // namespace gradformer
