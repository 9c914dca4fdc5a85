#include "transformer/inspect/svg.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <sstream>

#include "tensor/support/files.h"
#include "transformer/inspect/svg_layout.h"

namespace gradformer {

std::string escape_xml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

namespace {

// Short numbers for tick labels: 0.25, 1000, 1e+05.
std::string number(double value) {
  std::ostringstream out;
  out.precision(4);
  out << (std::abs(value) < 1e-12 ? 0.0 : value);
  return out.str();
}

std::string header(double width, double height) {
  return message("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"",
                 width, "\" height=\"", height, "\" viewBox=\"0 0 ", width, " ", height,
                 "\" font-family=\"sans-serif\" font-size=\"12\">\n",
                 "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
}

std::string text(double x, double y, std::string_view content, const std::string& attributes = "") {
  return message("<text x=\"", x, "\" y=\"", y, "\"", attributes.empty() ? "" : " ", attributes, ">",
                 escape_xml(content), "</text>\n");
}

void check_finite(double value, const char* op) {
  if (!std::isfinite(value)) throw ValueError(message(op, ": non-finite value ", value));
}

// Tick positions covering [lo, hi] at a step of 1, 2 or 5 times a power of ten, about `count` of them.
std::vector<double> nice_ticks(double& lo, double& hi, int count = 5) {
  if (hi <= lo) {  // a flat line: give it some room
    const double pad = lo == 0 ? 1.0 : std::abs(lo) * 0.1;
    lo -= pad, hi += pad;
  }
  const double rough = (hi - lo) / count;
  const double magnitude = std::pow(10.0, std::floor(std::log10(rough)));
  double step = magnitude * 10;
  for (double m : {1.0, 2.0, 5.0})
    if (rough <= m * magnitude) {
      step = m * magnitude;
      break;
    }
  lo = std::floor(lo / step) * step;
  hi = std::ceil(hi / step) * step;
  std::vector<double> ticks;
  for (int64_t k = 0; lo + static_cast<double>(k) * step <= hi + step * 1e-9; ++k)
    ticks.push_back(lo + static_cast<double>(k) * step);
  return ticks;
}

// Viridis at five stops, interpolated: dark blue (low) to yellow (high), readable in grey too.
constexpr std::array<std::array<double, 3>, 5> kViridis = {
    {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}}};

std::string viridis(double t) {
  t = std::clamp(t, 0.0, 1.0) * (kViridis.size() - 1);
  const auto i = std::min(static_cast<size_t>(t), kViridis.size() - 2);
  const double f = t - static_cast<double>(i);
  char colour[8];
  int rgb[3];
  for (size_t c = 0; c < 3; ++c)
    rgb[c] = static_cast<int>(std::lround(kViridis[i][c] * (1 - f) + kViridis[i + 1][c] * f));
  std::snprintf(colour, sizeof colour, "#%02x%02x%02x", rgb[0], rgb[1], rgb[2]);
  return colour;
}

constexpr std::array<const char*, 6> kSeriesColours = {"#1f77b4", "#ff7f0e", "#2ca02c",
                                                       "#d62728", "#9467bd", "#8c564b"};

// Series k's entry in the legend, top right inside the plot whose top is at y = `top`: a short line
// of its colour, then its name, from x = `names_x`.
std::string legend_entry(size_t k, const std::string& name, double names_x, double top) {
  const double ly = top + 16 + 18 * static_cast<double>(k);
  return message("<line x1=\"", names_x - 25, "\" y1=\"", ly - 4, "\" x2=\"", names_x - 5, "\" y2=\"", ly - 4,
                 "\" stroke=\"", kSeriesColours[k % kSeriesColours.size()], "\" stroke-width=\"2\"/>\n") +
         text(names_x, ly, name);
}

}  // namespace

std::string line_plot_svg(const LinePlot& plot) {
  if (plot.series.empty()) throw ValueError("line_plot_svg: no series to plot");
  double x_lo = INFINITY, x_hi = -INFINITY, y_lo = INFINITY, y_hi = -INFINITY;
  for (const PlotSeries& s : plot.series) {
    if (s.x.size() != s.y.size())
      throw ShapeError(
          message("line_plot_svg: series '", s.name, "' has ", s.x.size(), " x values and ", s.y.size(), " y values"));
    if (s.x.empty()) throw ValueError(message("line_plot_svg: series '", s.name, "' is empty"));
    for (size_t i = 0; i < s.x.size(); ++i) {
      check_finite(s.x[i], "line_plot_svg"), check_finite(s.y[i], "line_plot_svg");
      x_lo = std::min(x_lo, s.x[i]), x_hi = std::max(x_hi, s.x[i]);
      y_lo = std::min(y_lo, s.y[i]), y_hi = std::max(y_hi, s.y[i]);
    }
  }
  const std::vector<double> x_ticks = nice_ticks(x_lo, x_hi), y_ticks = nice_ticks(y_lo, y_hi);

  // right: room for half of the last x tick's label, centred on the plot's edge ("1.5e+04" is
  // about 45 px wide at the 12 px font).
  const double width = 640, height = 400, left = 70, right = 36, top = 40, bottom = 50;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  const auto px = [&](double x) { return left + (x - x_lo) / (x_hi - x_lo) * plot_w; };
  const auto py = [&](double y) { return top + plot_h - (y - y_lo) / (y_hi - y_lo) * plot_h; };

  std::string svg = header(width, height);
  svg += text(width / 2, 24, plot.title, "text-anchor=\"middle\" font-size=\"16\"");
  svg += "<g class=\"axes\" stroke=\"#888\" stroke-width=\"1\">\n";
  for (double t : x_ticks)
    svg += message("<line x1=\"", px(t), "\" y1=\"", top, "\" x2=\"", px(t), "\" y2=\"", top + plot_h,
                   "\" stroke=\"#eee\"/>\n");
  for (double t : y_ticks)
    svg += message("<line x1=\"", left, "\" y1=\"", py(t), "\" x2=\"", left + plot_w, "\" y2=\"", py(t),
                   "\" stroke=\"#eee\"/>\n");
  svg += message("<rect x=\"", left, "\" y=\"", top, "\" width=\"", plot_w, "\" height=\"", plot_h,
                 "\" fill=\"none\"/>\n");
  svg += "</g>\n<g class=\"ticks\">\n";
  for (double t : x_ticks) svg += text(px(t), top + plot_h + 16, number(t), "text-anchor=\"middle\"");
  for (double t : y_ticks) svg += text(left - 6, py(t) + 4, number(t), "text-anchor=\"end\"");
  svg += "</g>\n";
  svg += text(left + plot_w / 2, height - 10, plot.x_label, "text-anchor=\"middle\"");
  svg += text(16, top + plot_h / 2, plot.y_label,
              message("text-anchor=\"middle\" transform=\"rotate(-90 16 ", top + plot_h / 2, ")\""));

  // the legend's names start where the longest ends 8 px inside the plot's right edge
  double longest_name = 0;  // px, at the 12 px font
  for (const PlotSeries& s : plot.series) longest_name = std::max(longest_name, text_width(s.name, 12));
  for (size_t k = 0; k < plot.series.size(); ++k) {
    const PlotSeries& s = plot.series[k];
    const char* colour = kSeriesColours[k % kSeriesColours.size()];
    svg += message("<polyline class=\"series\" fill=\"none\" stroke=\"", colour, "\" stroke-width=\"1.5\" points=\"");
    for (size_t i = 0; i < s.x.size(); ++i) svg += message(i ? " " : "", px(s.x[i]), ",", py(s.y[i]));
    svg += "\"/>\n";
    if (s.x.size() == 1)
      svg += message("<circle cx=\"", px(s.x[0]), "\" cy=\"", py(s.y[0]), "\" r=\"3\" fill=\"", colour, "\"/>\n");
    svg += legend_entry(k, s.name, left + plot_w - 8 - longest_name, top);
  }
  svg += "</svg>\n";
  return svg;
}

std::string heatmap_svg(const Heatmap& heatmap) {
  const size_t rows = heatmap.row_labels.size(), columns = heatmap.column_labels.size();
  if (heatmap.values.empty()) throw ValueError("heatmap_svg: no values to draw");
  if (rows * columns != heatmap.values.size())
    throw ShapeError(message("heatmap_svg: ", rows, " row labels and ", columns, " column labels need ", rows * columns,
                             " values, got ", heatmap.values.size()));
  for (double v : heatmap.values) check_finite(v, "heatmap_svg");
  const auto [data_lo, data_hi] = std::minmax_element(heatmap.values.begin(), heatmap.values.end());
  double lo = *data_lo, hi = *data_hi;
  if (heatmap.range) {
    lo = heatmap.range->first, hi = heatmap.range->second;
    check_finite(lo, "heatmap_svg"), check_finite(hi, "heatmap_svg");
    if (!(lo < hi)) throw ValueError(message("heatmap_svg: empty colour range [", lo, ", ", hi, "]"));
  }
  const double span = hi > lo ? hi - lo : 1.0;

  // Sizes from the labels: about 7 px a character at font size 12.
  size_t longest_row = 1, longest_column = 1;
  for (const auto& l : heatmap.row_labels) longest_row = std::max(longest_row, l.size());
  for (const auto& l : heatmap.column_labels) longest_column = std::max(longest_column, l.size());
  const double cell = std::clamp(600.0 / static_cast<double>(std::max(rows, columns)), 12.0, 40.0);
  const double left = 30 + 7.0 * static_cast<double>(longest_row);
  const double top = 50 + 5.0 * static_cast<double>(longest_column);  // labels slanted at 45 degrees
  const double grid_w = cell * static_cast<double>(columns), grid_h = cell * static_cast<double>(rows);
  const double bar_x = left + grid_w + 20, width = bar_x + 70, height = top + grid_h + 40;

  std::string svg = header(width, height);
  svg += text(width / 2, 22, heatmap.title, "text-anchor=\"middle\" font-size=\"16\"");
  svg += "<g class=\"cells\">\n";
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < columns; ++c) {
      const double v = heatmap.values[r * columns + c];
      svg += message("<rect class=\"cell\" x=\"", left + cell * static_cast<double>(c), "\" y=\"",
                     top + cell * static_cast<double>(r), "\" width=\"", cell, "\" height=\"", cell, "\" fill=\"",
                     viridis((v - lo) / span), "\"><title>", escape_xml(heatmap.row_labels[r]), " \xE2\x86\x92 ",
                     escape_xml(heatmap.column_labels[c]), ": ", number(v), "</title></rect>\n");
    }
  }
  svg += "</g>\n<g class=\"labels\">\n";
  for (size_t r = 0; r < rows; ++r)
    svg +=
        text(left - 6, top + cell * (static_cast<double>(r) + 0.5) + 4, heatmap.row_labels[r], "text-anchor=\"end\"");
  for (size_t c = 0; c < columns; ++c) {
    const double x = left + cell * (static_cast<double>(c) + 0.5), y = top - 6;
    svg += text(x, y, heatmap.column_labels[c], message("transform=\"rotate(-45 ", x, " ", y, ")\""));
  }
  svg += "</g>\n";
  svg += text(left + grid_w / 2, height - 12, heatmap.column_axis + " \xE2\x86\x92",
              "text-anchor=\"middle\" fill=\"#555\"");
  svg += text(12, top + grid_h / 2, heatmap.row_axis,
              message("text-anchor=\"middle\" fill=\"#555\" transform=\"rotate(-90 12 ", top + grid_h / 2, ")\""));

  // colour bar: high at the top
  svg += "<defs><linearGradient id=\"scale\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">\n";
  for (size_t i = 0; i < kViridis.size(); ++i) {
    const double t = static_cast<double>(i) / static_cast<double>(kViridis.size() - 1);
    svg += message("<stop offset=\"", t, "\" stop-color=\"", viridis(t), "\"/>\n");
  }
  svg += "</linearGradient></defs>\n";
  svg += message("<rect class=\"colour-bar\" x=\"", bar_x, "\" y=\"", top, "\" width=\"16\" height=\"", grid_h,
                 "\" fill=\"url(#scale)\" stroke=\"#888\"/>\n");
  svg += text(bar_x + 20, top + 10, number(hi));
  svg += text(bar_x + 20, top + grid_h, number(lo));
  svg += "</svg>\n";
  return svg;
}

Heatmap heatmap_of(const Tensor& matrix, std::vector<std::string> row_labels, std::vector<std::string> column_labels,
                   std::string title) {
  if (matrix.dim() != 2)
    throw ShapeError(message("heatmap_of: expected a [rows, columns] matrix, got ", matrix.shape()));
  if (!is_floating(matrix.dtype()))
    throw DTypeError(message("heatmap_of: expected a floating matrix, got ", matrix.dtype()));
  Heatmap heatmap;
  heatmap.title = std::move(title);
  heatmap.row_labels = std::move(row_labels);
  heatmap.column_labels = std::move(column_labels);
  heatmap.values = matrix.to_vector<double>();
  if (static_cast<int64_t>(heatmap.row_labels.size()) != matrix.size(0) ||
      static_cast<int64_t>(heatmap.column_labels.size()) != matrix.size(1))
    throw ShapeError(message("heatmap_of: matrix is ", matrix.shape(), " but there are ", heatmap.row_labels.size(),
                             " row labels and ", heatmap.column_labels.size(), " column labels"));
  return heatmap;
}

void write_svg(const std::string& path, const std::string& svg) { write_file_whole(path, svg); }

}  // namespace gradformer
