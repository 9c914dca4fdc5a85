// Chapter 8: the encoder. The companion program of tutorials/08-encoder.md: every listing of the
// chapter is a piece of this file, and every output the chapter shows is what this program prints.
// It exits non-zero if a claim does not hold. It draws the chapter's figure, 08-encoder-decoder.svg,
// in its working directory (with --quick too).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <memory>
#include <vector>

#include "claims.h"
#include "nn/all.h"
#include "transformer/data/batch_stream.h"
#include "transformer/evaluate/evaluate.h"
#include "transformer/inspect/diagram.h"
#include "transformer/inspect/svg.h"
#include "transformer/model/encoder.h"
#include "transformer/model/encoder_decoder.h"
#include "transformer/model/feed_forward.h"
#include "transformer/train/task.h"

using namespace gradformer;
using namespace tutorial;

namespace {

double rms(const Tensor& t) { return std::sqrt(mean(t * t).item()); }
double norm(const Tensor& t) { return std::sqrt(sum(t * t).item()); }

// One post-LN layer, with its two residual connections or without them
Variable block(const EncoderLayer& layer, const Variable& x, bool residual) {
  const Variable a = layer.self_attn->forward(x, x, x).output;
  const Variable h = layer.norm1->forward(residual ? x + a : a);
  const Variable f = feed_forward(h, *layer.linear1, *layer.linear2, *layer.dropout);
  return layer.norm2->forward(residual ? h + f : f);
}

// The gradient that reaches each layer of a 12-layer stack, with and without the residual connections
void without_residuals() {
  section("without the residual connections");
  const int64_t depth = 12;
  Generator data(2), gen(0);
  const Tensor x0 = randn({4, 16, 64}, data, DType::Float64), upstream = randn({4, 16, 64}, data, DType::Float64);
  Encoder encoder({64, 4, 256, 0.0, NormPlacement::Post, DType::Float64}, depth, gen, std::make_shared<Generator>(0));
  double first_over_last[2] = {0, 0}, input_grad[2] = {0, 0};
  for (bool residual : {true, false}) {
    encoder.zero_grad();
    const Variable x(x0, /*requires_grad=*/true);
    Variable h = x;
    for (const auto& layer : *encoder.layers) h = block(*layer, h, residual);
    h.backward(upstream);
    input_grad[residual ? 0 : 1] = std::sqrt(sum(x.grad() * x.grad()).item());
    std::printf("%-9s |dL/d linear1.weight|, layer 1..12:", residual ? "residual" : "none");
    std::vector<double> g;
    for (const auto& layer : *encoder.layers) {
      g.push_back(std::sqrt(sum(layer->linear1->weight.grad() * layer->linear1->weight.grad()).item()));
      std::printf(" %.3g", g.back());
    }
    first_over_last[residual ? 0 : 1] = g.front() / g.back();
    std::printf("\n");
  }
  std::printf("layer 1 / layer 12: with residuals %.3g, without %.3g\n", first_over_last[0], first_over_last[1]);
  std::printf("|dL/d input|: with residuals %.3g, without %.3g\n", input_grad[0], input_grad[1]);
  claim(std::abs(std::log(first_over_last[1])) > 3 * std::abs(std::log(first_over_last[0])),
        "without residuals the gradient changes far more between the first and the last layer");
}

// ---- a deep model, a high rate, no warmup ----------------------------------------------------------

struct Run {
  double final_loss = 0;                        // the mean of the last 20 steps' losses
  int64_t copied = 0;                           // of 100 fresh sequences, greedy
  std::vector<double> losses;                   // at steps 1, 10, 50, 100, 150, ...
  std::vector<double> first_grads, last_grads;  // |dL/d linear2.weight| per layer, encoder then decoder
};

std::vector<double> layer_grads(const EncoderDecoder& model) {
  std::vector<double> g;
  for (const auto& layer : *model.encoder->layers) g.push_back(norm(layer->linear2->weight.grad()));
  for (const auto& layer : *model.decoder->layers) g.push_back(norm(layer->linear2->weight.grad()));
  return g;
}

// The copy task (chapter 11) with 6 encoder and 6 decoder layers, trained with Adam at a constant
// rate from the first step: no warmup.
Run train_without_warmup(NormPlacement placement, uint64_t seed, double rate, int64_t steps) {
  TransformerConfig config{.src_vocab = 11,
                           .tgt_vocab = 11,
                           .d_model = 32,
                           .d_ff = 128,
                           .heads = 4,
                           .layers = 6,
                           .dropout = 0.0,
                           .norm = placement,
                           .max_len = 16};
  EncoderDecoder model(config, seed);
  Adam adam(model.parameters(), {.lr = rate, .beta1 = 0.9, .beta2 = 0.98, .eps = 1e-9});
  CopyTaskStream data(32, seed);
  Run run;
  double tail = 0;
  for (int64_t step = 1; step <= steps; ++step) {
    const Batch batch = data.next().front();  // a copy-task step is one batch
    const Variable logits = teacher_forced_logits(model, batch);
    const Variable loss = cross_entropy(logits, batch.tgt_out);
    adam.zero_grad();
    loss.backward();
    if (step == 1) run.first_grads = layer_grads(model);
    if (step == steps) run.last_grads = layer_grads(model);
    if (step == 1 || step == 10 || step % 50 == 0) run.losses.push_back(loss.item());
    adam.step();
    if (step > steps - 20) tail += loss.item() / 20;
  }
  run.final_loss = tail;
  Generator fresh(99);
  run.copied = copy_task_exact_match(model, 100, fresh);
  return run;
}

void print_grads(const char* name, const std::vector<double>& grads) {
  std::printf("  %s  encoder", name);
  for (size_t i = 0; i < grads.size(); ++i) std::printf(i == grads.size() / 2 ? "   decoder %.2g" : " %.2g", grads[i]);
  std::printf("\n");
}

void deep_without_warmup(bool quick) {
  section("six layers, a high rate, no warmup");
  const double rate = 5e-3;
  const int64_t steps = quick ? 20 : 400;
  const std::vector<uint64_t> seeds = quick ? std::vector<uint64_t>{1} : std::vector<uint64_t>{1, 2, 3};
  if (quick) std::printf("--quick: one seed for 20 steps, to check that the code runs; not the chapter's numbers\n");
  std::printf("copy task, N = 6, d_model 32, Adam at lr %.0e from step 1, %lld steps of 32 sequences\n", rate,
              static_cast<long long>(steps));
  std::printf("a uniform guess over the 10 tokens scores ln 10 = %.3f\n", std::log(10.0));
  std::printf("seed   post-LN: final loss, copied   pre-LN: final loss, copied\n");
  std::vector<Run> post, pre;
  for (uint64_t seed : seeds) {
    post.push_back(train_without_warmup(NormPlacement::Post, seed, rate, steps));
    pre.push_back(train_without_warmup(NormPlacement::Pre, seed, rate, steps));
    std::printf("%4llu            %.3f  %3lld/100            %.3f  %3lld/100\n", static_cast<unsigned long long>(seed),
                post.back().final_loss, static_cast<long long>(post.back().copied), pre.back().final_loss,
                static_cast<long long>(pre.back().copied));
  }
  std::printf("seed 1, the loss at steps 1, 10, 50, 100, 150, ...:\n");
  for (const auto* runs : {&post, &pre}) {
    std::printf("  %s", runs == &post ? "post-LN" : "pre -LN");
    for (double loss : runs->front().losses) std::printf(" %.2f", loss);
    std::printf("\n");
  }
  std::printf("seed 1, |dL/d linear2.weight| of each layer, bottom to top, at step 1:\n");
  print_grads("post-LN", post.front().first_grads);
  print_grads("pre -LN", pre.front().first_grads);
  std::printf("and at the last step:\n");
  print_grads("post-LN", post.front().last_grads);
  print_grads("pre -LN", pre.front().last_grads);
  // How much of the top layer's gradient reaches the bottom one, in each stack (encoder: layers 0..5
  // of the list, decoder: 6..11).
  auto bottom_over_top = [](const std::vector<double>& g, size_t first) { return g[first] / g[first + 5]; };
  const Run &p = post.front(), &q = pre.front();
  std::printf("bottom layer / top layer at the last step: encoder post %.2g, pre %.2g; decoder post %.2g, pre %.2g\n",
              bottom_over_top(p.last_grads, 0), bottom_over_top(q.last_grads, 0), bottom_over_top(p.last_grads, 6),
              bottom_over_top(q.last_grads, 6));
  if (quick) return;
  claim(bottom_over_top(p.last_grads, 0) < 1e-2 && bottom_over_top(p.last_grads, 6) < 1e-2,
        "post-LN's gradient all but vanishes on its way down to the bottom layers");
  claim(bottom_over_top(q.last_grads, 0) > 0.1 && bottom_over_top(q.last_grads, 6) > 0.1,
        "pre-LN's bottom layers get a gradient of the same order as its top ones");
  int most_copied = 0;  // runs that copy more than half of the sequences back
  for (size_t i = 0; i < seeds.size(); ++i) {
    claim(post[i].final_loss > 0.9 * std::log(10.0), "post-LN without warmup ends near the uniform guess");
    claim(pre[i].final_loss < 0.1 * post[i].final_loss && pre[i].copied > post[i].copied,
          "pre-LN at the same rate learns");
    most_copied += pre[i].copied > 50;
  }
  claim(most_copied >= 2, "pre-LN copies more than half of the sequences back in two runs of three or all three");
}

// ---- the picture: the encoder and the decoder layer, with their residual paths (08-encoder-decoder.svg)

// One sub-layer with its residual connection and its LayerNorm, post-LN: the stream enters at the
// bottom, (cx, y), and leaves at the top, which is returned. The residual path runs on the side
// `side` (-1: left, +1: right) past the sub-layer to the adder: x + Sublayer(x), then LayerNorm.
double residual_unit(Diagram& d, double cx, double y, const char* sublayer, const char* fill, int side) {
  const double box_w = 230, path_x = cx + side * 140, add_y = y - 102;
  d.arrow({{cx, y}, {cx, y - 30}});                          // x into the sub-layer
  d.box(cx - box_w / 2, y - 70, box_w, 40, sublayer, fill);  // Sublayer(x)
  d.arrow({{cx, y - 70}, {cx, add_y + 10}});                 // into the adder
  d.arrow({{cx, y - 12}, {path_x, y - 12}, {path_x, add_y}, {cx + side * 10, add_y}}, "#c0392b");  // x itself
  d.circle(cx, y - 12, 3, "#c0392b", "#c0392b");  // where x branches off
  d.plus(cx, add_y);                              // x + Sublayer(x)
  d.arrow({{cx, add_y - 10}, {cx, y - 132}});
  d.box(cx - box_w / 2, y - 162, box_w, 30, "LayerNorm", "#fbf3c8");
  return y - 162;
}

void draw_encoder_decoder() {
  // The figure draws the library's default placement; were it to change, so must the figure.
  claim(TransformerConfig{}.norm == NormPlacement::Post, "the library's default is post-LN, as drawn");
  Diagram d(900, 730);
  d.text(450, 28, "An encoder layer and a decoder layer, post-LN (the library's default)", {.size = 16});
  d.text(450, 50,
         "every sub-layer: x \u2190 LayerNorm(x + Sublayer(x));  red: the residual path, x added back unchanged",
         {.size = 13, .colour = "#555"});
  const double enc = 230, dec = 640, bottom = 650;
  const double top = bottom - 2 * 162, dtop = bottom - 3 * 162;  // where each stack's layer ends
  d.rect(enc - 170, top - 40, 320, bottom - top + 45, "#f4f4f4", "#999", 10);
  d.text(enc - 160, top - 22, "encoder layer, \u00d7 N (ch 8)", {.size = 12, .anchor = "start"});
  d.rect(dec - 150, dtop - 40, 320, bottom - dtop + 45, "#f4f4f4", "#999", 10);
  d.text(dec + 160, dtop - 22, "decoder layer, \u00d7 N (ch 9)", {.size = 12, .anchor = "end"});

  d.text(enc, bottom + 52, "source: embeddings + positions [B, S, d]", {.size = 12});
  d.arrow({{enc, bottom + 38}, {enc, bottom}}, "#333", false, false);
  residual_unit(d, enc, residual_unit(d, enc, bottom, "Multi-head self-attention", "#fde2c2", -1), "Feed forward",
                "#d2ecf9", -1);

  d.text(dec, bottom + 52, "target, shifted right: embeddings + positions [B, T, d]", {.size = 12});
  d.arrow({{dec, bottom + 38}, {dec, bottom}}, "#333", false, false);
  const double cross_bottom = residual_unit(d, dec, bottom, "Masked multi-head self-attention", "#fde2c2", +1);
  residual_unit(d, dec, residual_unit(d, dec, cross_bottom, "Cross-attention", "#fde2c2", +1), "Feed forward",
                "#d2ecf9", +1);

  // Cross-attention's two inputs: the queries from the decoder below it, keys and values from the
  // encoder's output (the memory), the same for every decoder layer.
  const double cross_y = cross_bottom - 50;  // the middle of the cross-attention's box
  d.arrow({{enc, top}, {enc, top - 60}, {dec - 175, top - 60}, {dec - 175, cross_y}, {dec - 115, cross_y}}, "#1f5fa8");
  d.text((enc + dec) / 2 - 50, top - 68, "memory [B, S, d]: the last encoder layer's output",
         {.size = 12, .colour = "#1f5fa8"});
  d.text(dec - 170, cross_y - 8, "K, V", {.size = 12, .anchor = "start", .colour = "#1f5fa8", .bold = true});
  d.text(dec - 8, cross_bottom - 10, "Q", {.size = 12, .anchor = "end", .bold = true});
  d.text(enc, top - 150, "Cross-attention: the queries Q come from", {.size = 13});
  d.text(enc, top - 132, "the decoder's own stream, the keys and values", {.size = 13});
  d.text(enc, top - 114, "K, V from the memory, the same for every layer", {.size = 13});
  d.arrow({{dec, dtop}, {dec, dtop - 60}});
  d.text(dec, dtop - 68, "to the next layer; after the last: Linear, softmax (ch 10)", {.size = 12});
  write_svg(output_path("08-encoder-decoder.svg"), d.svg());
}

// ---- the picture: post-LN and pre-LN side by side (08-pre-post-ln.svg) ------------------------------

constexpr const char* kStream = "#c0392b";  // the residual stream

// One sub-layer of a layer whose residual stream runs up the line x = cx from y, drawn in red; the
// sub-layer sits on a branch to the right, at bx, and its result comes back into the adder. Post-LN
// puts a LayerNorm on the stream after the adder; pre-LN puts it on the branch, before the sub-layer.
// Returns where the stream leaves the unit, 170 px higher.
double placement_unit(Diagram& d, double cx, double y, const char* sublayer, const char* fill, bool pre) {
  const double bx = cx + 120, add_y = pre ? y - 150 : y - 110;
  d.arrow({{cx, y}, {cx, add_y + 10}}, kStream);  // x itself, up to the adder
  d.circle(cx, y - 10, 3, kStream, kStream);      // where the branch leaves the stream
  const double box_bottom = pre ? y - 85 : y - 40;
  if (pre) {
    d.arrow({{cx, y - 10}, {bx, y - 10}, {bx, y - 40}});
    d.box(bx - 85, y - 70, 170, 30, "LayerNorm", "#fbf3c8");
    d.arrow({{bx, y - 70}, {bx, box_bottom}});
  } else {
    d.arrow({{cx, y - 10}, {bx, y - 10}, {bx, box_bottom}});
  }
  d.box(bx - 85, box_bottom - 40, 170, 40, sublayer, fill);
  d.arrow({{bx, box_bottom - 40}, {bx, add_y}, {cx + 10, add_y}});  // Sublayer(...) into the adder
  d.plus(cx, add_y);
  if (pre) {
    d.arrow({{cx, add_y - 10}, {cx, y - 170}}, kStream, false, false);
    return y - 170;
  }
  d.arrow({{cx, add_y - 10}, {cx, y - 140}}, kStream);
  d.box(cx - 70, y - 170, 140, 30, "LayerNorm", "#fbf3c8");
  return y - 170;
}

// One encoder layer in a placement, from the input at `bottom` up; pre-LN's final norm after the stack.
void placement_column(Diagram& d, double cx, bool pre) {
  const double bottom = 640;
  d.text(cx + 60, 92, pre ? "pre-LN" : "post-LN (the paper; the library's default)", {.size = 15, .bold = true});
  d.text(cx + 60, 114, pre ? "x \u2190 x + Sublayer(LayerNorm(x))" : "x \u2190 LayerNorm(x + Sublayer(x))",
         {.colour = "#555"});
  d.rect(cx - 110, bottom - 372, 350, 362, "#f4f4f4", "#999", 10);
  d.text(cx - 100, bottom - 354, "encoder layer, \u00d7 N", {.size = 12, .anchor = "start"});
  d.text(cx, bottom + 30, "x", {.size = 14, .bold = true});
  d.arrow({{cx, bottom + 14}, {cx, bottom}}, kStream, false, false);
  double top = placement_unit(d, cx, bottom, "Self-attention", "#fde2c2", pre);
  top = placement_unit(d, cx, top, "Feed forward", "#d2ecf9", pre);
  if (pre) {  // the stream is never normalised inside the stack: once, after the last layer
    d.arrow({{cx, top}, {cx, top - 50}}, kStream);
    d.box(cx - 90, top - 80, 180, 30, "final LayerNorm", "#fbf3c8");
    top -= 80;
  }
  d.arrow({{cx, top}, {cx, 150}}, pre ? "#333" : kStream);
  d.text(cx, 142, pre ? "after the last layer" : "to the next layer", {.size = 12, .colour = "#555"});
}

void draw_pre_and_post() {
  Generator gen(0);  // the placements' own layers: only their structure is read
  const Encoder post({64, 4, 256, 0.0, NormPlacement::Post, DType::Float64}, 1, gen, std::make_shared<Generator>(0));
  const Encoder pre({64, 4, 256, 0.0, NormPlacement::Pre, DType::Float64}, 1, gen, std::make_shared<Generator>(0));
  claim(!post.norm && pre.norm, "only the pre-LN encoder ends in a final LayerNorm, as drawn");
  Diagram d(1000, 720);
  d.text(500, 30, "Where the LayerNorm sits: post-LN and pre-LN, one encoder layer each", {.size = 16});
  d.text(500, 52, "red: the residual stream x, from the layer's input to its output; the sub-layers branch off it",
         {.colour = "#555"});
  placement_column(d, 190, false);
  placement_column(d, 660, true);
  d.text(500, 696, "Post-LN normalises the stream after every adder; pre-LN only adds to it, and normalises once.",
         {.colour = "#555"});
  write_svg(output_path("08-pre-post-ln.svg"), d.svg());
}

// ---- the picture: the position-wise feed-forward network (08-feed-forward.svg) ------------------------

constexpr double kRowH = 6, kFeatureW = 1.5;  // a [T, n] activation: T rows of 6 px, n features of 1.5 px

// An activation [T, n] as T thin rows, centred on cx from `top`, row `follow` in red; its label on the right.
void activation_block(Diagram& d, double cx, double top, const Tensor& t, int64_t follow, const std::string& label) {
  const int64_t rows = t.size(0);
  const double w = kFeatureW * static_cast<double>(t.size(1));
  for (int64_t r = 0; r < rows; ++r)
    d.rect(cx - w / 2, top + kRowH * static_cast<double>(r), w, kRowH, r == follow ? "#f4a6a6" : "#d2ecf9", "#8aa");
  d.text(590, top + kRowH * static_cast<double>(rows) / 2 + 5, label, {.anchor = "start"});
  d.text(cx - w / 2 - 8, top + kRowH * (static_cast<double>(follow) + 1) + 3, message("position ", follow),
         {.size = 11, .anchor = "end", .colour = "#c0392b"});
}

void draw_feed_forward() {
  Generator gen(0);  // the chapter's layer sizes (d 64, d_ff 256) with weights of its own
  const Encoder encoder({64, 4, 256, 0.0, NormPlacement::Post, DType::Float64}, 1, gen, std::make_shared<Generator>(0));
  const EncoderLayer& layer = (*encoder.layers)[0];
  const int64_t T = 16, follow = 3;  // 16 positions, as the chapter's inputs [4, 16, 64]; one position followed
  const Tensor x = randn({T, layer.linear1->weight.size(1)}, gen, DType::Float64);  // [T, d_model]
  const Tensor h = relu(layer.linear1->forward(Variable(x))).value();               // [T, d_ff]
  const Tensor y = feed_forward(Variable(x), *layer.linear1, *layer.linear2, *layer.dropout).value();
  Tensor x_changed = x.clone();
  x_changed.select(0, follow).fill_(1.0);  // another input at one position
  const Tensor change = feed_forward(Variable(x_changed), *layer.linear1, *layer.linear2, *layer.dropout).value() - y;
  const Tensor moved = sum(change * change, {1});  // [T]: how far each position's output moved
  claim(sum(moved).item() == moved.at({follow}) && moved.at({follow}) > 0, "each position goes through on its own");
  const double zeros = mean(eq(h, zeros_like(h)).to(DType::Float64)).item();
  const auto shape = [](const Tensor& t) { return to_string(t.shape()); };

  Diagram d(1000, 670);
  d.text(500, 30, "The position-wise feed-forward network: FFN(x) = max(0, x W\u2081 + b\u2081) W\u2082 + b\u2082",
         {.size = 16});
  d.text(500, 52, "one row per position; the same weights for every row, and no row sees another (red: position 3)",
         {.colour = "#555"});
  const double cx = 330;
  activation_block(d, cx, 80, x, follow, "x [T, d_model] = " + shape(x));
  d.arrow({{cx, 180}, {cx, 204}});
  d.box(cx - 150, 206, 300, 40, "linear1: x W\u2081 + b\u2081", "#fde2c2");
  d.text(590, 224,
         message("weight ", shape(layer.linear1->weight.value()), ", bias ", shape(layer.linear1->bias.value())),
         {.anchor = "start"});
  d.text(590, 242, "(stored [out, in], as PyTorch: W\u2081 is its transpose)",
         {.size = 12, .anchor = "start", .colour = "#555"});
  d.arrow({{cx, 246}, {cx, 270}});
  d.box(cx - 150, 272, 300, 34, "ReLU: max(0, \u00b7), element by element", "#fbf3c8");
  d.arrow({{cx, 306}, {cx, 330}});
  activation_block(d, cx, 332, h, follow, "hidden [T, d_ff] = " + shape(h));
  d.text(590, 405, message(fixed(100 * zeros, 0), "% of it is 0 after the ReLU"),
         {.size = 12, .anchor = "start", .colour = "#555"});
  d.arrow({{cx, 432}, {cx, 456}});
  d.box(cx - 150, 458, 300, 40, "linear2: h W\u2082 + b\u2082", "#fde2c2");
  d.text(590, 483,
         message("weight ", shape(layer.linear2->weight.value()), ", bias ", shape(layer.linear2->bias.value())),
         {.anchor = "start"});
  d.arrow({{cx, 498}, {cx, 522}});
  activation_block(d, cx, 524, y, follow, "FFN(x) [T, d_model] = " + shape(y));
  const int64_t d_model = layer.linear1->weight.size(1), d_ff = layer.linear1->weight.size(0);
  d.text(500, 656,
         message("d_model ", d_model, " \u2192 d_ff ", d_ff, " \u2192 d_model ", layer.linear2->weight.size(0),
                 ": each row widened ", d_ff / d_model, " times, then brought back"),
         {.colour = "#555"});
  write_svg(output_path("08-feed-forward.svg"), d.svg());
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  draw_encoder_decoder();
  draw_pre_and_post();
  draw_feed_forward();
  without_residuals();
  section("post-LN and pre-LN");
  const int64_t layers = 6;
  Generator data(1);
  const Tensor x0 = randn({4, 16, 64}, data, DType::Float64);
  const Tensor upstream = randn({4, 16, 64}, data, DType::Float64);
  double growth[2] = {0, 0}, spread[2] = {0, 0};
  bool increasing = true;
  for (NormPlacement placement : {NormPlacement::Post, NormPlacement::Pre}) {
    const int p = placement == NormPlacement::Pre;
    Generator gen(0);
    Encoder encoder({64, 4, 256, 0.0, placement, DType::Float64}, layers, gen, std::make_shared<Generator>(0));
    Variable h(x0);
    std::printf("%s-LN  rms of x after each layer:", p ? "pre " : "post");
    std::vector<double> sizes;
    for (const auto& layer : *encoder.layers) {
      h = layer->forward(h);
      sizes.push_back(rms(h.value()));
      std::printf(" %.2f", sizes.back());
    }
    growth[p] = sizes.back() / sizes.front();
    for (size_t i = 1; i < sizes.size(); ++i) increasing = increasing && (!p || sizes[i] > sizes[i - 1]);
    Variable out = encoder.norm ? encoder.norm->forward(h) : h;
    out.backward(upstream);
    std::printf("\n%s-LN  |dL/d linear2.weight| per layer:  ", p ? "pre " : "post");
    double lo = 1e300, hi = 0;
    for (const auto& layer : *encoder.layers) {
      const double g = std::sqrt(sum(layer->linear2->weight.grad() * layer->linear2->weight.grad()).item());
      lo = std::min(lo, g), hi = std::max(hi, g);
      std::printf(" %.2f", g);
    }
    spread[p] = hi / lo;
    std::printf("\n");
  }
  std::printf("growth of x over 6 layers: post %.2f, pre %.2f; gradient max/min over layers: post %.2f, pre %.2f\n",
              growth[0], growth[1], spread[0], spread[1]);
  claim(std::abs(growth[0] - 1) < 0.05, "post-LN keeps the residual stream at unit size");
  claim(increasing && growth[1] > 1.1, "pre-LN's residual stream grows with depth (hence the final norm)");
  deep_without_warmup(quick);
  return failures == 0 ? 0 : 1;
}
