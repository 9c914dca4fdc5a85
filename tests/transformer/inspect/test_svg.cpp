#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "catch.h"
#include "tensor/support/files.h"
#include "transformer/data/data_error.h"
#include "transformer/inspect/svg.h"
#include "transformer/inspect/svg_layout.h"

using namespace gradformer;

namespace {

// A small well-formedness check: tags balance and nest, attribute values are quoted, and every
// '&' starts an entity. Returns "" when the document is fine, else what is wrong.
std::string xml_problem(const std::string& xml) {
  std::vector<std::string> open;
  size_t i = 0;
  while (i < xml.size()) {
    if (xml[i] == '&') {
      static const std::regex entity("^&(amp|lt|gt|quot|apos|#[0-9]+);");
      if (!std::regex_search(xml.substr(i, 8), entity)) return "bare & at " + std::to_string(i);
      ++i;
      continue;
    }
    if (xml[i] == '>') return "bare > at " + std::to_string(i);
    if (xml[i] != '<') {
      ++i;
      continue;
    }
    if (xml.compare(i, 2, "<?") == 0) {
      i = xml.find("?>", i) + 2;
      continue;
    }
    size_t end = i + 1;
    bool quoted = false;
    while (end < xml.size() && (quoted || xml[end] != '>')) {
      if (xml[end] == '"') quoted = !quoted;
      if (!quoted && xml[end] == '<') return "< inside a tag at " + std::to_string(end);
      ++end;
    }
    if (end >= xml.size()) return "unterminated tag";
    const std::string tag = xml.substr(i + 1, end - i - 1);
    const std::string name = tag.substr(tag[0] == '/' ? 1 : 0, tag.find_first_of(" />\n", 1) - (tag[0] == '/' ? 1 : 0));
    if (tag[0] == '/') {
      if (open.empty() || open.back() != name)
        return "</" + name + "> closes " + (open.empty() ? "nothing" : open.back());
      open.pop_back();
    } else if (tag.back() != '/') {
      open.push_back(name);
    }
    i = end + 1;
  }
  return open.empty() ? "" : "<" + open.back() + "> never closed";
}

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("the xml checker used below catches broken documents") {
  CHECK(xml_problem("<a><b/></a>").empty());
  CHECK(!xml_problem("<a><b></a>").empty());
  CHECK(!xml_problem("<a>x & y</a>").empty());
  CHECK(!xml_problem("<a>x > y</a>").empty());
}

TEST_CASE("line plot is well-formed with axes ticks title and one line per series") {
  LinePlot plot;
  plot.title = "loss <train & valid>";
  for (int s = 0; s < 2; ++s) {
    PlotSeries series{s == 0 ? "train" : "valid", {}, {}};
    for (int step = 0; step <= 1000; step += s == 0 ? 10 : 100)
      series.x.push_back(step), series.y.push_back(5.0 * std::exp(-step / 300.0) + 0.1 * s);
    plot.series.push_back(series);
  }
  const std::string svg = line_plot_svg(plot);
  INFO(svg.substr(0, 600));
  CHECK(xml_problem(svg).empty());
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\"") != std::string::npos);
  CHECK(occurrences(svg, "<polyline class=\"series\"") == 2);
  CHECK(svg.find(">loss &lt;train &amp; valid&gt;</text>") != std::string::npos);
  CHECK(svg.find(">step</text>") != std::string::npos);
  CHECK(svg.find(">train</text>") != std::string::npos);
  CHECK(svg.find(">valid</text>") != std::string::npos);
  CHECK(svg.find(">1000</text>") != std::string::npos);  // a nice x tick at the end
  CHECK(svg.find(">0</text>") != std::string::npos);
}

TEST_CASE("line plot's last x tick label fits inside the picture") {
  LinePlot plot;
  plot.series = {{"lr", {0, 15000}, {0.0, 1.0}}};  // the ticks end at 1.5e+04, the longest label
  const std::string svg = line_plot_svg(plot);
  const size_t label = svg.find(">1.5e+04</text>");
  REQUIRE(label != std::string::npos);
  const size_t x_at = svg.rfind("<text x=\"", label) + 9;
  const double centre = std::stod(svg.substr(x_at)), width = 640;
  const double half_width = 0.5 * 7 * 0.6 * 12;  // 7 characters at about 0.6 em each, 12 px font
  CHECK(centre + half_width <= width);
}

TEST_CASE("line plot's legend fits inside the picture whatever the names' length") {
  for (const std::string name : {"a", "scaled: 0.02/sqrt(2N)", "a much longer name for a series of losses"}) {
    INFO(name);
    const std::string svg = line_plot_svg({.series = {{"loss", {0, 1}, {1, 2}}, {name, {0, 1}, {2, 1}}}});
    CHECK(svg_layout_problems(svg).empty());
  }
}

TEST_CASE("text width: Arial's advances by hand, a tenth wider, wide scripts an em") {
  // "ab": 556 + 556 thousandths of an em; at 10 px, 11.12 px, then x 1.1
  CHECK(text_width("ab", 10) == Approx(12.232));
  CHECK(text_width("ab", 10, /*bold=*/true) == Approx(12.232 * 1.08));
  CHECK(text_width("iii", 12) < text_width("MMM", 12));
  CHECK(text_width("\xE6\x97\xA5", 10) == Approx(11.0));  // one CJK character: an em, x 1.1
  CHECK(text_width("", 12) == 0);
}

TEST_CASE("svg layout: a text past the canvas and two texts over each other are named, clear ones pass") {
  const auto doc = [](const std::string& body) {
    return "<svg xmlns='http://www.w3.org/2000/svg' width='200' height='100' font-size='10'>\n" + body + "</svg>\n";
  };
  CHECK(svg_layout_problems(doc("<text x='10' y='20'>left</text><text x='190' y='20' text-anchor='end'>right</text>"))
            .empty());
  // "a long line of words" at 10 px is about 96 px wide: from x 150 it ends past 200
  const auto past = svg_layout_problems(doc("<text x='150' y='50'>a long line of words</text>"));
  REQUIRE(past.size() == 1);
  CHECK(past[0].starts_with("text 'a long line of words' (x 150, y 50) runs past the right edge: it ends at "));
  // the same words, one line down by less than their height, and a second one on top of them
  const auto over =
      svg_layout_problems(doc("<text x='10' y='50'>&lt;/s&gt; and more</text>"
                              "<g font-size='14'><text x='40' y='55'>-2.21</text></g>"));
  REQUIRE(over.size() == 1);
  CHECK(over[0] == "text '</s> and more' (x 10, y 50) overlaps text '-2.21' (x 40, y 55)");
  // a slanted label is checked against the canvas only, and turned about its anchor: up and out
  CHECK(svg_layout_problems(doc("<text x='20' y='60' transform='rotate(-90 20 60)'>up</text>"
                                "<text x='22' y='58'>near</text>"))
            .empty());
  const auto out =
      svg_layout_problems(doc("<text x='20' y='60' transform='rotate(-90 20 60)'>a long label going up</text>"));
  REQUIRE(out.size() == 1);
  CHECK(out[0].find("runs past the top edge") != std::string::npos);
}

TEST_CASE("line plot handles a single point and a flat line") {
  LinePlot plot;
  plot.series = {{"one", {5}, {2.0}}};
  CHECK(xml_problem(line_plot_svg(plot)).empty());
  CHECK(line_plot_svg(plot).find("<circle") != std::string::npos);
  CHECK(line_plot_svg(plot).find("nan") == std::string::npos);
}

TEST_CASE("line plot errors are typed") {
  LinePlot plot;
  CHECK_THROWS_MSG(line_plot_svg(plot), ValueError, "no series");
  plot.series = {{"train", {}, {}}};
  CHECK_THROWS_MSG(line_plot_svg(plot), ValueError, "series 'train' is empty");
  plot.series = {{"train", {1, 2}, {1}}};
  CHECK_THROWS_MSG(line_plot_svg(plot), ShapeError, "2 x values and 1 y values");
  plot.series = {{"train", {1, 2}, {1, NAN}}};
  CHECK_THROWS_MSG(line_plot_svg(plot), ValueError, "non-finite");
  plot.series = {{"train", {1, INFINITY}, {1, 2}}};
  CHECK_THROWS_MSG(line_plot_svg(plot), ValueError, "non-finite");
}

TEST_CASE("heatmap has a cell per value escaped labels and a colour bar") {
  Heatmap heatmap;
  heatmap.title = "layer 1 head 2: <cross> attention";
  heatmap.row_labels = {"<s>", "the", "cat", "&"};
  heatmap.column_labels = {"le", "chat", "\"noir\"", "</s>", "l'"};
  for (int i = 0; i < 20; ++i) heatmap.values.push_back(i / 19.0);
  const std::string svg = heatmap_svg(heatmap);
  CHECK(xml_problem(svg).empty());
  CHECK(occurrences(svg, "<rect class=\"cell\"") == 20);
  CHECK(occurrences(svg, "<rect class=\"colour-bar\"") == 1);
  CHECK(svg.find(">&lt;s&gt;</text>") != std::string::npos);
  CHECK(svg.find(">&amp;</text>") != std::string::npos);
  CHECK(svg.find(">&quot;noir&quot;</text>") != std::string::npos);
  CHECK(svg.find(">&lt;/s&gt;</text>") != std::string::npos);
  CHECK(svg.find(">l&apos;</text>") != std::string::npos);
  CHECK(svg.find("&lt;cross&gt; attention") != std::string::npos);
  CHECK(svg.find("fill=\"#440154\"") != std::string::npos);  // the lowest value: viridis's dark end
  CHECK(svg.find("fill=\"#fde725\"") != std::string::npos);  // the highest: its yellow end
}

TEST_CASE("heatmap of a tensor with a fixed range") {
  const Tensor weights = tensor({0.5, 0.5, 0.0, 0.1, 0.2, 0.7}, {2, 3}, DType::Float64);
  Heatmap heatmap = heatmap_of(weights, {"a", "b"}, {"x", "y", "z"}, "attention");
  heatmap.range = std::pair(0.0, 1.0);
  const std::string svg = heatmap_svg(heatmap);
  CHECK(xml_problem(svg).empty());
  CHECK(occurrences(svg, "<rect class=\"cell\"") == 6);
  CHECK(svg.find(">1</text>") != std::string::npos);  // the colour bar spans 0..1
  CHECK(heatmap_of(weights.transpose(0, 1), {"x", "y", "z"}, {"a", "b"}, "t").values ==
        std::vector<double>{0.5, 0.1, 0.5, 0.2, 0.0, 0.7});
  CHECK_THROWS_MSG(heatmap_of(weights, {"a"}, {"x", "y", "z"}, "t"), ShapeError, "1 row labels");
  CHECK_THROWS_MSG(heatmap_of(weights.reshape({6}), {"a"}, {"x"}, "t"), ShapeError, "[rows, columns]");
}

TEST_CASE("heatmap errors are typed") {
  Heatmap heatmap;
  heatmap.row_labels = {"a", "b"};
  heatmap.column_labels = {"x"};
  heatmap.values = {0.1, 0.2};
  CHECK(xml_problem(heatmap_svg(heatmap)).empty());
  heatmap.values = {};
  CHECK_THROWS_MSG(heatmap_svg(heatmap), ValueError, "no values");
  heatmap.values = {0.1, 0.2, 0.3};
  CHECK_THROWS_MSG(heatmap_svg(heatmap), ShapeError, "2 row labels and 1 column labels need 2 values, got 3");
  heatmap.values = {0.1, NAN};
  CHECK_THROWS_MSG(heatmap_svg(heatmap), ValueError, "non-finite");
  heatmap.values = {0.1, 0.2};
  heatmap.range = std::pair(1.0, 1.0);
  CHECK_THROWS_MSG(heatmap_svg(heatmap), ValueError, "empty colour range");
}

TEST_CASE("write_svg saves the text and names an unwritable path") {
  const auto path = std::filesystem::temp_directory_path() / "gradformer_test_plot.svg";
  write_svg(path.string(), "<svg/>\n");
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str() == "<svg/>\n");
  std::filesystem::remove(path);
  CHECK_THROWS_MSG(write_svg("/nonexistent-dir/x.svg", "<svg/>"), OutputError,
                   "/nonexistent-dir/x.svg: cannot create the temporary file");
}
