// Concept pictures drawn from code: boxes, arrows, words, and grids of numbers, for the figures of
// the tutorial (attention step by step, the heads' split, the encoder and the decoder, a roofline).
// A Diagram collects the shapes in the order they are drawn (later ones on top) and returns one
// self-contained SVG document; the same calls give the same bytes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gradformer {

struct Point {
  double x = 0, y = 0;
};

struct TextStyle {
  double size = 13;
  const char* anchor = "middle";  // start, middle or end: where x is in the text
  const char* colour = "#222";
  bool bold = false;
  double rotate = 0;  // degrees, about (x, y): -90 reads bottom to top
};

/// A grid of numbers, e.g. one step of attention: row i a query, column j a key.
struct NumberGrid {
  std::string title;                       // above the grid
  std::vector<std::string> row_labels;     // left of each row
  std::vector<std::string> column_labels;  // above each column; empty: none
  std::vector<double> values;              // row-major [rows, columns]
  int decimals = 2;
  double cell_width = 46, cell_height = 24;
  const char* colour = "#5b8fd0";  // a cell's fill runs from white (0) to this colour (largest |value|)
};

class Diagram {
 public:
  Diagram(double width, double height);

  void text(double x, double y, std::string_view words, const TextStyle& style = {});
  /// A rectangle; rounded corners when `radius` > 0.
  void rect(double x, double y, double width, double height, std::string_view fill, std::string_view stroke = "#333",
            double radius = 0);
  /// A rounded box with its label in the middle.
  void box(double x, double y, double width, double height, std::string_view label, std::string_view fill = "#fff");
  /// A line through the points, with an arrowhead at the last one unless `head` is false.
  void arrow(const std::vector<Point>& points, std::string_view colour = "#333", bool dashed = false, bool head = true);
  void circle(double x, double y, double radius, std::string_view fill, std::string_view stroke = "#333");
  /// The adder of a residual connection: a circle with a + in it.
  void plus(double x, double y);
  /// The grid with its top-left cell at (x, y): the title above it, the row labels to its left, the
  /// column labels between the two. ShapeError when the labels do not match the values, ValueError
  /// for a non-finite value, decimals outside 0..6 or a colour that is not #rrggbb.
  void grid(double x, double y, const NumberGrid& grid);

  /// The whole document.
  std::string svg() const;

 private:
  double width_, height_;
  std::string body_;
};

/// A number with `decimals` digits after the point, never "-0.00".
std::string fixed(double value, int decimals);

}  // namespace gradformer
