// Chapter 18: where the time goes. The companion program of tutorials/18-where-the-time-goes.md:
// the machine's two ceilings (peak GFLOP/s, memory bandwidth), the profile of one copy-task training
// step at d_model 128 and 512, each op placed under its roofline (a table, and 18-roofline.svg drawn
// in the working directory, in both runs), how a decoder-only model's step grows with d_model and
// with the sequence length (18-scaling.svg, step_scaling.h), what a tiny op costs, and the speed-ups'
// measurements (the matmul kernels side by side, the library's exp against the C library's).
//
//   18-where-the-time-goes            the chapter's measurements
//   18-where-the-time-goes --quick    the same code with fewer repetitions (what the test suite runs)
//
// It exits with a non-zero status if a claim the chapter makes does not hold.
#define GRADFORMER_LADDER_NO_MAIN
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <string>
#include <vector>

#include "02-matmul.cpp"  // ladder::fma_flops, chapter 2's measurement of the FMA units' peak
#include "claims.h"
#include "exp_cost.h"          // exp_cost: the C library's exp against the library's
#include "memory_bandwidth.h"  // cpu_seconds, bandwidth_gbs
#include "nn/all.h"
#include "step_scaling.h"  // measure_step_scaling: the step against d_model and the length
#include "tensor/support/profiler.h"
#include "transformer/data/batch_stream.h"
#include "transformer/inspect/diagram.h"
#include "transformer/inspect/svg.h"
#include "transformer/model/encoder_decoder.h"
#include "transformer/train/trainer.h"

#if defined(__GLIBC__)
#include <sys/resource.h>
#endif

// A sanitizer's build instruments every load and store and brings its own malloc: what it times is
// mostly the sanitizer, so the claims about speed and about malloc are not made there.
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

// One step, profiled, after warm-up steps: the first steps allocate Adam's moments, start the pool's
// threads and fault in fresh memory, which later steps do not. Of `tries` profiled steps the
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

// The roofline as a picture (18-roofline.svg): on the left the ops that count flops, at both widths,
// under the machine's two ceilings; on the right the others, whose roof is the bandwidth. Log axes
// with fixed ranges and a fixed list of rows, so that every run draws the same elements and only
// the measured numbers (positions, values) differ: the check compares it with its numbers masked.
struct RooflinePoint {
  std::string op;  // "matmul forward", "add backward", ...
  int64_t d_model;
  double intensity, gflops, gbs;  // intensity 0 and gflops 0: the op counts no flops
};

void add_roofline_points(std::vector<RooflinePoint>& points, const profiler::Trace& trace, int64_t d_model) {
  for (const OpTotal& t : op_totals(trace)) {
    if (!on_the_roofline(t)) continue;
    const double seconds = static_cast<double>(t.ns) * 1e-9, flops = static_cast<double>(t.flops);
    const std::string name = t.name == "scaled_dot_product_attention" ? "attention" : t.name;
    points.push_back({message(name, " ", profiler::phase_name(t.phase)), d_model, flops / static_cast<double>(t.bytes),
                      flops / seconds / 1e9, static_cast<double>(t.bytes) / seconds / 1e9});
  }
}

// One point: a circle at d_model 128, a square at 512.
void marker(Diagram& d, double x, double y, int64_t d_model, const char* colour) {
  if (d_model == 128) d.circle(x, y, 6, colour, "#222");
  if (d_model != 128) d.rect(x - 6, y - 6, 12, 12, colour, "#222");
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
      if (p.op == ops[k]) marker(d, px(p.intensity), py(p.gflops), p.d_model, colours[k]);
  for (int k = 0; k < 4; ++k) {  // the legend, top left: above the roof, where no op can be
    d.rect(100, 82 + 18 * k, 12, 12, colours[k], "#222");
    d.text(118, 93 + 18 * k, ops[k], {.size = 12, .anchor = "start"});
  }
  marker(d, 106, 160, 128, "#fff");
  d.text(118, 164, "d_model 128", {.size = 12, .anchor = "start"});
  marker(d, 106, 178, 512, "#fff");
  d.text(118, 182, "d_model 512", {.size = 12, .anchor = "start"});
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
      if (p.op == ops[k]) marker(d, px(p.gbs), y, p.d_model, "#8c8c8c");
  }
}

void draw_roofline(const std::vector<RooflinePoint>& points, double peak, double bandwidth) {
  Diagram d(1100, 600);
  d.text(550, 26, message("The roofline of one copy-task step, measured on this machine (", num_threads(), " threads)"),
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

// ---- 5. fresh pages ---------------------------------------------------------------------------------

// Page faults and time in the kernel per step, from the operating system's count for the process
// (getrusage: POSIX). This program keeps freed memory for the next step, as the gradformer program
// does: main calls keep_freed_memory (tensor/support/memory.h) first thing. The same steps with malloc as
// glibc sets it show what that saves: they run in a second copy of this program, which skips the call.
#if defined(__GLIBC__) && !CHAPTER_16_SANITIZED
#define CHAPTER_16_FRESH_PAGES
struct KernelCost {
  double faults = 0, system_ms = 0, step_ms = 0;  // per step
};

KernelCost kernel_cost(int steps) {
  CopyTask task(128);
  for (int step = 0; step < 3; ++step) task.step();
  const auto usage = [] {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u;
  };
  const rusage before = usage();
  const auto start = std::chrono::steady_clock::now();
  for (int step = 0; step < steps; ++step) task.step();
  const double wall_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const rusage after = usage();
  const double system_ms = static_cast<double>(after.ru_stime.tv_sec - before.ru_stime.tv_sec) * 1e3 +
                           static_cast<double>(after.ru_stime.tv_usec - before.ru_stime.tv_usec) * 1e-3;
  return {static_cast<double>(after.ru_minflt - before.ru_minflt) / steps, system_ms / steps, wall_ms / steps};
}

// kernel_cost(steps) in a copy of this program whose malloc is glibc's as it comes.
KernelCost kernel_cost_with_glibc_defaults(const char* self, int steps) {
  const std::string command = std::string(self) + " --kernel-cost " + std::to_string(steps);
  KernelCost cost;
  if (FILE* pipe = popen(command.c_str(), "r")) {
    if (std::fscanf(pipe, "%lf %lf %lf", &cost.faults, &cost.system_ms, &cost.step_ms) != 3) cost = KernelCost{};
    pclose(pipe);
  }
  return cost;
}
#endif

}  // namespace

// ---- 6. the matmul kernel ---------------------------------------------------------------------------

// `steps` profiled steps of the task with the given matmul kernel: per step, its time and in it the
// time of the matmuls and of the attention op (whose products are one head's).
struct KernelStep {
  double step_ms = 1e30, matmul_ms = 0, attention_ms = 0;
};

KernelStep steps_with_kernel(CopyTask& task, MatmulKernel kernel, int steps) {
  const MatmulKernel before = matmul_kernel();
  set_matmul_kernel(kernel);
  profiler::start();
  {
    const profiler::Scope region("train steps", profiler::Phase::Other, profiler::Kind::Region);
    for (int s = 0; s < steps; ++s) task.step();
  }
  const profiler::Trace trace = profiler::stop();
  set_matmul_kernel(before);
  KernelStep step{static_cast<double>(profiler::wall_ns(trace)) * 1e-6 / steps, 0, 0};
  for (const OpTotal& op : op_totals(trace)) {
    if (op.name == "matmul") step.matmul_ms += static_cast<double>(op.ns) * 1e-6 / steps;
    if (op.name == "scaled_dot_product_attention") step.attention_ms += static_cast<double>(op.ns) * 1e-6 / steps;
  }
  return step;
}

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
#if defined(CHAPTER_16_FRESH_PAGES)
  if (argc > 2 && std::strcmp(argv[1], "--kernel-cost") == 0) {  // the second copy, for "fresh pages"
    const KernelCost cost = kernel_cost(std::atoi(argv[2]));     // malloc as glibc sets it
    std::printf("%f %f %f\n", cost.faults, cost.system_ms, cost.step_ms);
    return 0;
  }
#endif
  // What a training program does: keep a step's freed memory for the next step (a no-op without
  // glibc, or when the environment tunes malloc). Every measurement below is made with it.
  keep_freed_memory();
  const int runs = quick ? 2 : 10;

  section("the machine");
  const double peak = peak_gflops(runs), bandwidth = bandwidth_gbs(runs);
  std::printf("threads %d; peak %.1f GFLOP/s, memory bandwidth %.1f GB/s: balance %.1f flops per byte\n", num_threads(),
              peak, bandwidth, peak > 0 ? peak / bandwidth : 0.0);

  std::map<int64_t, double> flop_share;
  std::vector<RooflinePoint> roofline_points;
  for (const int64_t d_model : {int64_t{128}, int64_t{512}}) {
    const profiler::Trace trace = profile_copy_step(d_model, quick ? 1 : 3, quick ? 1 : 3);
    section(("one copy-task step at d_model " + std::to_string(d_model)).c_str());
    std::fputs(profiler::key_averages_table(trace).c_str(), stdout);
    section(("the roofline at d_model " + std::to_string(d_model)).c_str());
    if (peak > 0) roofline(trace, peak, bandwidth);
    add_roofline_points(roofline_points, trace, d_model);
    flop_share[d_model] = flop_ops_share(trace);
    std::printf("ops that count flops: %.0f%% of the step; %lld op events in the step\n", 100 * flop_share[d_model],
                static_cast<long long>(op_events(trace)));
    if (d_model == 128) {
      section("the cost of an op at any size");
      const double tiny = ns_per_tiny_op(quick ? 20 : 200);
      const double overhead_ms = tiny * static_cast<double>(op_events(trace)) * 1e-6;
      std::printf("a one-element op, forward and backward: %.0f ns; x %lld ops = %.2f ms, %.1f%% of this step\n", tiny,
                  static_cast<long long>(op_events(trace)), overhead_ms,
                  100 * overhead_ms / (static_cast<double>(profiler::wall_ns(trace)) * 1e-6));
    }
  }
  // A claim about measured times holds in the full run, which keeps the fastest of several steps; the
  // quick run times one step of each, and a busy machine (the test suite beside another) can swap two.
  if (!quick) claim(flop_share[512] > flop_share[128], "the matmuls' share of the step grows with d_model");
  draw_roofline(roofline_points, peak, bandwidth);

  // The decoder-only model's step at five widths and six lengths, the same tokens a step throughout.
  section("how the cost of a step grows");
  measure_step_scaling(
      quick ? ScalingRun{.width_tokens = 256, .length_tokens = 1024, .warmup = 1, .rounds = 1, .timing_claims = false}
            : ScalingRun{.width_tokens = 2048, .length_tokens = 2048, .warmup = 1, .rounds = 3});

#if defined(CHAPTER_16_FRESH_PAGES)
  section("fresh pages");
  const int steps = quick ? 3 : 20;
  const KernelCost kept = kernel_cost(steps), fresh = kernel_cost_with_glibc_defaults(argv[0], steps);
  std::printf("glibc's malloc as it comes: %.0f page faults a step, %.1f of its %.1f ms in the kernel\n", fresh.faults,
              fresh.system_ms, fresh.step_ms);
  std::printf("freed memory kept:          %.0f page faults a step, %.1f of its %.1f ms in the kernel\n", kept.faults,
              kept.system_ms, kept.step_ms);
  claim(kept.faults * 10 < fresh.faults, "kept memory faults in less than a tenth of the pages");
#endif

  section("the matmul kernel");
  if (!matmul_kernel_available(MatmulKernel::Avx2) || !matmul_kernel_available(MatmulKernel::Avx512)) {
    std::printf("(this CPU or build has one SIMD kernel at most: nothing to compare)\n");
  } else {
    // One model per kernel (the same seeds, so the same training, bit for bit), warmed up; then the
    // two take turns, a few steps at a time, so that a busy moment of the machine does not fall on
    // one alone, and each keeps its fastest turn (noise only slows).
    const MatmulKernel kernels[2] = {MatmulKernel::Avx2, MatmulKernel::Avx512};
    CopyTask tasks[2] = {CopyTask(128), CopyTask(128)};
    KernelStep best[2];
    for (int i = 0; i < 2; ++i) steps_with_kernel(tasks[i], kernels[i], 2);
    for (int round = 0; round < (quick ? 1 : 6); ++round)
      for (int i = 0; i < 2; ++i) {
        const KernelStep step = steps_with_kernel(tasks[i], kernels[i], quick ? 1 : 4);
        if (step.step_ms < best[i].step_ms) best[i] = step;
      }
    for (int i = 0; i < 2; ++i)
      std::printf("%-7s step %5.1f ms: matmuls %5.1f ms, attention %4.1f ms\n", matmul_kernel_name(kernels[i]),
                  best[i].step_ms, best[i].matmul_ms, best[i].attention_ms);
  }

  section("an exp of our own");
  const ExpCost exp_ns = exp_cost(quick ? 5 : 200);
  std::printf("exp over a row of scores: the C library's %.2f ns an element, the library's %.2f ns\n", exp_ns.libm_ns,
              exp_ns.portable_ns);
  if (exp_ns.avx2_ns > 0) std::printf("the library's exp with AVX2: %.2f ns an element\n", exp_ns.avx2_ns);
#if !CHAPTER_16_SANITIZED
  if (!quick)
    claim(exp_ns.portable_ns < exp_ns.libm_ns,
          "the library's exp is faster than the C library's, even four floats a vector");
#endif

  section("what the profiler costs");
  const double off = ns_per_tiny_op(quick ? 20 : 200);
  profiler::start();
  const double on = ns_per_tiny_op(quick ? 20 : 200);
  const profiler::Trace trace = profiler::stop();
  // Each op of the chain makes two events (its forward, its node), plus one sort per backward.
  std::printf("a tiny op: %.0f ns off, %.0f ns on: %.0f ns per event\n", off, on, (on - off) / 2);
  claim(op_events(trace) == (quick ? 20 : 200) * 2001, "two events per op and one per backward");
  return failures == 0 ? 0 : 1;
}
