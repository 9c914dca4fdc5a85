// The profiler on real training steps: the ops add up to the measured step time, every phase is
// there, and the Chrome trace file reads back (with tensor/support/json.h) as well-formed, nested tracks.
#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "tensor/support/files.h"
#include "tensor/support/json.h"
#include "tensor/support/profiler.h"
#include "training_helpers.h"
#include "transformer/data/copy_task.h"
#include "transformer/train/step_profile.h"
#include "transformer/train/trainer.h"

using namespace gradformer;
using profiler::Kind, profiler::Phase;

namespace {

const Json& member(const Json& object, const std::string& name) {
  for (const auto& [key, value] : object.members())
    if (key == name) return value;
  FAIL("no member " << name);
  throw;
}

// The copy task at d_model 128 and batch 32: large enough that the pool splits some of its work.
struct CopyTaskSteps {
  EncoderDecoder model{[] {
                         TransformerConfig c = TransformerConfig::tutorial(11, 11);
                         c.d_model = 128, c.d_ff = 512, c.heads = 8, c.layers = 2;
                         return c;
                       }(),
                       1};
  Adam adam{model.parameters(), {.lr = 0, .beta1 = 0.9, .beta2 = 0.98, .eps = 1e-9}};
  Generator gen{7};
  CrossEntropyOptions loss{.ignore_index = Vocab::pad};

  // Runs one step; returns its wall time in ns, measured outside the library.
  int64_t step() {
    const Batch batch = copy_task_batch(32, gen);
    const int64_t t0 = profiler::now_ns();
    train_step(adam, translation_batch(model, {batch}, loss), 1e-4, 0);
    return profiler::now_ns() - t0;
  }
};

}  // namespace

TEST_CASE("profiler: a training step's ops add up to its measured time, in every phase") {
  set_num_threads(2);
  CopyTaskSteps steps;
  steps.model.train();
  for (int i = 0; i < 2; ++i) steps.step();  // warm-up: Adam's moments, the pool's threads
  constexpr int kSteps = 3;
  int64_t measured = 0;
  profiler::start();
  for (int i = 0; i < kSteps; ++i) measured += steps.step();
  const profiler::Trace trace = profiler::stop();

  int64_t ops = 0;
  std::map<std::string, int> regions, calls;
  std::set<Phase> phases;
  for (const profiler::Event& e : trace.events) {
    if (e.kind == Kind::Region) ++regions[e.name];
    if (e.kind != Kind::Op) continue;
    CHECK(e.thread == 1);  // ops run on the caller; the pool's threads only run pieces
    ops += e.duration_ns;
    phases.insert(e.phase);
    ++calls[e.name + std::string(" ") + profiler::phase_name(e.phase)];
  }
  // The ops cover the step: only the instructions between two events are no op's (closing one
  // region and opening the next, reading the loss, checking it is finite): microseconds of a step
  // of milliseconds. 5% leaves room for the machine taking the thread away in one of those gaps
  // (a preemption inside an op is part of the op).
  CHECK(ops <= measured);
  CHECK(static_cast<double>(ops) >= 0.95 * static_cast<double>(measured));
  CHECK(regions == std::map<std::string, int>{{"forward", kSteps}, {"backward", kSteps}, {"optimizer", kSteps}});
  CHECK(phases == std::set<Phase>{Phase::Forward, Phase::Backward, Phase::Optimizer});
  for (const char* once_a_step : {"Adam.step optimizer", "clip_grad_norm optimizer", "zero_grad optimizer",
                                  "backward: topological order backward", "cross_entropy forward"})
    CHECK(calls[once_a_step] == kSteps);
  // Every node the backward pass runs was an op recorded forward: as many of each.
  CHECK(calls["cross_entropy backward"] == kSteps);
  CHECK(calls["matmul backward"] == calls["matmul forward"]);
}

TEST_CASE("profiler: the Chrome trace of training steps reads back as nested tracks, one per thread") {
  set_num_threads(2);
  CopyTaskSteps steps;
  steps.model.train();
  steps.step();
  profiler::start();
  steps.step();
  const profiler::Trace trace = profiler::stop();
  std::ostringstream out;
  profiler::write_chrome_trace(trace, out);
  const Json root = Json::parse(out.str());

  REQUIRE(root.is_object());
  const std::vector<Json>& events = member(root, "traceEvents").items();
  std::map<int64_t, std::string> thread_names;
  struct Span {
    int64_t start, end;
    std::string name;
  };
  std::map<int64_t, std::vector<Span>> tracks;
  size_t complete = 0;
  for (const Json& e : events) {
    const std::string ph = member(e, "ph").text();
    CHECK(member(e, "pid").value() == 1);
    const int64_t tid = member(e, "tid").value();
    if (ph == "M") {
      CHECK(member(e, "name").text() == "thread_name");
      thread_names[tid] = member(member(e, "args"), "name").text();
      continue;
    }
    REQUIRE(ph == "X");
    ++complete;
    CHECK(thread_names.count(tid) == 1);  // every track is named, before its events
    const Json& args = member(e, "args");
    const int64_t start = member(args, "start_ns").value(), duration = member(args, "duration_ns").value();
    CHECK(duration >= 0);
    CHECK(member(e, "ts").value() == start / 1000);  // microseconds, each end rounded down
    CHECK(member(e, "dur").value() == (start + duration) / 1000 - start / 1000);
    const std::string kind = member(args, "kind").text(), cat = member(e, "cat").text();
    CHECK((kind == "region" || kind == "op" || kind == "pool"));
    CHECK((cat == "forward" || cat == "backward" || cat == "optimizer" || cat == "data" || cat == "other"));
    tracks[tid].push_back({start, start + duration, member(e, "name").text()});
  }
  CHECK(complete == trace.events.size());
  REQUIRE(thread_names.size() == 2);
  CHECK(thread_names.at(2) == "pool worker 1");
  CHECK(tracks.count(2) == 1);  // the worker ran pieces of this step

  // On each track, two events are nested or disjoint, never overlapping: what a flame chart needs.
  for (auto& [tid, spans] : tracks) {
    std::sort(spans.begin(), spans.end(),
              [](const Span& a, const Span& b) { return a.start != b.start ? a.start < b.start : a.end > b.end; });
    std::vector<Span> open;
    for (const Span& s : spans) {
      while (!open.empty() && open.back().end <= s.start) open.pop_back();
      if (!open.empty()) {
        INFO("track " << tid << ": " << s.name << " inside " << open.back().name);
        CHECK(s.end <= open.back().end);
      }
      open.push_back(s);
    }
  }
}

TEST_CASE("profiler: train --profile profiles steps 6-8 and writes the trace") {
  test::TempDir dir("profile");
  TrainOptions o = default_train_options("copy");
  o.d_model = 32, o.d_ff = 64, o.heads = 2, o.layers = 1, o.batch_size = 8;
  o.epochs = 1, o.batches_per_epoch = 10, o.log_every = 100, o.quiet = true;
  o.out_dir = dir / "run", o.profile_path = dir / "trace.json";
  train(o);
  std::ifstream in(o.profile_path);
  std::stringstream text;
  text << in.rdbuf();
  const Json root = Json::parse(text.str());
  int steps = 0;
  for (const Json& e : member(root, "traceEvents").items())
    if (member(e, "name").text() == "train step") ++steps;
  CHECK(steps == StepProfile::kProfiledSteps);
  CHECK_FALSE(profiler::enabled());

  // A run shorter than the warm-up profiles its last steps; a trace that cannot be written is an
  // OutputError, and leaves the profiler off.
  CHECK(StepProfile::kWarmupSteps == 5);
  o.batches_per_epoch = 2, o.out_dir = dir / "short", o.profile_path = dir / "short.json";
  train(o);
  CHECK(std::filesystem::exists(o.profile_path));
  o.profile_path = dir / "no-such-directory/trace.json";
  CHECK_THROWS_AS(train(o), OutputError);
  CHECK_FALSE(profiler::enabled());
}

// The trace's "train step" events and the phases ("cat") of its events.
static std::pair<int, std::set<std::string>> steps_and_phases(const std::filesystem::path& trace) {
  std::ifstream in(trace);
  std::stringstream text;
  text << in.rdbuf();
  int steps = 0;
  std::set<std::string> phases;
  const Json root = Json::parse(text.str());
  for (const Json& e : member(root, "traceEvents").items()) {
    if (member(e, "name").text() == "train step") ++steps;
    if (member(e, "ph").text() == "X") phases.insert(member(e, "cat").text());
  }
  return {steps, phases};
}

TEST_CASE("profiler: train --profile works for the decoder-only and encoder-only models too") {
  test::TempDir dir("profile-arch");
  TrainOptions o = default_train_options("toy-lm", Architecture::DecoderOnly);
  o.arch = Architecture::DecoderOnly;
  o.d_model = 32, o.d_ff = 64, o.heads = 2, o.layers = 1, o.batch_size = 4;
  o.epochs = 1, o.stop_after = 9, o.log_every = 100, o.quiet = true;
  o.out_dir = dir / "lm", o.profile_path = dir / "lm.json";
  train(o);
  auto [steps, phases] = steps_and_phases(o.profile_path);
  CHECK(steps == StepProfile::kProfiledSteps);
  CHECK(phases == std::set<std::string>{"data", "forward", "backward", "optimizer", "other"});
  CHECK_FALSE(profiler::enabled());

  o = default_train_options("mlm", Architecture::EncoderOnly);
  o.arch = Architecture::EncoderOnly;
  o.d_model = 32, o.d_ff = 64, o.heads = 2, o.layers = 1, o.batch_size = 4;
  o.stop_after = 9, o.log_every = 100, o.quiet = true;
  o.out_dir = dir / "mlm", o.profile_path = dir / "mlm.json";
  train(o);
  std::tie(steps, phases) = steps_and_phases(o.profile_path);
  CHECK(steps == StepProfile::kProfiledSteps);
  CHECK(phases == std::set<std::string>{"data", "forward", "backward", "optimizer", "other"});
  CHECK_FALSE(profiler::enabled());
}
