// check_figure_layout FIGURE.svg...: every text of every figure inside its canvas and clear of the
// others (transformer/inspect/svg_layout.h), each problem one line; exit 1 if there is one.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "transformer/inspect/svg_layout.h"

int main(int argc, char** argv) {
  int problems = 0;
  for (int i = 1; i < argc; ++i) {
    std::ifstream file(argv[i]);
    if (!file) {
      std::printf("%s: cannot open\n", argv[i]);
      ++problems;
      continue;
    }
    std::stringstream svg;
    svg << file.rdbuf();
    for (const std::string& problem : gradformer::svg_layout_problems(svg.str())) {
      std::printf("%s: %s\n", argv[i], problem.c_str());
      ++problems;
    }
  }
  std::printf("%d figures, %d problems\n", argc - 1, problems);
  return problems == 0 ? 0 : 1;
}
