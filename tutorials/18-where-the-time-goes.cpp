// Chapter 18: where the time goes. The companion program of tutorials/18-where-the-time-goes.md, in
// the chapter's order: what the profiler costs, the machine's two ceilings (peak GFLOP/s, memory
// bandwidth), the profile of one copy-task training step at d_model 128, what a tiny op costs, each
// op of the step under its roofline (a table, and 18-roofline.svg, drawn in both runs), how a
// decoder-only model's step grows with d_model and with the sequence length (18-scaling.svg,
// step_scaling.h), and one speed-up: Adam's update loop as first written against the library's.
//
//   18-where-the-time-goes            the chapter's measurements
//   18-where-the-time-goes --quick    the same code with fewer repetitions (what the test suite runs)
//
// It exits with a non-zero status if a claim the chapter makes does not hold.
#define GRADFORMER_LADDER_NO_MAIN
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "02-matmul.cpp"  // ladder::fma_flops, chapter 2's FMA loops, run here on this machine
#include "claims.h"
#include "memory_bandwidth.h"  // cpu_seconds, wall_seconds, bandwidth_gbs
#include "nn/all.h"
#include "step_scaling.h"  // measure_step_scaling: the step against d_model and the length
#include "tensor/kernels/parallel.h"
#include "tensor/support/memory.h"
#include "tensor/support/profiler.h"
#include "transformer/data/batch_stream.h"
#include "transformer/inspect/diagram.h"
#include "transformer/inspect/svg.h"
#include "transformer/model/encoder_decoder.h"
#include "transformer/train/trainer.h"

// A sanitizer's build instruments every load and store: what it times is mostly the sanitizer, so
// the claim about speed is not made there.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define CHAPTER_16_SANITIZED 1
#else
#define CHAPTER_16_SANITIZED 0
#endif

using namespace gradformer;
using namespace tutorial;

namespace {

// ---- 1. the machine's two ceilings -----------------------------------------------------------------

// Peak: chapter 2's FMA loops on one core (AVX2, and AVX-512 where the CPU has it), the best of
// several runs, times the threads.
double peak_gflops(int runs) {
  double best = 0;
#if defined(LADDER_HAVE_X86)
  if (matmul_kernel_available(MatmulKernel::Avx2)) best = ladder::best_fma_gflops(ladder::fma_flops, runs);
  if (matmul_kernel_available(MatmulKernel::Avx512))
    best = std::max(best, ladder::best_fma_gflops(ladder::fma_flops_avx512, runs));
#endif
  return best * num_threads();
}

// Bandwidth: STREAM's "add" over three arrays of 64 MB (bandwidth_gbs, in memory_bandwidth.h, which
// chapter 19 shares).

// ---- 2. one training step, profiled ------------------------------------------------------------------

// The copy task at the Annotated Transformer's settings (2 layers, 8 heads, batches of 80), at the
// width given, with d_ff = 4 d_model.
struct CopyTask {
  explicit CopyTask(int64_t d_model) : model(config(d_model), /*seed=*/1) { model.train(); }
  static TransformerConfig config(int64_t d_model) {
    TransformerConfig c = TransformerConfig::tutorial(11, 11);
    c.d_model = d_model, c.d_ff = 4 * d_model, c.heads = 8, c.layers = 2;
    return c;
  }
  void step() { train_step(adam, translation_batch(model, batches.next(), loss), lr, 0); }  // chapter 11's step

  EncoderDecoder model;
  Adam adam{model.parameters(), {.lr = 0, .beta1 = 0.9, .beta2 = 0.98, .eps = 1e-9}};
  CopyTaskStream batches{/*batch_size=*/80, /*seed=*/1};
  CrossEntropyOptions loss{.ignore_index = Vocab::pad};
  double lr = 1e-4;
};

// The next step of the task, profiled.
profiler::Trace profile_one_step(CopyTask& task) {
  profiler::start();
  {
    const profiler::Scope step("train step", profiler::Phase::Other, profiler::Kind::Region);
    task.step();  // the copy task's train_step, as in chapter 11
  }
  return profiler::stop();
}

// One step, profiled, after warm-up steps: the first steps start the pool's threads and fault in
// fresh memory, which later steps do not. Of `tries` profiled steps the
// fastest: on a shared machine, noise only ever slows a step.
profiler::Trace profile_copy_step(int64_t d_model, int warmup, int tries) {
  CopyTask task(d_model);
  for (int step = 0; step < warmup; ++step) task.step();
  profiler::Trace best = profile_one_step(task);
  for (int t = 1; t < tries; ++t) {
    profiler::Trace trace = profile_one_step(task);
    if (profiler::wall_ns(trace) < profiler::wall_ns(best)) best = std::move(trace);
  }
  return best;
}

// ---- 3. the roofline ---------------------------------------------------------------------------------

struct OpTotal {
  std::string name;
  profiler::Phase phase;
  int64_t calls = 0, ns = 0, flops = 0, bytes = 0;
};

std::vector<OpTotal> op_totals(const profiler::Trace& trace) {
  std::map<std::pair<std::string, profiler::Phase>, OpTotal> totals;
  for (const profiler::Event& e : trace.events) {
    if (e.kind != profiler::Kind::Op) continue;
    OpTotal& t = totals[{e.name, e.phase}];
    t.name = e.name, t.phase = e.phase;
    ++t.calls, t.ns += e.duration_ns, t.flops += e.flops, t.bytes += e.bytes;
  }
  std::vector<OpTotal> out;  // by name, then phase
  for (const auto& [key, t] : totals) out.push_back(t);
  return out;
}

// The profile of one step as the chapter reads it: the columns of profiler::key_averages_table, but
// the rows in a fixed order, grouped as the chapter walks them (sorted by time, close rows would
// swap places from run to run), then any op the list leaves out, then the table's last two lines.
void print_step_table(const profiler::Trace& trace) {
  const char* const order[] = {"matmul",
                               "scaled_dot_product_attention",
                               "add",
                               "dropout",
                               "layer_norm",
                               "relu",
                               "Adam.step",
                               "narrow",
                               "view",
                               "reshape",
                               "transpose",
                               "clip_grad_norm",
                               "index_select",
                               "mul",
                               "cross_entropy",
                               "backward: topological order",
                               "copy task batch",
                               "zero_grad"};
  const auto rank = [&](const OpTotal& t) { return std::find(std::begin(order), std::end(order), t.name) - order; };
  std::vector<OpTotal> rows = op_totals(trace);  // by name, then phase (forward first)
  std::stable_sort(rows.begin(), rows.end(), [&](const OpTotal& a, const OpTotal& b) { return rank(a) < rank(b); });
  const double wall_ms = static_cast<double>(profiler::wall_ns(trace)) * 1e-6;
  std::printf("%-28s  %-9s%7s%10s%8s%10s%9s%8s\n", "op", "phase", "calls", "total ms", "% wall", "mean us", "GFLOP/s",
              "GB/s");
  for (const OpTotal& t : rows) {
    const double ms = static_cast<double>(t.ns) * 1e-6;
    const std::string per_second =
        t.ns > 0 ? fixed(static_cast<double>(t.flops > 0 ? t.flops : t.bytes) / ms * 1e-6, 1) : "";
    std::printf("%-28s  %-9s%7lld%10.3f%7.1f%%%10.1f%9s%8s\n", t.name.c_str(), profiler::phase_name(t.phase),
                static_cast<long long>(t.calls), ms, 100 * ms / wall_ms, ms * 1e3 / static_cast<double>(t.calls),
                t.flops > 0 ? per_second.c_str() : "", t.flops == 0 && t.bytes > 0 ? per_second.c_str() : "");
  }
  const std::string table = profiler::key_averages_table(trace);
  std::fputs(table.substr(table.find("wall time ")).c_str(), stdout);
}

// The roofline: an op doing I flops per byte it moves can run no faster than
//   attainable GFLOP/s = min(peak, I x bandwidth),
// so it is compute-bound when I exceeds the machine's balance, peak / bandwidth, memory-bound below.
// An op that does no counted flops (elementwise: about one flop per 8 to 12 bytes) is memory-bound,
// and its ceiling is the bandwidth itself. The rows: the step's main kinds of op, in a fixed order.
bool on_the_roofline(const OpTotal& t) {
  const char* const ops[] = {"matmul",   "scaled_dot_product_attention", "layer_norm", "add", "dropout", "relu",
                             "Adam.step"};
  return std::any_of(std::begin(ops), std::end(ops), [&](const char* op) { return t.name == op; });
}

void roofline(const profiler::Trace& trace, double peak, double bandwidth) {
  const double balance = peak / bandwidth;
  std::printf("%-30s %-9s %8s  %6s %10s %8s  %-7s %7s\n", "op", "phase", "ms", "flop/B", "achieved", "roof", "bound",
              "of roof");
  for (const OpTotal& t : op_totals(trace)) {
    if (!on_the_roofline(t)) continue;
    const double seconds = static_cast<double>(t.ns) * 1e-9;
    if (t.flops > 0) {
      const double intensity = static_cast<double>(t.flops) / static_cast<double>(t.bytes);
      const double achieved = static_cast<double>(t.flops) / seconds / 1e9;
      const double roof = std::min(peak, intensity * bandwidth);
      std::printf("%-30s %-9s %8.2f  %6.1f %6.1f GF/s %8.1f  %-7s %6.0f%%\n", t.name.c_str(),
                  profiler::phase_name(t.phase), seconds * 1e3, intensity, achieved, roof,
                  intensity > balance ? "compute" : "memory", 100 * achieved / roof);
    } else {
      const double achieved = static_cast<double>(t.bytes) / seconds / 1e9;
      std::printf("%-30s %-9s %8.2f  %6s %6.1f GB/s %8.1f  %-7s %6.0f%%\n", t.name.c_str(),
                  profiler::phase_name(t.phase), seconds * 1e3, "-", achieved, bandwidth, "memory",
                  100 * achieved / bandwidth);
    }
  }
}

// The roofline as a picture (18-roofline.svg): on the left the ops that count flops, under the
// machine's two ceilings; on the right the others, whose roof is the bandwidth. Log axes
// with fixed ranges and a fixed list of rows, so that every run draws the same elements and only
// the measured numbers (positions, values) differ: the check compares it with its numbers masked.
struct RooflinePoint {
  std::string op;                 // "matmul forward", "add backward", ...
  double intensity, gflops, gbs;  // intensity 0 and gflops 0: the op counts no flops
};

std::vector<RooflinePoint> roofline_points(const profiler::Trace& trace) {
  std::vector<RooflinePoint> points;
  for (const OpTotal& t : op_totals(trace)) {
    if (!on_the_roofline(t)) continue;
    const double seconds = static_cast<double>(t.ns) * 1e-9, flops = static_cast<double>(t.flops);
    const std::string name = t.name == "scaled_dot_product_attention" ? "attention" : t.name;
    points.push_back({message(name, " ", profiler::phase_name(t.phase)), flops / static_cast<double>(t.bytes),
                      flops / seconds / 1e9, static_cast<double>(t.bytes) / seconds / 1e9});
  }
  return points;
}

// Log-scale ticks, one a decade, from 10^first: along x (y_or_x is the axis's y) or along y.
void decade_ticks(Diagram& d, bool along_x, double from, double to, double axis, double span, int first) {
  for (int k = 0; k <= 4; ++k) {
    const double at = from + (to - from) * k / 4;
    if (along_x) d.arrow({{at, axis}, {at, axis - span}}, "#e4e4e4", false, false);
    if (!along_x) d.arrow({{axis, at}, {axis + span, at}}, "#e4e4e4", false, false);
    const std::string label = message(std::pow(10.0, first + k));
    if (along_x) d.text(at, axis + 18, label, {.size = 12});
    if (!along_x) d.text(axis - 8, at + 4, label, {.size = 12, .anchor = "end"});
  }
}

void draw_roof_panel(Diagram& d, const std::vector<RooflinePoint>& points, double peak, double bandwidth) {
  const double left = 90, top = 70, size = 440, decade = size / 4;  // intensity 0.1 .. 1000, GFLOP/s 1 .. 10^4
  const auto px = [&](double i) { return left + (std::clamp(std::log10(i), -1.0, 3.0) + 1) * decade; };
  const auto py = [&](double g) { return top + size - std::clamp(std::log10(g), 0.0, 4.0) * decade; };
  d.rect(left, top, size, size, "#fff", "#888");
  decade_ticks(d, true, left, left + size, top + size, size, -1);
  decade_ticks(d, false, top + size, top, left, size, 0);
  d.text(left + size / 2, top + size + 42, "arithmetic intensity (flop per byte moved), log scale");
  d.text(28, top + size / 2, "GFLOP/s, log scale", {.rotate = -90});
  // The roof: min(peak, I x bandwidth), bending at the balance point
  const double balance = peak / bandwidth;
  d.arrow({{px(0.1), py(0.1 * bandwidth)}, {px(balance), py(peak)}, {px(1000), py(peak)}}, "#c0392b", false, false);
  d.text(px(1000) - 4, py(peak) - 8, message("peak ", fixed(peak, 1), " GFLOP/s"), {.size = 12, .anchor = "end"});
  d.text(px(0.1) + 82, py(0.1 * bandwidth) - 98, message("bandwidth ", fixed(bandwidth, 1), " GB/s"),
         {.size = 12, .rotate = -45});
  d.arrow({{px(balance), py(peak)}, {px(balance), top + size}}, "#c0392b", true, false);
  d.text(px(balance) + 4, top + size - 8, message("balance ", fixed(balance, 1)), {.size = 11, .anchor = "start"});
  const char* colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd"};
  const char* ops[] = {"matmul forward", "matmul backward", "attention forward", "attention backward"};
  for (const RooflinePoint& p : points)
    for (int k = 0; k < 4; ++k)
      if (p.op == ops[k]) d.circle(px(p.intensity), py(p.gflops), 6, colours[k], "#222");
  for (int k = 0; k < 4; ++k) {  // the legend, top left: above the roof, where no op can be
    d.circle(106, 88 + 18 * k, 6, colours[k], "#222");
    d.text(118, 93 + 18 * k, ops[k], {.size = 12, .anchor = "start"});
  }
}

// The ops that count no flops: their achieved GB/s, one row each, against the bandwidth.
void draw_memory_panel(Diagram& d, const std::vector<RooflinePoint>& points, double bandwidth) {
  const char* ops[] = {"Adam.step optimizer", "add forward",      "add backward",
                       "dropout forward",     "dropout backward", "layer_norm forward",
                       "layer_norm backward", "relu forward",     "relu backward"};
  const double left = 760, right = 1060, top = 90, row = 40;  // GB/s 0.1 .. 1000
  const auto px = [&](double g) { return left + (std::clamp(std::log10(g), -1.0, 3.0) + 1) * (right - left) / 4; };
  const double bottom = top + row * 9;
  d.text((left + right) / 2, top - 30, "the other ops: memory-bound,", {.size = 13, .bold = true});
  d.text((left + right) / 2, top - 14, "their roof is the bandwidth (GB/s)", {.size = 13, .bold = true});
  d.rect(left, top, right - left, bottom - top, "#fff", "#888");
  decade_ticks(d, true, left, right, bottom, bottom - top, -1);
  d.text((left + right) / 2, bottom + 50, "achieved GB/s, log scale");
  d.arrow({{px(bandwidth), top}, {px(bandwidth), bottom}}, "#c0392b", false, false);
  d.text(px(bandwidth), bottom + 32, "bandwidth", {.size = 11, .colour = "#c0392b"});
  for (int k = 0; k < 9; ++k) {
    const double y = top + row * (k + 0.5);
    d.text(left - 8, y + 4, ops[k], {.size = 12, .anchor = "end"});
    for (const RooflinePoint& p : points)
      if (p.op == ops[k]) d.circle(px(p.gbs), y, 6, "#8c8c8c", "#222");
  }
}

void draw_roofline(const profiler::Trace& trace, double peak, double bandwidth) {
  const std::vector<RooflinePoint> points = roofline_points(trace);
  Diagram d(1100, 600);
  d.text(550, 26,
         message("The roofline of one copy-task step at d_model 128, measured on this machine (", num_threads(),
                 " threads)"),
         {.size = 15});
  d.text(550, 46, "one run's measurements: the points move from run to run", {.size = 12, .colour = "#555"});
  draw_roof_panel(d, points, peak, bandwidth);
  draw_memory_panel(d, points, bandwidth);
  write_svg(output_path("18-roofline.svg"), d.svg());
}

// The share of the step spent in ops that counted flops (the matmuls and the attention op).
double flop_ops_share(const profiler::Trace& trace) {
  int64_t with_flops = 0;
  for (const OpTotal& t : op_totals(trace))
    if (t.flops > 0) with_flops += t.ns;
  return static_cast<double>(with_flops) / static_cast<double>(profiler::wall_ns(trace));
}

// ---- 4. the cost of an op, whatever its size -----------------------------------------------------------

// ns per op, forward and backward, of a chain of multiplications of one-element tensors: nothing
// but the fixed cost of an op (allocating its result, recording its node, running it backward).
double ns_per_tiny_op(int repeats) {
  constexpr int kOps = 1000;
  const Variable x(ones({1}), true), c(full({1}, 1.0001));
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const double time = cpu_seconds(1, [&] {
      Variable y = x;
      for (int i = 0; i < kOps; ++i) y = y * c;
      y.backward(ones({1}));
    });
    best = std::min(best, time * 1e9 / kOps);
  }
  return best;
}

int64_t op_events(const profiler::Trace& trace) {
  return std::count_if(trace.events.begin(), trace.events.end(),
                       [](const profiler::Event& e) { return e.kind == profiler::Kind::Op; });
}

// ---- 5. one speed-up: Adam's update loop -------------------------------------------------------------

// Adam's update as the library first wrote it, float32 only (the model's dtype): nn/adam.cpp's
// arithmetic, in the same order, but the loop reads its scalars through the lambda's references to
// the enclosing function's variables, and this file is compiled without -fno-math-errno.
class AdamAsFirstWritten : public Optimizer {
 public:
  AdamAsFirstWritten(std::vector<Variable> params, const AdamOptions& options)
      : Optimizer(std::move(params), options.lr, "adam", "AdamAsFirstWritten.step"),
        options_(options),
        m_(zeros_like_each(params_)),
        v_(zeros_like_each(params_)),
        t_(params_.size(), 0) {}

 protected:
  void update() override {
    const double beta1 = options_.beta1, beta2 = options_.beta2;
    for_each_with_grad([&](size_t i, Tensor& value, const Tensor& grad) {
      const int64_t t = ++t_[i];
      const double step_size = lr_ / (1 - std::pow(beta1, static_cast<double>(t)));
      const double bias_correction2_sqrt = std::sqrt(1 - std::pow(beta2, static_cast<double>(t)));
      float* p = value.data<float>();
      const float* g = grad.data<float>();
      float* m = m_[i].data<float>();
      float* v = v_[i].data<float>();
      const float b1 = static_cast<float>(beta1), b2 = static_cast<float>(beta2);
      const float one_minus_b1 = static_cast<float>(1 - beta1), one_minus_b2 = static_cast<float>(1 - beta2);
      const float size = static_cast<float>(step_size), bc2 = static_cast<float>(bias_correction2_sqrt);
      const float eps = static_cast<float>(options_.eps);
      parallel_for(0, value.numel(), grain_for(2), [&](int64_t lo, int64_t hi) {
        for (int64_t k = lo; k < hi; ++k) {
          m[k] = b1 * m[k] + one_minus_b1 * g[k];
          v[k] = b2 * v[k] + one_minus_b2 * g[k] * g[k];
          p[k] -= size * m[k] / (std::sqrt(v[k]) / bc2 + eps);
        }
      });
    });
  }
  int passes_over_parameters() const override { return 7; }  // p, g, m and v read, p, m and v written
  std::vector<std::pair<std::string, Tensor>> buffers() const override { return {}; }

 private:
  AdamOptions options_;
  std::vector<Tensor> m_, v_;  // the moments, as Adam's
  std::vector<int64_t> t_;     // each parameter's own step count
};

// The copy-task model's parameters at d_model 128 with the gradients of one training step: a copy
// of each, so that the two optimizers update parameters of their own from the same start.
std::vector<Variable> copy_with_gradients(const std::vector<Variable>& params) {
  std::vector<Variable> out;
  for (const Variable& p : params) {
    Variable copy(p.value().clone(), true);
    copy.set_grad(p.grad().clone());
    out.push_back(copy);
  }
  return out;
}

bool same_bits(const std::vector<Variable>& a, const std::vector<Variable>& b) {
  for (size_t i = 0; i < a.size(); ++i)
    if (std::memcmp(a[i].value().data<float>(), b[i].value().data<float>(), a[i].numel() * sizeof(float)) != 0)
      return false;
  return true;
}

// The two loops on the same parameters and gradients, in alternating turns of `steps` steps, so that
// a busy moment of the machine falls on both alike; each keeps its fastest turn (noise only slows).
void time_adam_loops(int turns, int steps) {
  CopyTask task(128);
  task.step();  // for the gradients
  const AdamOptions options{.lr = 1e-4, .beta1 = 0.9, .beta2 = 0.98, .eps = 1e-9};
  std::vector<Variable> first_params = copy_with_gradients(task.model.parameters());
  std::vector<Variable> library_params = copy_with_gradients(task.model.parameters());
  AdamAsFirstWritten first(first_params, options);
  Adam library(library_params, options);
  int64_t count = 0;
  for (const Variable& p : first_params) count += p.numel();
  double best[2] = {1e30, 1e30};
  for (int turn = 0; turn < turns; ++turn) {
    best[0] = std::min(best[0], wall_seconds([&] {
                                  for (int s = 0; s < steps; ++s) first.step();
                                }) / steps);
    best[1] = std::min(best[1], wall_seconds([&] {
                                  for (int s = 0; s < steps; ++s) library.step();
                                }) / steps);
  }
  const double bytes = 7.0 * sizeof(float) * static_cast<double>(count);  // p, g, m, v read; p, m, v written
  std::printf("Adam's update of %lld parameters, %.0f bytes each moved; the fastest of %d turns of %d steps:\n",
              static_cast<long long>(count), bytes / static_cast<double>(count), turns, steps);
  std::printf("  as first written:      %6.2f ms a step, %5.1f GB/s\n", best[0] * 1e3, bytes / best[0] * 1e-9);
  std::printf("  as the library has it: %6.2f ms a step, %5.1f GB/s\n", best[1] * 1e3, bytes / best[1] * 1e-9);
  const bool same = same_bits(first_params, library_params);
  std::printf("after %d steps of each, the parameters %s bit for bit\n", turns * steps,
              same ? "are the same" : "DIFFER");
  claim(same, "the rewritten loop computes the same bits");
#if !CHAPTER_16_SANITIZED
  claim(turns == 1 || best[1] < best[0], "the library's loop is faster than the loop as first written");
#endif
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  // What a training program does: keep a step's freed memory for the next step (a no-op without
  // glibc, or when the environment tunes malloc). Every measurement below is made with it.
  keep_freed_memory();
  const int runs = quick ? 2 : 10;

  section("what the profiler costs");
  const double off = ns_per_tiny_op(quick ? 20 : 200);
  profiler::start();
  const double on = ns_per_tiny_op(quick ? 20 : 200);
  const profiler::Trace tiny_trace = profiler::stop();
  // Each op of the chain makes two events (its forward, its node), plus one sort per backward.
  std::printf("a tiny op: %.0f ns off, %.0f ns on: %.0f ns per event\n", off, on, (on - off) / 2);
  claim(op_events(tiny_trace) == (quick ? 20 : 200) * 2001, "two events per op and one per backward");

  section("the machine");
  const double peak = peak_gflops(runs), bandwidth = bandwidth_gbs(runs);
  std::printf("threads %d; peak %.1f GFLOP/s, memory bandwidth %.1f GB/s: balance %.1f flops per byte\n", num_threads(),
              peak, bandwidth, peak > 0 ? peak / bandwidth : 0.0);

  const profiler::Trace trace = profile_copy_step(128, quick ? 1 : 3, quick ? 1 : 3);
  section("one copy-task step at d_model 128");
  print_step_table(trace);

  section("the cost of an op at any size");
  // The profiler-off time of a one-element op above covers its forward and its backward: two of the
  // step's op events.
  const int64_t ops = op_events(trace) / 2;
  const double overhead_ms = off * static_cast<double>(ops) * 1e-6;
  std::printf(
      "a one-element op, forward and backward: %.0f ns; x %lld ops (half the step's op events) = %.2f ms, "
      "%.1f%% of this step\n",
      off, static_cast<long long>(ops), overhead_ms,
      100 * overhead_ms / (static_cast<double>(profiler::wall_ns(trace)) * 1e-6));

  section("the roofline at d_model 128");
  if (peak > 0) roofline(trace, peak, bandwidth);
  std::printf("ops that count flops: %.0f%% of the step; %lld op events in the step\n", 100 * flop_ops_share(trace),
              static_cast<long long>(op_events(trace)));
  draw_roofline(trace, peak, bandwidth);

  // The decoder-only model's step at five widths and six lengths, the same tokens a step throughout.
  section("how the cost of a step grows");
  measure_step_scaling(
      quick ? ScalingRun{.width_tokens = 256, .length_tokens = 1024, .warmup = 1, .rounds = 1, .timing_claims = false}
            : ScalingRun{.width_tokens = 2048, .length_tokens = 2048, .warmup = 1, .rounds = 3});

  section("one speed-up: Adam's update loop");
  time_adam_loops(quick ? 1 : 10, quick ? 1 : 5);
  return failures == 0 ? 0 : 1;
}
