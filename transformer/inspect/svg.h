// Pictures a person opens in a browser: the loss curve of a run and the attention weights of a
// sentence. Each function returns the text of one self-contained SVG document (no scripts, no
// external files); write_svg saves it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace gradformer {

/// One line of a plot, e.g. the training loss; x and y have the same length.
struct PlotSeries {
  std::string name;
  std::vector<double> x, y;
};

struct LinePlot {
  std::string title = "loss";
  std::string x_label = "step";
  std::string y_label = "loss";
  std::vector<PlotSeries> series;  // drawn in order, each its own colour, named in the legend
};

/// Axes with "nice" ticks (1, 2 or 5 times a power of ten) and labels, one polyline per series,
/// a legend. ValueError for no series, an empty series or a non-finite value; ShapeError when a
/// series's x and y differ in length.
std::string line_plot_svg(const LinePlot& plot);

/// A matrix drawn as coloured cells, e.g. attention weights: row i is a query, column j a key.
struct Heatmap {
  std::string title;
  std::vector<std::string> row_labels;     // one per row: the query tokens
  std::vector<std::string> column_labels;  // one per column: the key tokens
  std::vector<double> values;              // row-major [rows, columns]
  std::string row_axis = "query", column_axis = "key";
  /// The values the colour scale spans; by default the data's minimum and maximum. Attention
  /// weights read best on a fixed {0, 1}.
  std::optional<std::pair<double, double>> range;
};

/// Cells coloured on the viridis scale, each with a tooltip (row, column, value), row labels on
/// the left, column labels slanted on top, a colour bar with its end values. ValueError for no
/// values or a non-finite one or an empty range; ShapeError when the labels do not match the
/// number of values.
std::string heatmap_svg(const Heatmap& heatmap);

/// A heatmap of a [rows, columns] float tensor (e.g. one head's attention weights, a view is fine).
Heatmap heatmap_of(const Tensor& matrix, std::vector<std::string> row_labels, std::vector<std::string> column_labels,
                   std::string title);

/// & < > " ' as XML entities, so any token can be a label.
std::string escape_xml(std::string_view text);

/// Writes the text to `path`, whole (write_file_whole, tensor/support/files.h): OutputError if it cannot.
void write_svg(const std::string& path, const std::string& svg);

}  // namespace gradformer
