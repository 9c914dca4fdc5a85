#include <limits>
#include <string>

#include "catch.h"
#include "tensor/support/error.h"
#include "transformer/inspect/diagram.h"

using namespace gradformer;

namespace {

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("fixed writes the digits asked for, and no minus sign on a zero") {
  CHECK(fixed(0.125, 2) == "0.12");  // 0.125 is exact in binary: printf rounds half to even
  CHECK(fixed(-1.5, 2) == "-1.50");
  CHECK(fixed(-0.001, 2) == "0.00");
  CHECK(fixed(2.0 / 3.0, 0) == "1");
  CHECK_THROWS_MSG(fixed(1.0, 7), ValueError, "decimals 7");
}

TEST_CASE("a grid draws one cell and one number per value, the labels and the title") {
  Diagram d(400, 200);
  d.grid(60, 60, {"scores <Q K>", {"je", "suis"}, {"a", "b", "c"}, {0.25, -1.5, 3, 0, 1, 2}});
  const std::string svg = d.svg();
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK(occurrences(svg, "<rect x=") == 6);  // the six cells; the background is the only other rect
  for (const char* number : {">0.25<", ">-1.50<", ">3.00<", ">0.00<", ">1.00<", ">2.00<"})
    CHECK(occurrences(svg, number) == 1);
  CHECK(svg.find(">scores &lt;Q K&gt;</text>") != std::string::npos);
  CHECK(svg.find(">suis</text>") != std::string::npos);
  CHECK(svg.find(">c</text>") != std::string::npos);
  // The largest |value| (3) gets the full tint of the default colour at 60%, 0 stays white.
  CHECK(occurrences(svg, "fill=\"#ffffff\"") == 1);
}

TEST_CASE("a grid refuses labels that do not fit its values, and non-finite values") {
  Diagram d(100, 100);
  CHECK_THROWS_MSG(d.grid(0, 0, {"g", {"a", "b"}, {}, {1, 2, 3}}), ShapeError, "3 values do not fill 2 rows");
  CHECK_THROWS_MSG(d.grid(0, 0, {"g", {"a"}, {"x", "y"}, {1, 2, 3}}), ShapeError, "Diagram::grid 'g'");
  CHECK_THROWS_MSG(d.grid(0, 0, {"g", {"a"}, {}, {1, std::numeric_limits<double>::infinity()}}), ValueError,
                   "non-finite");
  NumberGrid named{"g", {"a"}, {}, {1, 2}};
  named.colour = "blue";
  CHECK_THROWS_MSG(d.grid(0, 0, named), ValueError, "colour 'blue' is not #rrggbb");
}

TEST_CASE("arrows end in the arrowhead marker the document defines, and boxes carry their label") {
  Diagram d(300, 100);
  d.arrow({{10, 10}, {10, 50}, {90, 50}});
  d.arrow({{0, 0}, {5, 5}}, "#c00", /*dashed=*/true, /*head=*/false);
  d.box(100, 20, 80, 30, "Add & Norm", "#fbf3c8");
  d.plus(200, 50);
  const std::string svg = d.svg();
  CHECK(svg.find("<marker id=\"head\"") != std::string::npos);
  CHECK(occurrences(svg, "marker-end=\"url(#head)\"") == 1);
  CHECK(svg.find("points=\"10,10 10,50 90,50\"") != std::string::npos);
  CHECK(svg.find("stroke-dasharray") != std::string::npos);
  CHECK(svg.find(">Add &amp; Norm</text>") != std::string::npos);
  CHECK(svg.find("<circle cx=\"200\" cy=\"50\" r=\"10\"") != std::string::npos);
}
