#include "transformer/inspect/svg_layout.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <optional>
#include <sstream>

namespace gradformer {

namespace {

// Arial's advance widths of the printable ASCII characters, space to '~', in thousandths of an em.
constexpr std::array<int, 95> kAsciiWidths = {
    278,  278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278,  //  !"#$%&'()*+,-./
    556,  556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556,  // 0-9 :;<=>?
    1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778,  // @A-O
    667,  778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556,  // P-Z [\]^_
    333,  556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556,  // `a-o
    556,  556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584};      // p-z {|}~

constexpr double kWider = 1.1;  // Arial to about DejaVu Sans
constexpr double kBold = 1.08;  // a bold face's letters, a little wider

// The next code point of UTF-8 `text` at `at` (advanced past it); a byte that starts no character
// counts as one character.
char32_t next_code_point(std::string_view text, size_t& at) {
  const auto byte = static_cast<unsigned char>(text[at++]);
  const int more = byte >= 0xF0 ? 3 : byte >= 0xE0 ? 2 : byte >= 0xC0 ? 1 : 0;
  char32_t point = more == 0 ? byte : byte & (0x3F >> more);
  for (int i = 0; i < more && at < text.size(); ++i)
    point = (point << 6) | (static_cast<unsigned char>(text[at++]) & 0x3F);
  return point;
}

// In thousandths of an em, before kWider.
int advance(char32_t c) {
  if (c >= 0x20 && c <= 0x7E) return kAsciiWidths[c - 0x20];
  if (c < 0x20) return 0;
  if (c >= 0x0300 && c <= 0x036F) return 0;  // combining marks
  const bool wide = (c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0xA4CF) || (c >= 0xAC00 && c <= 0xD7A3) ||
                    (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFF00 && c <= 0xFF60) || (c >= 0x1F300 && c <= 0x1FAFF) ||
                    (c >= 0x20000 && c <= 0x3FFFD);
  if (wide) return 1000;
  if (c >= 0x2190 && c <= 0x21FF) return 800;  // arrows
  return 556;
}

// &amp; &lt; &gt; &quot; &apos; &#N; &#xH; as the characters they stand for.
std::string unescape_xml(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    const size_t end = text[i] == '&' ? text.find(';', i) : std::string_view::npos;
    if (end == std::string_view::npos) {
      out += text[i];
      continue;
    }
    const std::string_view name = text.substr(i + 1, end - i - 1);
    const std::pair<std::string_view, char> named[] = {
        {"amp", '&'}, {"lt", '<'}, {"gt", '>'}, {"quot", '"'}, {"apos", '\''}};
    bool found = false;
    for (const auto& [entity, c] : named)
      if (name == entity) out += c, found = true;
    if (!found && name.size() > 1 && name[0] == '#') {
      const bool hex = name[1] == 'x';
      uint32_t point = static_cast<uint32_t>(std::stoul(std::string(name.substr(hex ? 2 : 1)), nullptr, hex ? 16 : 10));
      // as UTF-8
      if (point < 0x80) {
        out += static_cast<char>(point);
      } else if (point < 0x800) {
        out += static_cast<char>(0xC0 | (point >> 6)), out += static_cast<char>(0x80 | (point & 0x3F));
      } else {
        out += static_cast<char>(0xE0 | (point >> 12)), out += static_cast<char>(0x80 | ((point >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (point & 0x3F));
      }
      found = true;
    }
    if (!found) out += text.substr(i, end - i + 1);
    i = end;
  }
  return out;
}

// The value of attribute `name` in a tag's text (`<text x='1' ...>`), quoted either way.
std::optional<std::string> attribute(std::string_view tag, std::string_view name) {
  for (size_t at = tag.find(name); at != std::string_view::npos; at = tag.find(name, at + 1)) {
    const bool starts = at > 0 && (tag[at - 1] == ' ' || tag[at - 1] == '\n' || tag[at - 1] == '\t');
    const size_t eq = at + name.size();
    if (!starts || eq + 1 >= tag.size() || tag[eq] != '=' || (tag[eq + 1] != '"' && tag[eq + 1] != '\'')) continue;
    const size_t close = tag.find(tag[eq + 1], eq + 2);
    if (close == std::string_view::npos) return std::nullopt;
    return std::string(tag.substr(eq + 2, close - eq - 2));
  }
  return std::nullopt;
}

double number_or(const std::optional<std::string>& text, double otherwise) {
  if (!text) return otherwise;
  try {
    return std::stod(*text);
  } catch (const std::exception&) {
    return otherwise;
  }
}

struct Style {
  double size = 16;
  bool bold = false;
};

Style inherit(std::string_view tag, Style style) {
  style.size = number_or(attribute(tag, "font-size"), style.size);
  if (const auto weight = attribute(tag, "font-weight"))
    style.bold = *weight == "bold" || number_or(weight, 400) >= 600;
  return style;
}

struct Box {
  double left, top, right, bottom;
};

struct PlacedText {
  std::string words;
  double x, y;
  Box box;
  bool rotated;
};

std::string describe(const PlacedText& t) {
  std::ostringstream out;
  out << "text '" << t.words << "' (x " << t.x << ", y " << t.y << ")";
  return out.str();
}

// The box of `t` turned by `degrees` about (cx, cy): the box around its four turned corners.
Box turned(const Box& b, double degrees, double cx, double cy) {
  const double a = degrees * M_PI / 180, c = std::cos(a), s = std::sin(a);
  Box out{INFINITY, INFINITY, -INFINITY, -INFINITY};
  for (const double x : {b.left, b.right})
    for (const double y : {b.top, b.bottom}) {
      const double tx = cx + (x - cx) * c - (y - cy) * s, ty = cy + (x - cx) * s + (y - cy) * c;
      out = {std::min(out.left, tx), std::min(out.top, ty), std::max(out.right, tx), std::max(out.bottom, ty)};
    }
  return out;
}

// Every <text> of `svg`, placed, and the canvas's size (infinite when the <svg> does not say).
struct Layout {
  double width = INFINITY, height = INFINITY;
  std::vector<PlacedText> texts;
};

PlacedText placed(std::string_view tag, std::string words, const Style& style) {
  const double x = number_or(attribute(tag, "x"), 0), y = number_or(attribute(tag, "y"), 0);
  const double w = text_width(words, style.size, style.bold);
  const std::string anchor = attribute(tag, "text-anchor").value_or("start");
  const double left = anchor == "middle" ? x - w / 2 : anchor == "end" ? x - w : x;
  Box box{left, y - 0.8 * style.size, left + w, y + 0.25 * style.size};
  bool rotated = false;
  if (const auto transform = attribute(tag, "transform"); transform && transform->starts_with("rotate(")) {
    std::istringstream in(transform->substr(7));
    double degrees = 0, cx = 0, cy = 0;
    in >> degrees >> cx >> cy;
    box = turned(box, degrees, cx, cy), rotated = true;
  }
  return {std::move(words), x, y, box, rotated};
}

Layout layout_of(std::string_view svg) {
  Layout layout;
  std::vector<Style> styles = {Style{}};
  for (size_t at = svg.find('<'); at != std::string_view::npos; at = svg.find('<', at + 1)) {
    const size_t close = svg.find('>', at);
    if (close == std::string_view::npos) break;
    const std::string_view tag = svg.substr(at, close - at + 1);
    const bool self_closing = tag.size() >= 2 && tag[tag.size() - 2] == '/';
    if (tag.starts_with("<svg")) {
      layout.width = number_or(attribute(tag, "width"), INFINITY);
      layout.height = number_or(attribute(tag, "height"), INFINITY);
      styles.push_back(inherit(tag, styles.back()));
    } else if (tag.starts_with("<g") && (tag[2] == ' ' || tag[2] == '>') && !self_closing) {
      styles.push_back(inherit(tag, styles.back()));
    } else if ((tag.starts_with("</g") || tag.starts_with("</svg")) && styles.size() > 1) {
      styles.pop_back();
    } else if (tag.starts_with("<text")) {
      const size_t end = svg.find("</text>", close);
      if (end == std::string_view::npos) break;
      std::string words;  // the content, any tag inside left out
      for (size_t i = close + 1; i < end; ++i) {
        if (svg[i] == '<')
          i = svg.find('>', i);
        else
          words += svg[i];
      }
      layout.texts.push_back(placed(tag, unescape_xml(words), inherit(tag, styles.back())));
      at = end;
    }
  }
  return layout;
}

}  // namespace

double text_width(std::string_view text, double font_size, bool bold) {
  int thousandths = 0;
  for (size_t at = 0; at < text.size();) thousandths += advance(next_code_point(text, at));
  return thousandths / 1000.0 * font_size * kWider * (bold ? kBold : 1.0);
}

std::vector<std::string> svg_layout_problems(std::string_view svg) {
  const auto [width, height, texts] = layout_of(svg);
  std::vector<std::string> problems;
  constexpr double kSlack = 1;  // px: boxes that meet by less pass
  for (const PlacedText& t : texts) {
    std::ostringstream edge;
    edge.precision(4);
    if (t.box.left < -kSlack)
      edge << "runs past the left edge: it starts at " << t.box.left;
    else if (t.box.right > width + kSlack)
      edge << "runs past the right edge: it ends at " << t.box.right << " of " << width;
    else if (t.box.top < -kSlack)
      edge << "runs past the top edge: it starts at " << t.box.top;
    else if (t.box.bottom > height + kSlack)
      edge << "runs past the bottom edge: it ends at " << t.box.bottom << " of " << height;
    if (!edge.str().empty()) problems.push_back(describe(t) + " " + edge.str());
  }
  for (size_t i = 0; i < texts.size(); ++i)
    for (size_t j = i + 1; j < texts.size(); ++j) {
      const PlacedText &a = texts[i], &b = texts[j];
      if (a.rotated || b.rotated || a.words.empty() || b.words.empty()) continue;
      const double across = std::min(a.box.right, b.box.right) - std::max(a.box.left, b.box.left);
      const double down = std::min(a.box.bottom, b.box.bottom) - std::max(a.box.top, b.box.top);
      if (across > kSlack && down > kSlack) problems.push_back(describe(a) + " overlaps " + describe(b));
    }
  return problems;
}

}  // namespace gradformer
