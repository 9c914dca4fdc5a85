#include "transformer/inspect/diagram.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tensor/support/error.h"
#include "transformer/inspect/svg.h"

namespace gradformer {

std::string fixed(double value, int decimals) {
  if (decimals < 0 || decimals > 6) throw ValueError(message("fixed: decimals ", decimals, " is outside 0..6"));
  char out[64];
  std::snprintf(out, sizeof out, "%.*f", decimals, value);
  std::string s = out;
  // "-0.00": a value that rounds to zero is written without a sign
  if (s[0] == '-' && s.find_first_not_of("-0.") == std::string::npos) s.erase(0, 1);
  return s;
}

Diagram::Diagram(double width, double height) : width_(width), height_(height) {}

void Diagram::text(double x, double y, std::string_view words, const TextStyle& style) {
  body_ += message("<text x=\"", x, "\" y=\"", y, "\" text-anchor=\"", style.anchor, "\" font-size=\"", style.size,
                   "\" fill=\"", style.colour, "\"", style.bold ? " font-weight=\"bold\"" : "");
  if (style.rotate != 0) body_ += message(" transform=\"rotate(", style.rotate, " ", x, " ", y, ")\"");
  body_ += message(">", escape_xml(words), "</text>\n");
}

void Diagram::rect(double x, double y, double width, double height, std::string_view fill, std::string_view stroke,
                   double radius) {
  body_ += message("<rect x=\"", x, "\" y=\"", y, "\" width=\"", width, "\" height=\"", height, "\"");
  if (radius > 0) body_ += message(" rx=\"", radius, "\"");
  body_ += message(" fill=\"", fill, "\" stroke=\"", stroke, "\"/>\n");
}

void Diagram::box(double x, double y, double width, double height, std::string_view label, std::string_view fill) {
  rect(x, y, width, height, fill, "#333", 6);
  text(x + width / 2, y + height / 2 + 5, label);
}

void Diagram::arrow(const std::vector<Point>& points, std::string_view colour, bool dashed, bool head) {
  body_ += message("<polyline fill=\"none\" stroke=\"", colour, "\" stroke-width=\"1.5\"");
  if (dashed) body_ += " stroke-dasharray=\"5 4\"";
  if (head) body_ += " marker-end=\"url(#head)\"";
  body_ += " points=\"";
  for (size_t i = 0; i < points.size(); ++i) body_ += message(i ? " " : "", points[i].x, ",", points[i].y);
  body_ += "\"/>\n";
}

void Diagram::circle(double x, double y, double radius, std::string_view fill, std::string_view stroke) {
  body_ += message("<circle cx=\"", x, "\" cy=\"", y, "\" r=\"", radius, "\" fill=\"", fill, "\" stroke=\"", stroke,
                   "\"/>\n");
}

void Diagram::plus(double x, double y) {
  circle(x, y, 10, "#fff");
  text(x, y + 5, "+", {.size = 16});
}

namespace {

// The colour `share` (0..1) of the way from white to `colour` ("#rrggbb").
std::string tint(const char* colour, double share) {
  unsigned rgb[3] = {0, 0, 0};
  if (std::sscanf(colour, "#%02x%02x%02x", &rgb[0], &rgb[1], &rgb[2]) != 3)
    throw ValueError(message("Diagram::grid: colour '", colour, "' is not #rrggbb"));
  char out[8];
  int mixed[3];
  for (int c = 0; c < 3; ++c) mixed[c] = static_cast<int>(std::lround(255 + (rgb[c] - 255.0) * share));
  std::snprintf(out, sizeof out, "#%02x%02x%02x", mixed[0], mixed[1], mixed[2]);
  return out;
}

}  // namespace

void Diagram::grid(double x, double y, const NumberGrid& g) {
  const size_t rows = g.row_labels.size(), columns = rows ? g.values.size() / rows : 0;
  if (rows == 0 || rows * columns != g.values.size() || (!g.column_labels.empty() && g.column_labels.size() != columns))
    throw ShapeError(message("Diagram::grid '", g.title, "': ", g.values.size(), " values do not fill ", rows,
                             " rows of ", g.column_labels.size(), " labelled columns"));
  double largest = 0;
  for (double v : g.values) {
    if (!std::isfinite(v)) throw ValueError(message("Diagram::grid '", g.title, "': non-finite value ", v));
    largest = std::max(largest, std::abs(v));
  }
  tint(g.colour, 0);  // refuses a colour that is not #rrggbb before anything is drawn
  const double top_labels = g.column_labels.empty() ? 0 : 16;
  text(x + g.cell_width * static_cast<double>(columns) / 2, y - top_labels - 8, g.title, {.size = 13, .bold = true});
  for (size_t c = 0; c < g.column_labels.size(); ++c)
    text(x + g.cell_width * (static_cast<double>(c) + 0.5), y - 6, g.column_labels[c], {.size = 11, .colour = "#555"});
  for (size_t r = 0; r < rows; ++r) {
    const double row_y = y + g.cell_height * static_cast<double>(r);
    text(x - 6, row_y + g.cell_height / 2 + 4, g.row_labels[r], {.size = 12, .anchor = "end"});
    for (size_t c = 0; c < columns; ++c) {
      const double v = g.values[r * columns + c], cell_x = x + g.cell_width * static_cast<double>(c);
      rect(cell_x, row_y, g.cell_width, g.cell_height, tint(g.colour, largest > 0 ? 0.6 * std::abs(v) / largest : 0),
           "#999");
      text(cell_x + g.cell_width / 2, row_y + g.cell_height / 2 + 4, fixed(v, g.decimals), {.size = 12});
    }
  }
}

std::string Diagram::svg() const {
  return message("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"",
                 width_, "\" height=\"", height_, "\" viewBox=\"0 0 ", width_, " ", height_,
                 "\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"13\">\n",
                 "<defs><marker id=\"head\" markerWidth=\"8\" markerHeight=\"8\" refX=\"7\" refY=\"4\" "
                 "orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\"#333\"/></marker></defs>\n",
                 "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n", body_, "</svg>\n");
}

}  // namespace gradformer
