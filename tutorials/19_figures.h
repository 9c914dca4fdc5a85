// Chapter 19's figure: GPT-2's block, pre-LN, with its tensors' names and GPT-2 small's shapes, and
// its Conv1D weight [in, out] beside a Linear's [out, in] (19-gpt2-block.svg), drawn by
// tutorials/19-gpt2.cpp. A header of its own, so that the program stays within its length.
#pragma once

#include <map>
#include <string>

#include "claims.h"
#include "transformer/inspect/diagram.h"
#include "transformer/inspect/svg.h"
#include "transformer/model/decoder_only.h"
#include "transformer/store/import_gpt2.h"

namespace tutorial {

// GPT-2's name with its shape in GPT-2's file: "attn.c_attn  [768, 2304]".
inline std::string named_shape(const std::map<std::string, gradformer::Shape>& shapes, const std::string& name) {
  const gradformer::Shape& s = shapes.at("h.0." + name + ".weight");
  return gradformer::message(name, "  [", s[0], ", ", s[1], "]");
}

// One sub-layer of the block: from the stream at (stream_x, y) through its boxes (bottom to top)
// and back into the stream's adder above them. Returns the adder's height.
inline double sublayer(gradformer::Diagram& d, double stream_x, double y, const std::vector<std::string>& boxes) {
  const double cx = 330, w = 220;
  d.arrow({{stream_x, y}, {cx, y}, {cx, y - 14}}, "#c0392b");
  d.circle(stream_x, y, 3, "#c0392b", "#c0392b");
  double top = y - 14;
  for (size_t i = 0; i < boxes.size(); ++i) {
    d.box(cx - w / 2, top - 30, w, 30, boxes[i], i == 0 ? "#fbf3c8" : "#fde2c2");
    top -= 30;
    if (i + 1 < boxes.size()) d.arrow({{cx, top}, {cx, top - 14}}), top -= 14;
  }
  d.arrow({{cx, top}, {cx, top - 16}, {stream_x + 10, top - 16}});
  d.plus(stream_x, top - 16);
  return top - 16;
}

// GPT-2's block at the left: the residual stream h (red) rising through two adders, each fed by a
// sub-layer that reads h through its LayerNorm; ln_f and the tied output on top.
inline void gpt2_block(gradformer::Diagram& d, const gradformer::TransformerConfig& c,
                       const std::map<std::string, gradformer::Shape>& shapes) {
  using gradformer::message;
  const double x = 110;
  d.text(x, 676, message("h = wte[u] + wpe[0 .. T-1]   [T, ", c.d_model, "]"), {.size = 12, .anchor = "start"});
  d.rect(40, 150, 440, 500, "none", "#999", 10);
  d.text(470, 170, message("block h.i, \u00d7 ", c.layers), {.size = 12, .anchor = "end", .colour = "#555"});
  const double attn = sublayer(d, x, 620,
                               {"ln_1", named_shape(shapes, "attn.c_attn") + ": q | k | v",
                                message("causal attention, ", c.heads, " heads"), named_shape(shapes, "attn.c_proj")});
  d.arrow({{x, 662}, {x, attn + 10}}, "#c0392b");
  const double mlp =
      sublayer(d, x, attn - 26,
               {"ln_2", named_shape(shapes, "mlp.c_fc"), "gelu (tanh form)", named_shape(shapes, "mlp.c_proj")});
  d.arrow({{x, attn - 10}, {x, mlp + 10}}, "#c0392b");
  d.text(446, attn + 79, "attn", {.size = 12, .anchor = "start", .colour = "#555", .bold = true});
  d.text(446, mlp + 79, "mlp", {.size = 12, .anchor = "start", .colour = "#555", .bold = true});
  d.arrow({{x, mlp - 10}, {x, 126}}, "#c0392b");
  d.box(x - 50, 96, 100, 30, "ln_f", "#fbf3c8");
  d.arrow({{x + 50, 111}, {x + 72, 111}});
  d.text(x + 78, 115, message("logits = ln_f(h) wte\u1d40   [T, ", c.tgt_vocab, "]"), {.size = 12, .anchor = "start"});
}

// A weight drawn to scale, cut into W^Q, W^K, W^V: side by side as columns (Conv1D, [in, out]) or
// stacked as rows (Linear, [out, in]).
inline void qkv_weight(gradformer::Diagram& d, double x, double y, double thin, double wide, bool columns) {
  const char* fills[] = {"#dbe9f6", "#fde2c2", "#d4f0d4"};
  const char* names[] = {"W^Q", "W^K", "W^V"};
  for (int i = 0; i < 3; ++i) {
    const double part = wide / 3;
    const double rx = columns ? x + part * i : x, ry = columns ? y : y + part * i;
    d.rect(rx, ry, columns ? part : thin, columns ? thin : part, fills[i], "#333");
    d.text(rx + (columns ? part : thin) / 2, ry + (columns ? thin : part) / 2 + 5, names[i],
           {.size = 14, .bold = true});
  }
}

inline void draw_gpt2_block(const std::string& path, const gradformer::TransformerConfig& c) {
  using gradformer::message;
  std::map<std::string, gradformer::Shape> shapes;
  for (const gradformer::Gpt2Name& name : gradformer::gpt2_names({c.tgt_vocab, c.d_model, c.max_len, 1, c.d_ff}))
    shapes[name.gpt2] = name.shape;
  gradformer::Diagram d(1000, 700);
  d.text(500, 28, "GPT-2's block, pre-LN, and its Conv1D weights, at GPT-2 small's sizes", {.size = 16});
  d.text(500, 50, "red: the residual stream h; each sub-layer reads it through a LayerNorm and adds its output back",
         {.size = 13, .colour = "#555"});
  gpt2_block(d, c, shapes);
  const gradformer::Shape& w = shapes.at("h.0.attn.c_attn.weight");  // [in, out]
  const double in = static_cast<double>(w[0]), out = static_cast<double>(w[1]), scale = 270 / out;
  d.text(760, 96, "attn.c_attn's weight, stored two ways", {.size = 14, .bold = true});
  d.text(760, 120, message("Conv1D (GPT-2's file): y = x W + b, W [in, out] = [", w[0], ", ", w[1], "]"), {.size = 12});
  d.text(625, 154, message("out ", w[1], ": q | k | v"), {.size = 11, .anchor = "start", .colour = "#555"});
  d.text(617, 166 + in * scale / 2, message("in ", w[0]), {.size = 11, .anchor = "end", .colour = "#555"});
  qkv_weight(d, 625, 162, in * scale, out * scale, true);
  d.arrow({{760, 172 + in * scale}, {760, 300}});
  d.text(770, 286, "transposed on import", {.size = 12, .anchor = "start"});
  d.text(760, 326, message("Linear (in_proj_weight): y = x W\u1d40 + b, W [out, in] = [", w[1], ", ", w[0], "]"),
         {.size = 12});
  d.text(760 - in * scale / 2, 352, message("in ", w[0]), {.size = 11, .anchor = "start", .colour = "#555"});
  d.text(705, 366 + out * scale / 2, message("out ", w[1]), {.size = 11, .anchor = "end", .colour = "#555"});
  qkv_weight(d, 760 - in * scale / 2, 360, in * scale, out * scale, false);
  d.text(760, 662, "each output: x times a column of the Conv1D weight,", {.size = 12});
  d.text(760, 680, "the same numbers as a row of the Linear's weight", {.size = 12});
  claim(w[1] == 3 * w[0], "c_attn's outputs are q, k and v side by side");
  gradformer::write_svg(path, d.svg());
}

}  // namespace tutorial
