// The resident memory of training GPT-2 small (bench/gpt2_step.h): builds the model and Adam, runs
// N steps, and prints the process's resident memory (RSS) before the model, after each stage, and
// its peak (getrusage's ru_maxrss), with the bytes malloc has handed out and not taken back at each
// point of a step (mallinfo2, glibc) and the median time of the steps after the first. Compare with
// bench/torch_gpt2_step.py, which prints the same lines for PyTorch.
//
//   build/bench/gpt2_step_memory [--steps N] [--threads N] [--lora R] [--batch B] [--fresh-pages] [--held] [--profile]
//
// --batch B: B sequences of 256 tokens a step (default 4, as bench_training_step and PyTorch's twin).
//
// --lora R fine-tunes with LoRA instead (bench/gpt2_step.h's gpt2_model): adapters of rank R beside
// W^Q, W^K, W^V and W^O, every other weight frozen; run it and the full step alternately and compare
// their peaks (target: LoRA rank 8 at <= 0.5 x the full step's peak).
// --held also lists, after the last forward pass, the activations the graph's nodes hold as their
// inputs (a node keeps the input values its backward reads, autograd/node.h's Reads; the others are
// edges of no memory, listed at 0), summed by the op that made them and the op that holds them; what
// backward functions captured besides (dropout masks, attention weights, ...) is the rest of the
// memory the forward pass added.
// --profile runs one more step under the profiler (tensor/support/profiler.h) and prints its table, as
// `gradformer train --profile` does.
// --fresh-pages skips keep_freed_memory() (tensor/support/memory.h), which the gradformer program calls:
// glibc then gives large freed blocks back to the kernel at once, as it does under PyTorch.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "autograd/node.h"
#include "bench/gpt2_step.h"
#include "tensor/kernels/parallel.h"
#include "tensor/support/error.h"
#include "tensor/support/memory.h"
#include "tensor/support/profiler.h"

#if defined(__GLIBC__)
#include <malloc.h>
#endif

using namespace gradformer;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// The resident set now, from /proc/self/statm (Linux), in MiB; -1 elsewhere.
double rss_now_mib() {
  std::ifstream statm("/proc/self/statm");
  long pages = 0, resident = 0;
  if (!(statm >> pages >> resident)) return -1;
  return static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE)) / kMiB;
}

// The largest resident set so far (ru_maxrss is in KiB on Linux), in MiB.
double rss_peak_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

// The bytes malloc has handed out and not been given back (heap and mmap'ed blocks), in MiB; -1
// without glibc.
double malloc_in_use_mib() {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
  const struct mallinfo2 info = mallinfo2();
  return static_cast<double>(info.uordblks + info.hblkhd) / kMiB;
#else
  return -1;
#endif
}

void report(const char* stage) {
  std::printf("%-34s rss %8.1f MiB  peak %8.1f MiB  malloc in use %8.1f MiB\n", stage, rss_now_mib(), rss_peak_mib(),
              malloc_in_use_mib());
}

// The tensors the graph behind `loss` holds as its nodes' inputs, each storage counted once, summed
// by the op that made it, the op holding it and its shape; the parameters' storages (and views of
// them, such as a weight's transpose) are left out.
void report_held_inputs(const Variable& loss, const std::vector<Variable>& parameters) {
  std::map<std::string, std::pair<int64_t, size_t>> by_op;  // "maker -> holder [shape]" -> tensors, bytes
  std::set<const Storage*> counted;
  for (const Variable& p : parameters) counted.insert(p.value().storage().get());
  std::set<const Node*> seen{loss.grad_fn().get()};
  std::vector<const Node*> todo{loss.grad_fn().get()};
  while (!todo.empty()) {
    const Node* node = todo.back();
    todo.pop_back();
    for (const Variable& input : node->inputs()) {
      const Node* maker = input.grad_fn().get();
      if (maker && seen.insert(maker).second) todo.push_back(maker);
      if (!counted.insert(input.value().storage().get()).second) continue;
      auto& [tensors, bytes] =
          by_op[std::string(maker ? maker->op() : "leaf") + " -> " + node->op() + " " + message(input.value().shape())];
      tensors += 1, bytes += input.value().storage()->bytes();
    }
  }
  size_t total = 0;
  for (const auto& [op, held] : by_op) {
    std::printf("  held as inputs, %-48s %5lld tensors %8.1f MiB\n", op.c_str(), static_cast<long long>(held.first),
                static_cast<double>(held.second) / kMiB);
    total += held.second;
  }
  std::printf("  held as inputs in all (%zu nodes)       %8.1f MiB\n", seen.size(), static_cast<double>(total) / kMiB);
}

struct Options {
  int steps = 10, threads = 0, lora = 0, batch = static_cast<int>(bench::kGpt2Batch);
  bool fresh_pages = false, held = false, profile = false;
};

// The command line, or exit status 2 with the usage.
Options parse_options(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--steps" && i + 1 < argc)
      options.steps = std::atoi(argv[++i]);
    else if (arg == "--threads" && i + 1 < argc)
      options.threads = std::atoi(argv[++i]);
    else if (arg == "--lora" && i + 1 < argc)
      options.lora = std::atoi(argv[++i]);
    else if (arg == "--batch" && i + 1 < argc)
      options.batch = std::atoi(argv[++i]);
    else if (arg == "--fresh-pages")
      options.fresh_pages = true;
    else if (arg == "--held")
      options.held = true;
    else if (arg == "--profile")
      options.profile = true;
    else {
      std::fprintf(stderr,
                   "usage: gpt2_step_memory [--steps N >= 2] [--threads N] [--lora R] [--batch B] [--fresh-pages] "
                   "[--held] [--profile]\n");
      std::exit(2);
    }
  }
  if (options.batch < 1) {
    std::fprintf(stderr, "gpt2_step_memory: --batch must be at least 1, got %d\n", options.batch);
    std::exit(2);
  }
  if (options.steps < 2) {
    std::fprintf(stderr, "gpt2_step_memory: --steps must be at least 2, got %d\n", options.steps);
    std::exit(2);
  }
  return options;
}

// `steps` training steps (bench/gpt2_step.h), the memory reported between the stages of the last
// one -> each step's time in ms.
std::vector<double> run_steps(const DecoderOnly& model, Adam& adam, const LmBatch& batch, int steps, bool held) {
  const bench::StepStage at = [&](const char* stage, const Variable& loss) {
    report(message("last step: after ", stage).c_str());
    if (held && std::string(stage) == "forward") report_held_inputs(loss, model.parameters());
  };
  std::vector<double> ms;
  for (int step = 1; step <= steps; ++step) {
    const auto start = std::chrono::steady_clock::now();
    const double loss = bench::gpt2_train_step(model, adam, batch, step == steps ? at : bench::StepStage());
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    if (step == 1) {
      std::printf("step 1 loss %.4f\n", loss);
      report("after step 1");
    }
  }
  return ms;
}

// One more step under the profiler, its phases marked as the trainer marks them; prints the table.
void profile_step(const DecoderOnly& model, Adam& adam, const LmBatch& batch) {
  using profiler::Kind, profiler::Phase, profiler::Scope;
  profiler::start();
  {
    const Scope step("step", Phase::Other, Kind::Region);
    adam.zero_grad();
    std::optional<Scope> forward(std::in_place, "forward", Phase::Forward, Kind::Region);
    const Variable loss = lm_loss(model, batch);
    forward.reset();
    std::optional<Scope> backward(std::in_place, "backward", Phase::Backward, Kind::Region);
    loss.backward();
    backward.reset();
    const Scope optimizer("optimizer", Phase::Optimizer, Kind::Region);
    adam.step();
  }
  std::printf("%s", profiler::key_averages_table(profiler::stop()).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  const bool kept = !options.fresh_pages && keep_freed_memory();
  if (options.threads > 0) set_num_threads(options.threads);
  std::printf("GPT-2 small, batch %lld x context %lld, %d steps, %d threads, freed memory %s\n",
              static_cast<long long>(options.batch), static_cast<long long>(bench::kGpt2Context), options.steps,
              num_threads(), kept ? "kept for reuse" : "returned to the kernel");
  report("before the model");
  const double baseline = rss_now_mib();

  const std::unique_ptr<DecoderOnly> built = bench::gpt2_model(options.lora);
  const DecoderOnly& model = *built;
  int64_t trained = 0;
  for (const Variable& p : model.parameters()) trained += p.requires_grad() ? p.numel() : 0;
  std::printf("parameters: %lld, trained: %lld%s\n", static_cast<long long>(model.parameter_count()),
              static_cast<long long>(trained), options.lora > 0 ? " (LoRA adapters on q, k, v, o)" : "");
  report("model built");
  Adam adam = bench::gpt2_adam(model);
  report("Adam built");
  Generator gen(1);
  const LmBatch batch = bench::gpt2_random_batch(model.config().tgt_vocab, gen, options.batch);

  const std::vector<double> ms = run_steps(model, adam, batch, options.steps, options.held);
  report("after the last step");
  std::vector<double> timed(ms.begin() + 1, ms.end());
  std::sort(timed.begin(), timed.end());
  const double median = timed[timed.size() / 2];
  std::printf("median step (steps 2-%d): %.1f ms, %.0f tokens/s\n", options.steps, median,
              static_cast<double>(batch.ntokens) / (median / 1000.0));
  std::printf("peak rss %.1f MiB, above the baseline %.1f MiB\n", rss_peak_mib(), rss_peak_mib() - baseline);
  if (options.profile) profile_step(model, adam, batch);
  return 0;
}
