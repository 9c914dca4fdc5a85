// How the cost of a training step grows (chapter 18): the decoder-only model of chapter 15, trained
// as a causal language model, one step timed at each width d_model and at each sequence length T,
// and each step split by the profiler into the matmuls, the attention op and the rest. Printed as
// two tables, and drawn as 18-scaling.svg (fixed axes and a fixed list of points, so that every run
// draws the same elements and only the measured values move).
//
// What the profiler counts where (tensor/support/profiler.h, autograd/fused_attention.cpp):
//   "matmul"                        every product autograd records: the q/k/v projection, the output
//                                   projection, the feed-forward network and the output layer; forward
//                                   events, and their backward nodes (dA and dB)
//   "scaled_dot_product_attention"  the fused attention op, and in it its own products Q K^T and
//                                   P V (backward: four), which call the tensor matmul directly: their
//                                   time and their flops are the attention op's, not "matmul"'s
//   the rest                        layer norms, the residual adds, dropout, the softmax cross-entropy,
//                                   the embedding, the gradients' norm, Adam's step, and the time
//                                   between ops
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "claims.h"
#include "nn/adam.h"
#include "tensor/kernels/parallel.h"
#include "tensor/random.h"
#include "tensor/support/profiler.h"
#include "transformer/inspect/diagram.h"
#include "transformer/inspect/svg.h"
#include "transformer/model/decoder_only.h"
#include "transformer/train/forward.h"
#include "transformer/train/trainer.h"

namespace tutorial {

using namespace gradformer;

// The model: chapter 15's decoder-only configuration (pre-LN, dropout 0.1), 2 layers of 8 heads,
// d_ff = 4 d_model, a vocabulary of 256 tokens, positions up to 1024.
constexpr int64_t kScalingLayers = 2, kScalingHeads = 8, kScalingVocab = 256;
constexpr int64_t kScalingWidths[] = {128, 256, 512, 768, 1024};      // at length kWidthSweepLength
constexpr int64_t kScalingLengths[] = {32, 64, 128, 256, 512, 1024};  // at d_model kLengthSweepWidth
constexpr int64_t kWidthSweepLength = 256, kLengthSweepWidth = 128;

inline TransformerConfig scaling_config(int64_t d_model) {
  TransformerConfig c = decoder_only_config(kScalingVocab);
  c.d_model = d_model, c.d_ff = 4 * d_model, c.heads = kScalingHeads, c.layers = kScalingLayers, c.max_len = 1024;
  return c;
}

// One model and one batch of `batch` sequences of `length` random tokens, trained as the gradformer
// program trains a language model: lm_loss's causal language-modelling loss, then Adam. Which tokens
// they are does not change the time, so every step reuses the same batch.
struct LanguageModelStep {
  LanguageModelStep(int64_t d_model, int64_t batch, int64_t length) : model(scaling_config(d_model), /*seed=*/1) {
    model.train();
    Generator gen(/*seed=*/1);
    const auto first_word = static_cast<int64_t>(Vocab::specials.size());    // no <pad>, <s>, </s> or <unk>
    data.inputs = randint({batch, length}, first_word, kScalingVocab, gen);  // [B, T]
    data.targets = randint({batch, length}, first_word, kScalingVocab, gen);
    data.ntokens = batch * length;
  }
  void step() {
    const TrainBatch one{{{[this] { return lm_loss(model, data); }, data.ntokens}}, data.ntokens, data.ntokens};
    train_step(adam, one, /*lr=*/1e-4, /*clip=*/0);
  }

  DecoderOnly model;
  Adam adam{model.parameters(), {.lr = 0, .beta1 = 0.9, .beta2 = 0.98, .eps = 1e-9}};
  LmBatch data;
};

// One step's time, and the parts of it the matmuls and the attention op took, with the flops the
// profiler counted in each.
struct StepCost {
  int64_t d_model = 0, length = 0, batch = 0;
  double step_ms = 0, matmul_ms = 0, attention_ms = 0;
  int64_t matmul_flops = 0, attention_flops = 0;
  double share(double ms) const { return ms / step_ms; }
  double rest_ms() const { return step_ms - matmul_ms - attention_ms; }
};

inline StepCost profiled_step(LanguageModelStep& task) {
  profiler::start();
  {
    const profiler::Scope step("train step", profiler::Phase::Other, profiler::Kind::Region);
    task.step();
  }
  const profiler::Trace trace = profiler::stop();
  StepCost cost;
  cost.step_ms = static_cast<double>(profiler::wall_ns(trace)) * 1e-6;
  for (const profiler::Event& e : trace.events) {
    if (e.kind != profiler::Kind::Op) continue;
    const std::string_view name = e.name;
    const double ms = static_cast<double>(e.duration_ns) * 1e-6;
    if (name == "matmul") {
      cost.matmul_ms += ms;
      cost.matmul_flops += e.flops;
    } else if (name == "scaled_dot_product_attention") {
      cost.attention_ms += ms;
      cost.attention_flops += e.flops;
    }
  }
  return cost;
}

// One point of a sweep: a model of width d_model trained on `tokens` tokens a step, in sequences of
// `length` (batch = tokens / length).
struct ScalingPoint {
  int64_t d_model, length, tokens;
};

// Every point's model is built first and trained `warmup` steps (the first steps fault in fresh
// memory). Then the models take turns, one profiled step each per round,
// so that a busy moment of the shared machine falls on all the points alike rather than on one, and
// each point keeps its fastest step: noise only ever slows a step.
inline std::vector<StepCost> step_costs(const std::vector<ScalingPoint>& points, int warmup, int rounds) {
  std::vector<std::unique_ptr<LanguageModelStep>> tasks;
  for (const ScalingPoint& p : points) {
    tasks.push_back(std::make_unique<LanguageModelStep>(p.d_model, p.tokens / p.length, p.length));
    for (int s = 0; s < warmup; ++s) tasks.back()->step();
  }
  std::vector<StepCost> fastest(points.size());
  for (int round = 0; round < rounds; ++round)
    for (size_t i = 0; i < points.size(); ++i) {
      const StepCost cost = profiled_step(*tasks[i]);
      if (round == 0 || cost.step_ms < fastest[i].step_ms) fastest[i] = cost;
    }
  for (size_t i = 0; i < points.size(); ++i) {
    fastest[i].d_model = points[i].d_model;
    fastest[i].length = points[i].length;
    fastest[i].batch = points[i].tokens / points[i].length;
  }
  return fastest;
}

// ---- what the flops say ------------------------------------------------------------------------------

// The flops of one step, counted from the shapes (B sequences of T tokens, width d, L layers, V
// tokens in the vocabulary, d_ff = 4 d). Forward, per layer:
//   q, k, v projection  [BT, d] x [d, 3d]                           6 BT d^2
//   output projection   [BT, d] x [d, d]                            2 BT d^2
//   feed-forward        [BT, d] x [d, 4d], then [BT, 4d] x [4d, d]  16 BT d^2
//   scores Q K^T        B h times [T, d/h] x [d/h, T]               2 B T^2 d
//   weighted sum P V    B h times [T, T] x [T, d/h]                 2 B T^2 d
// and once, the output layer [BT, d] x [d, V]: 2 BT d V. Backward does each product twice (dA and
// dB; attention's four products are dV, dP, dQ and dK), so the step does three times the forward.
inline int64_t counted_matmul_flops(int64_t d, int64_t batch, int64_t length) {
  const int64_t tokens = batch * length;
  return 3 * (24 * tokens * d * d * kScalingLayers + 2 * tokens * d * kScalingVocab);
}
inline int64_t counted_attention_flops(int64_t d, int64_t batch, int64_t length) {
  return 3 * 4 * batch * length * length * d * kScalingLayers;
}
// Equal when 4 B T^2 d L = 24 B T d^2 L + 2 B T d V, that is at T = 6 d + V / (2 L).
inline double equal_flops_length(int64_t d) {
  return 6.0 * static_cast<double>(d) + static_cast<double>(kScalingVocab) / (2.0 * kScalingLayers);
}

// Where the attention op's time passes the matmuls': the ratio attention / matmuls is interpolated
// (log against log: it grows about as a power of T) between the two lengths around 1, or
// extrapolated from the nearest two when it never crosses 1 inside the sweep.
inline double equal_time_length(const std::vector<StepCost>& lengths) {
  const auto log_ratio = [](const StepCost& c) { return std::log(c.attention_ms / c.matmul_ms); };
  size_t i = 0;
  while (i + 2 < lengths.size() && log_ratio(lengths[i + 1]) < 0) ++i;
  const StepCost &a = lengths[i], &b = lengths[i + 1];
  const double la = std::log(static_cast<double>(a.length)), lb = std::log(static_cast<double>(b.length));
  const double t = -log_ratio(a) / (log_ratio(b) - log_ratio(a));
  const double length = std::exp(la + t * (lb - la));
  return std::isfinite(length) ? length : static_cast<double>(b.length);  // equal ratios: no slope to follow
}

// ---- the tables --------------------------------------------------------------------------------------

inline void print_step_costs(const std::vector<StepCost>& costs) {
  std::printf("d_model  length  batch   step ms   matmul  attention     rest    counted GFLOP: matmul  attention\n");
  for (const StepCost& c : costs)
    std::printf("%7lld  %6lld  %5lld  %8.1f  %6.1f%%  %8.1f%%  %6.1f%%  %29.2f  %9.2f\n",
                static_cast<long long>(c.d_model), static_cast<long long>(c.length), static_cast<long long>(c.batch),
                c.step_ms, 100 * c.share(c.matmul_ms), 100 * c.share(c.attention_ms), 100 * c.share(c.rest_ms()),
                static_cast<double>(c.matmul_flops) * 1e-9, static_cast<double>(c.attention_flops) * 1e-9);
}

// ---- the picture -------------------------------------------------------------------------------------

struct ScalingPanel {
  double left, width;                // where on the page
  std::string axis;                  // what x is
  std::vector<int64_t> xs = {};      // d_model or T of each point
  std::vector<StepCost> costs = {};  // measured at each
};

constexpr const char* kMatmulColour = "#1f77b4";
constexpr const char* kAttentionColour = "#ff7f0e";
constexpr const char* kRestColour = "#c7c7c7";

// x on a log scale from the first point to the last.
inline double scaling_x(const ScalingPanel& p, double value) {
  const double first = static_cast<double>(p.xs.front()), last = static_cast<double>(p.xs.back());
  const double at = std::log(std::clamp(value, first, last) / first) / std::log(last / first);
  return p.left + 20 + at * (p.width - 40);
}

// Top: the step's time, the matmuls' and the attention op's, in ms on a log scale (1 to 10^4).
inline void draw_times(Diagram& d, const ScalingPanel& p, double top, double height) {
  const auto y = [&](double ms) { return top + height - std::clamp(std::log10(ms), 0.0, 4.0) * height / 4; };
  d.rect(p.left, top, p.width, height, "#fff", "#888");
  for (int k = 0; k <= 4; ++k) {
    const double at = top + height - k * height / 4;
    d.arrow({{p.left, at}, {p.left + p.width, at}}, "#e4e4e4", false, false);
    d.text(p.left - 8, at + 4, message(std::pow(10.0, k)), {.size = 12, .anchor = "end"});
  }
  d.text(p.left - 48, top + height / 2, "ms per step, log scale", {.size = 12, .rotate = -90});
  const auto line = [&](auto ms_of, const char* colour) {
    std::vector<Point> points;
    for (size_t i = 0; i < p.costs.size(); ++i)
      points.push_back({scaling_x(p, static_cast<double>(p.xs[i])), y(ms_of(p.costs[i]))});
    d.arrow(points, colour, false, false);
    for (const Point& at : points) d.circle(at.x, at.y, 4, colour, "#222");
  };
  line([](const StepCost& c) { return c.step_ms; }, "#222");
  line([](const StepCost& c) { return c.matmul_ms; }, kMatmulColour);
  line([](const StepCost& c) { return c.attention_ms; }, kAttentionColour);
}

// Bottom: the shares of the step, stacked: the matmuls, the attention op, the rest.
inline void draw_shares(Diagram& d, const ScalingPanel& p, double top, double height) {
  d.rect(p.left, top, p.width, height, "#fff", "#888");
  for (int k = 0; k <= 4; ++k) {
    const double at = top + height - k * height / 4;
    d.arrow({{p.left, at}, {p.left + p.width, at}}, "#e4e4e4", false, false);
    d.text(p.left - 8, at + 4, message(25 * k, "%"), {.size = 12, .anchor = "end"});
  }
  d.text(p.left - 48, top + height / 2, "share of the step", {.size = 12, .rotate = -90});
  for (size_t i = 0; i < p.costs.size(); ++i) {
    const StepCost& c = p.costs[i];
    const double x = scaling_x(p, static_cast<double>(p.xs[i])) - 14;
    const double matmul = std::clamp(c.share(c.matmul_ms), 0.0, 1.0) * height;
    const double attention = std::clamp(c.share(c.attention_ms), 0.0, 1.0 - matmul / height) * height;
    d.rect(x, top + height - matmul, 28, matmul, kMatmulColour, "#222");
    d.rect(x, top + height - matmul - attention, 28, attention, kAttentionColour, "#222");
    d.rect(x, top, 28, height - matmul - attention, kRestColour, "#222");
    d.text(x + 14, top + height + 18, message(p.xs[i]), {.size = 12});
  }
  d.text(p.left + p.width / 2, top + height + 40, p.axis);
}

inline void draw_scaling(const ScalingPanel& widths, const ScalingPanel& lengths) {
  Diagram d(1100, 800);
  d.text(550, 26, message("How a training step's time grows, measured on this machine (", num_threads(), " threads)"),
         {.size = 15});
  d.text(550, 46,
         message("decoder-only, ", kScalingLayers, " layers, ", kScalingHeads,
                 " heads, d_ff = 4 d_model; one run's measurements: the points move from run to run"),
         {.size = 12, .colour = "#555"});
  const double times_top = 110, times_height = 300, shares_top = 450, shares_height = 240;
  d.text(310, 96, message("wider: d_model from ", kScalingWidths[0], " to ", kScalingWidths[4]),
         {.size = 13, .bold = true});
  d.text(850, 96, message("longer: the length T from ", kScalingLengths[0], " to ", kScalingLengths[5]),
         {.size = 13, .bold = true});
  for (const ScalingPanel* p : {&widths, &lengths}) {
    draw_times(d, *p, times_top, times_height);
    draw_shares(d, *p, shares_top, shares_height);
  }
  // Where attention's flops equal the matmuls' (counted) and its time does (measured), on the lengths' panels.
  const double counted = scaling_x(lengths, equal_flops_length(kLengthSweepWidth));
  const double measured = scaling_x(lengths, equal_time_length(lengths.costs));
  for (const auto& [top, height] : {std::pair{times_top, times_height}, std::pair{shares_top, shares_height}}) {
    d.arrow({{counted, top}, {counted, top + height}}, "#c0392b", true, false);
    d.arrow({{measured, top}, {measured, top + height}}, "#2c7a2c", true, false);
  }
  d.text(counted - 4, times_top + 16, "equal flops", {.size = 11, .anchor = "end", .colour = "#c0392b"});
  d.text(measured + 4, times_top + 16, "equal time", {.size = 11, .anchor = "start", .colour = "#2c7a2c"});
  // The legend, under both columns.
  const char* names[] = {"the whole step", "matmuls", "attention op", "the rest (shares only)"};
  const char* colours[] = {"#222", kMatmulColour, kAttentionColour, kRestColour};
  for (int k = 0; k < 4; ++k) {
    const double x = 150 + 230 * k;
    d.rect(x, 762, 14, 14, colours[k], "#222");
    d.text(x + 20, 774, names[k], {.size = 12, .anchor = "start"});
  }
  write_svg(tutorial::output_path("18-scaling.svg"), d.svg());
}

// The chapter's claims: the counts exact, and the directions of the measurements, never their sizes.
inline void check_scaling_claims(const std::vector<StepCost>& widths, const std::vector<StepCost>& lengths,
                                 bool timing_claims) {
  bool counts_agree = true;
  for (const auto* sweep : {&widths, &lengths})
    for (const StepCost& c : *sweep)
      counts_agree = counts_agree && c.matmul_flops == counted_matmul_flops(c.d_model, c.batch, c.length) &&
                     c.attention_flops == counted_attention_flops(c.d_model, c.batch, c.length);
  claim(counts_agree, "the profiler counts the flops the shapes give, for the matmuls and for attention");
  if (!timing_claims) return;
  const StepCost &narrow = widths.front(), &wide = widths.back();
  claim(wide.step_ms > narrow.step_ms, "a wider model's step takes longer");
  claim(wide.share(wide.matmul_ms) > narrow.share(narrow.matmul_ms),
        "in the decoder-only step too, the matmuls' share grows with d_model");
  const StepCost &shortest = lengths.front(), &longest = lengths.back();
  claim(longest.step_ms > shortest.step_ms, "at the same tokens a step, longer sequences take longer");
  claim(longest.share(longest.attention_ms) > shortest.share(shortest.attention_ms),
        "attention's share grows with the length");
}

// ---- the whole measurement ---------------------------------------------------------------------------

struct ScalingRun {
  int64_t width_tokens, length_tokens;  // tokens a step in each sweep (the lengths': batch = tokens / T)
  int warmup, rounds;                   // steps before the timed ones; timed steps per point (the fastest kept)
  bool timing_claims = true;            // check the measurements' directions (a run of one step each cannot)
};

// Both sweeps, printed and drawn. The same tokens a step at every length, so that every term linear
// in the tokens stays the same and only attention's T^2 grows.
inline void measure_step_scaling(const ScalingRun& run) {
  std::printf(
      "decoder-only, %lld layers, %lld heads, d_ff 4 d_model, vocabulary %lld; per point %d warm-up "
      "and %d timed steps, the fastest kept\n",
      static_cast<long long>(kScalingLayers), static_cast<long long>(kScalingHeads),
      static_cast<long long>(kScalingVocab), run.warmup, run.rounds);
  ScalingPanel widths{100, 420,
                      message("d_model (length ", kWidthSweepLength, ", ", run.width_tokens, " tokens a step)")};
  ScalingPanel lengths{640, 420,
                       message("sequence length T (d_model ", kLengthSweepWidth, ", ", run.length_tokens,
                               " tokens a step: batch = tokens / T)")};
  std::vector<ScalingPoint> points;  // the widths, then the lengths
  for (const int64_t d : kScalingWidths) {
    points.push_back({d, kWidthSweepLength, run.width_tokens});
    widths.xs.push_back(d);
  }
  for (const int64_t t : kScalingLengths) {
    points.push_back({kLengthSweepWidth, t, run.length_tokens});
    lengths.xs.push_back(t);
  }
  const std::vector<StepCost> costs = step_costs(points, run.warmup, run.rounds);
  const auto first_length = costs.begin() + static_cast<std::ptrdiff_t>(widths.xs.size());
  widths.costs.assign(costs.begin(), first_length);
  lengths.costs.assign(first_length, costs.end());
  std::printf("\nwider, at length %lld, %lld tokens a step:\n", static_cast<long long>(kWidthSweepLength),
              static_cast<long long>(run.width_tokens));
  print_step_costs(widths.costs);
  std::printf("\nlonger, at d_model %lld, %lld tokens a step:\n", static_cast<long long>(kLengthSweepWidth),
              static_cast<long long>(run.length_tokens));
  print_step_costs(lengths.costs);
  std::printf("\nattention's flops equal the matmuls' at length 6 d_model + V / (2 layers) = %.0f\n",
              equal_flops_length(kLengthSweepWidth));
  std::printf("attention's time equals the matmuls' near length %.0f (measured, interpolated)\n",
              equal_time_length(lengths.costs));
  const StepCost& last = lengths.costs.back();
  std::printf("at length %lld the matmuls ran at %.1f GFLOP/s, attention at %.1f GFLOP/s\n",
              static_cast<long long>(last.length), static_cast<double>(last.matmul_flops) * 1e-6 / last.matmul_ms,
              static_cast<double>(last.attention_flops) * 1e-6 / last.attention_ms);
  draw_scaling(widths, lengths);

  check_scaling_claims(widths.costs, lengths.costs, run.timing_claims);
}

}  // namespace tutorial
