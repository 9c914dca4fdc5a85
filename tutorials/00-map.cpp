// Chapter 0, the map: draws the paper's figure 1 with every box labelled by the chapter that builds
// it, as an SVG a browser opens, and runs the C++ primer's listings. The chapter embeds
// tutorials/figures/00-transformer.svg; the test suite runs this program and checks that the
// committed picture is exactly what it draws. It also draws the "you are here" map that opens each
// chapter from the book's route (`route()`, the table of chapter 0): figures/here-01.svg to here-21.svg.
//
//   ./build/tutorials/00-map [--figure path.svg]     (default: 00-transformer.svg here)
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/all.h"
#include "claims.h"  // output_path
#include "nn/adam.h"
#include "transformer/inspect/diagram.h"
#include "transformer/inspect/svg.h"  // write_svg

using namespace gradformer;

namespace {

// ---- the primer: NumPy and PyTorch habits, in C++ ---------------------------------------------------
void primer() {
  // x = np.arange(6, dtype=np.float32).reshape(2, 3);  x[:, 1:3]
  const Tensor x = arange(6).reshape({2, 3});
  const Tensor right = x.slice(1, 1, 3);  // dim 1, from 1 up to (not including) 3: a view, no copy
  std::cout << "x[:, 1:3] = " << right << "\n";

  // A Tensor is numbers. A Variable is a Tensor that remembers how it was made, for backward().
  Variable w(tensor({0.5, -1, 2}, {3}), /*requires_grad=*/true);
  Variable loss = sum(w * w);  // 0.25 + 1 + 4
  loss.backward();             // d loss / d w = 2 w
  std::cout << "loss " << loss.item() << ", grad " << w.grad() << "\n";

  // A lambda is an unnamed function; [&] lets it use the variables around it (here: x).
  auto row_sum = [&](int64_t row) { return sum(x.select(0, row)).item(); };
  std::cout << "row sums " << row_sum(0) << " " << row_sum(1) << "\n";

  // Designated initialisers name an options struct's fields, like Python's keyword arguments;
  // the fields not named keep their defaults.
  Adam adam({w}, {.lr = 0.1, .beta2 = 0.98});
  std::cout << "Adam lr " << adam.lr() << "\n";

  // Tensors share their storage, as NumPy views do: a copy of the handle is the same numbers.
  Tensor alias = x;  // no copy of the data: both names point at one storage
  alias.fill_(7);
  std::cout << "after alias.fill_(7), x[0, 0] = " << x.at({0, 0}) << "; x.clone() would have copied\n";
}

std::ostringstream svg;

// A box with its label and, in a tab on its right edge, the chapters that build it.
void box(int x, int y, int w, int h, const char* label, const char* chapters, const char* fill) {
  svg << "<rect x='" << x << "' y='" << y << "' width='" << w << "' height='" << h << "' rx='6' fill='" << fill
      << "' stroke='#333'/>\n";
  svg << "<text x='" << x + w / 2 - 18 << "' y='" << y + h / 2 + 5 << "' text-anchor='middle'>" << label << "</text>\n";
  svg << "<rect x='" << x + w - 46 << "' y='" << y + h / 2 - 11 << "' width='40' height='22' rx='11' fill='#fff' "
      << "stroke='#555'/>\n";
  svg << "<text x='" << x + w - 26 << "' y='" << y + h / 2 + 5 << "' text-anchor='middle' font-size='12'>" << chapters
      << "</text>\n";
}

void arrow(int x1, int y1, int x2, int y2) {
  svg << "<line x1='" << x1 << "' y1='" << y1 << "' x2='" << x2 << "' y2='" << y2
      << "' stroke='#333' stroke-width='1.5' marker-end='url(#head)'/>\n";
}

void text(int x, int y, const char* words, const char* anchor = "middle", int size = 14) {
  svg << "<text x='" << x << "' y='" << y << "' text-anchor='" << anchor << "' font-size='" << size << "'>" << words
      << "</text>\n";
}

// The encoder's or the decoder's input: embedding, then + positional encoding (chapters 4, 7, 10).
void input(int x, const char* what, const char* embedding) {
  text(x + 130, 790, what);
  arrow(x + 130, 775, x + 130, 742);
  box(x, 702, 260, 40, embedding, "4, 10", "#f6d7d7");
  arrow(x + 130, 702, x + 130, 676);
  svg << "<circle cx='" << x + 130 << "' cy='" << 664 << "' r='12' fill='#fff' stroke='#333'/>\n";
  text(x + 130, 669, "+");
  text(x + 150, 669, "positional encoding (ch 7)", "start", 12);
  arrow(x + 130, 652, x + 130, 626);
}

void add_norm(int x, int y) { box(x + 20, y, 220, 30, "Add &amp; Norm", "8", "#fbf3c8"); }

// A residual connection: x branches off the stream at (x, y), runs beside the sub-layer at `side`,
// and enters the Add & Norm box at height `add_y` through its edge `edge`: LayerNorm(x + Sublayer(x)).
void residual(int x, int y, int side, int add_y, int edge) {
  svg << "<circle cx='" << x << "' cy='" << y << "' r='3' fill='#c0392b'/>\n";
  svg << "<polyline points='" << x << "," << y << " " << side << "," << y << " " << side << "," << add_y << " " << edge
      << "," << add_y << "' fill='none' stroke='#c0392b' stroke-width='1.5' marker-end='url(#head)'/>\n";
}

// ---- the route: the chapters, what each builds on, and a "you are here" map for each ----------------
struct RouteChapter {
  int number = 0;
  const char* name = "";
  std::vector<int> needs;  // the chapters it builds on directly (chapter 0's table, "needs")
  bool optional = false;
};

const std::vector<RouteChapter>& route() {
  static const std::vector<RouteChapter> chapters = {
      {0, "The map", {}, false},
      {1, "Tensors", {}, false},
      {2, "Matrix multiply", {1}, true},
      {3, "Autograd", {1}, false},
      {4, "Layers and training", {3}, false},
      {5, "Attention", {4}, false},
      {6, "Multi-head attention", {5}, false},
      {7, "Positional encoding", {4}, false},
      {8, "The encoder", {6, 7}, false},
      {9, "The decoder", {8}, false},
      {10, "The full model", {9}, false},
      {11, "The training step", {10}, false},
      {12, "Running training", {11}, false},
      {13, "Decoding", {11}, false},
      {14, "Translation", {12, 13}, false},
      {15, "One block, three architectures", {12, 13}, false},
      {16, "Tokens", {14, 15}, false},
      {17, "Encoder-only (BERT)", {12, 15}, true},
      {18, "Where the time goes", {2, 12, 15}, true},
      {19, "GPT-2", {15, 16}, true},
      {20, "From GPT-2 to Llama", {19}, true},
      {21, "From a language model to an assistant", {13, 16}, true},
  };
  return chapters;
}

// The book's four parts, each a run of chapters with its name above it.
struct RoutePart {
  const char* name;
  int first, last;
};

std::string you_are_here_svg(int here) {
  using gradformer::Diagram;
  const std::vector<RoutePart> parts = {
      {"deep learning", 0, 4}, {"the model", 5, 10}, {"training it and using it", 11, 14}, {"the family", 15, 21}};
  const double box = 38, gap = 6, part_gap = 18, top = 30;
  Diagram d(static_cast<double>(route().size()) * (box + gap) + 3 * part_gap + 24, 96);
  const RouteChapter& chapter = route()[static_cast<size_t>(here)];
  auto is_need = [&](int n) {
    for (int need : chapter.needs)
      if (need == n) return true;
    return false;
  };
  double x = 12;
  for (const RoutePart& part : parts) {
    const double width = (part.last - part.first + 1) * (box + gap) - gap;
    d.text(x + width / 2, top - 10, part.name, {.size = 12, .colour = "#555"});
    for (int n = part.first; n <= part.last; ++n, x += box + gap) {
      const RouteChapter& c = route()[static_cast<size_t>(n)];
      const char* fill = n == here ? "#c0392b" : is_need(n) ? "#f5c6a5" : c.optional ? "#eeeeee" : "#ffffff";
      d.rect(x, top, box, 28, fill, c.optional ? "#999" : "#333", 5);
      d.text(x + box / 2, top + 19, std::to_string(n),
             {.size = 13,
              .colour = n == here    ? "#fff"
                        : c.optional ? "#777"
                                     : "#222",
              .bold = n == here});
    }
    x += part_gap - gap + gap;
  }
  std::string needs;
  for (int need : chapter.needs) needs += (needs.empty() ? "" : ", ") + std::to_string(need);
  std::string caption = "you are here: " + std::to_string(here) + ", " + chapter.name;
  if (!needs.empty()) caption += "; it builds on " + needs + " (light)";
  caption += "; grey: optional";
  d.text(12, 84, caption, {.size = 12, .anchor = "start", .colour = "#333"});
  return d.svg();
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = tutorial::output_path("00-transformer.svg");
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--figure" && i + 1 < argc)
      path = argv[++i];
    else {
      std::fprintf(stderr, "usage: 00-map [--figure path.svg]\n");
      return 2;
    }
  }

  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='760' height='900' viewBox='0 0 760 900' "
      << "font-family='Helvetica, Arial, sans-serif' font-size='14'>\n"
      << "<defs><marker id='head' markerWidth='8' markerHeight='8' refX='7' refY='4' orient='auto'>"
      << "<path d='M0,0 L8,4 L0,8 z' fill='#333'/></marker></defs>\n"
      << "<rect width='760' height='900' fill='#fff'/>\n";
  text(380, 28, "The Transformer (Vaswani et al., 2017, figure 1), by chapter", "middle", 17);

  // ---- the encoder (left): N x [self-attention, add & norm, feed-forward, add & norm] ----------
  input(60, "inputs: source tokens (ch 11, 14)", "Input embedding");
  svg << "<rect x='40' y='356' width='300' height='270' rx='10' fill='#f2f2f2' stroke='#999'/>\n";
  text(28, 496, "N x", "end");
  text(332, 614, "encoder layer (ch 8)", "end", 12);
  box(60, 554, 260, 40, "Multi-head attention", "5, 6", "#fde2c2");
  arrow(190, 626, 190, 594);
  add_norm(60, 500);
  arrow(190, 554, 190, 530);
  box(60, 426, 260, 40, "Feed forward", "8", "#d2ecf9");
  arrow(190, 500, 190, 466);
  add_norm(60, 372);
  arrow(190, 426, 190, 402);
  residual(190, 612, 52, 515, 80);
  residual(190, 484, 52, 387, 80);

  // ---- the decoder (right): N x [masked self-attention, cross-attention, feed-forward] ----------
  input(420, "outputs, shifted right (ch 11)", "Output embedding");
  svg << "<rect x='400' y='196' width='300' height='430' rx='10' fill='#f2f2f2' stroke='#999'/>\n";
  text(712, 416, "x N", "start");
  text(408, 614, "decoder layer (ch 9)", "start", 12);
  box(420, 554, 260, 40, "Masked multi-head attention", "5, 9", "#fde2c2");
  arrow(550, 626, 550, 594);
  add_norm(420, 500);
  arrow(550, 554, 550, 530);
  box(420, 426, 260, 40, "Cross-attention", "6, 9", "#fde2c2");
  arrow(550, 500, 550, 466);
  add_norm(420, 372);
  arrow(550, 426, 550, 402);
  box(420, 290, 260, 40, "Feed forward", "8", "#d2ecf9");
  arrow(550, 372, 550, 330);
  add_norm(420, 236);
  arrow(550, 290, 550, 266);
  residual(550, 612, 690, 515, 660);
  residual(550, 484, 690, 387, 660);
  residual(550, 350, 690, 251, 660);
  // the encoder's output (the memory) feeds every decoder layer's cross-attention keys and values
  svg << "<polyline points='190,372 190,340 370,340 370,446 420,446' fill='none' stroke='#333' stroke-width='1.5' "
      << "marker-end='url(#head)'/>\n";
  text(280, 332, "memory [B, S, d]", "middle", 12);

  // ---- the output: linear to the vocabulary, softmax -------------------------------------------
  box(420, 150, 260, 36, "Linear", "4, 10", "#e0d7f6");
  arrow(550, 236, 550, 186);
  box(420, 96, 260, 36, "Softmax", "4", "#d9f2d9");
  arrow(550, 150, 550, 132);
  arrow(550, 96, 550, 70);
  text(550, 62, "next-token probabilities (ch 13: decoding)");

  // ---- what every box stands on, and what is done with the whole ----------------------------------
  svg << "<rect x='40' y='820' width='680' height='62' rx='8' fill='#eef3ee' stroke='#8a8'/>\n";
  text(380, 843, "Under every box: tensors and views (ch 1), matrix multiply (ch 2), autograd (ch 3),");
  text(380, 865, "layers, losses and optimizers (ch 4). Around the whole: training (ch 11, 12), translation (ch 14).");
  text(190, 150, "The full model and its", "middle", 13);
  text(190, 168, "parameter count: ch 10", "middle", 13);
  svg << "<text x='190' y='214' text-anchor='middle' font-size='13' fill='#c0392b'>red: the residual "
         "connections,</text>\n"
      << "<text x='190' y='232' text-anchor='middle' font-size='13' fill='#c0392b'>x added back after each "
      << "sub-layer</text>\n";
  svg << "</svg>\n";

  primer();

  std::ofstream out(path);
  out << svg.str();
  out.close();
  if (!out) {
    std::fprintf(stderr, "00-map: cannot write %s\n", path.c_str());
    return 1;
  }
  std::cout << "wrote " << path << "\n";
  for (const RouteChapter& c : route())
    if (c.number > 0) {
      char name[32];
      std::snprintf(name, sizeof name, "here-%02d.svg", c.number);
      write_svg(tutorial::output_path(name), you_are_here_svg(c.number));
    }
  return 0;
}
