// The profiler (tensor/support/profiler.h): sessions, scopes, flops, the thread pool's events from its
// threads, the table and the trace file's text.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "catch.h"
#include "tensor/all.h"

using namespace gradformer;
using profiler::Kind, profiler::Phase;

namespace {

std::vector<profiler::Event> named(const profiler::Trace& trace, const std::string& name) {
  std::vector<profiler::Event> out;
  for (const profiler::Event& e : trace.events)
    if (name == e.name) out.push_back(e);
  return out;
}

int64_t end_of(const profiler::Event& e) { return e.start_ns + e.duration_ns; }

}  // namespace

TEST_CASE("profiler: off, the hooks record nothing and a scope is inactive") {
  CHECK_FALSE(profiler::enabled());
  {
    const profiler::Scope scope("not recorded", Phase::Other);
    CHECK_FALSE(scope.active());
    const Tensor c = matmul(ones({8, 8}), ones({8, 8}));  // counts flops only when on
  }
  profiler::start();
  const profiler::Trace trace = profiler::stop();
  CHECK(trace.events.empty());  // nothing done off reaches the next session
  CHECK(trace.thread_names == std::vector<std::string>{"thread 1"});
}

TEST_CASE("profiler: start and stop must alternate") {
  CHECK_THROWS_MSG(profiler::stop(), ValueError, "profiler::stop: no session is running");
  profiler::start();
  CHECK_THROWS_MSG(profiler::start(), ValueError, "profiler::start: a session is already running");
  profiler::stop();
}

TEST_CASE("profiler: a matmul's event counts 2 M N K flops, every batch's") {
  // C[i, j] = sum over K terms of A[i, p] B[p, j]: K multiplies and K adds for each of M N outputs.
  profiler::start();
  {
    const profiler::Scope op("mm", Phase::Forward);
    matmul(ones({3, 5}), ones({5, 7}));
  }
  {
    const profiler::Scope op("bmm", Phase::Forward);
    matmul(ones({2, 3, 4}), ones({4, 6}));  // two [3, 4] x [4, 6] products
  }
  { const profiler::Scope op("no matmul", Phase::Forward); }
  const profiler::Trace trace = profiler::stop();
  REQUIRE(trace.events.size() == 3);
  CHECK(named(trace, "mm").at(0).flops == 2 * 3 * 7 * 5);
  CHECK(named(trace, "bmm").at(0).flops == 2 * 2 * 3 * 6 * 4);
  CHECK(named(trace, "no matmul").at(0).flops == 0);
}

TEST_CASE("profiler: an op inside an op is part of it, regions hold ops, phases are kept") {
  profiler::start();
  {
    const profiler::Scope step("step", Phase::Other, Kind::Region);
    {
      profiler::Scope outer("outer", Phase::Optimizer);
      outer.add_bytes(64);
      CHECK(profiler::current_phase() == Phase::Optimizer);
      const profiler::Scope inner("inner", Phase::Backward);
      matmul(ones({2, 2}), ones({2, 2}));  // counted into outer
    }
    CHECK(profiler::current_phase() == Phase::Other);
  }
  const profiler::Trace trace = profiler::stop();
  REQUIRE(trace.events.size() == 2);
  CHECK(named(trace, "inner").empty());
  const profiler::Event outer = named(trace, "outer").at(0), step = named(trace, "step").at(0);
  CHECK(outer.phase == Phase::Optimizer);
  CHECK(outer.kind == Kind::Op);
  CHECK(outer.flops == 2 * 2 * 2 * 2);
  CHECK(outer.bytes == 64);
  CHECK(step.kind == Kind::Region);
  CHECK(step.start_ns <= outer.start_ns);
  CHECK(end_of(outer) <= end_of(step));
  CHECK(profiler::wall_ns(trace) == step.duration_ns);
}

TEST_CASE("profiler: a parallel region's pieces are recorded on the pool's threads, inside the caller's op") {
  set_num_threads(2);
  std::vector<float> data(1 << 20, 1.0f);
  profiler::start();
  for (int i = 0; i < 3; ++i) {
    const profiler::Scope op("scale", Phase::Backward);
    std::atomic<int> started = 0;
    parallel_for(0, static_cast<int64_t>(data.size()), 1024, [&](int64_t lo, int64_t hi) {
      for (int64_t k = lo; k < hi; ++k) data[static_cast<size_t>(k)] *= 1.5f;
      // Each piece waits (up to 10 s) for the other to start, so the worker takes one even on a
      // loaded machine (otherwise the caller takes whatever the worker is late for).
      ++started;
      const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (started.load() < 2 && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
    });
  }
  const profiler::Trace trace = profiler::stop();
  const std::vector<profiler::Event> ops = named(trace, "scale"), waits = named(trace, profiler::kPoolWait),
                                     pieces = named(trace, profiler::kPoolPiece),
                                     wakes = named(trace, profiler::kPoolWake);
  REQUIRE(ops.size() == 3);
  CHECK(waits.size() == 3);   // one per parallel region, on the caller's thread
  CHECK(pieces.size() == 3);  // one piece per region for the one worker
  CHECK(wakes.size() == 3);
  REQUIRE(trace.thread_names.size() == 2);
  CHECK(trace.thread_names[1] == "pool worker 1");
  for (size_t i = 0; i < 3; ++i) {
    CHECK(ops[i].thread == 1);
    CHECK(waits[i].thread == 1);
    CHECK(ops[i].start_ns <= waits[i].start_ns);
    CHECK(end_of(waits[i]) <= end_of(ops[i]));
  }
  for (size_t k = 0; k < pieces.size(); ++k) {
    CHECK(pieces[k].thread == 2);
    CHECK(pieces[k].phase == Phase::Backward);  // the caller's phase, handed over with the job
    CHECK(end_of(wakes[k]) <= pieces[k].start_ns);
    // Each piece lies inside one of the ops (one clock for every thread).
    const bool inside = std::any_of(ops.begin(), ops.end(), [&](const profiler::Event& op) {
      return op.start_ns <= wakes[k].start_ns && end_of(pieces[k]) <= end_of(op);
    });
    CHECK(inside);
  }
  CHECK(data[0] == 1.5f * 1.5f * 1.5f);
}

TEST_CASE("profiler: concurrent application threads each get a track of their own") {
  constexpr int kThreads = 4, kEvents = 100;
  profiler::start();
  std::atomic<int> go = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      profiler::name_this_thread("application " + std::to_string(t));
      while (go.load() == 0) {
      }
      for (int i = 0; i < kEvents; ++i) const profiler::Scope op("work", Phase::Other);
    });
  go = 1;
  for (std::thread& t : threads) t.join();
  const profiler::Trace trace = profiler::stop();
  REQUIRE(trace.thread_names.size() == kThreads + 1);  // the starting thread is thread 1
  CHECK(trace.events.size() == size_t{kThreads * kEvents});
  for (int tid = 2; tid <= kThreads + 1; ++tid) {
    CHECK(std::count_if(trace.events.begin(), trace.events.end(),
                        [&](const profiler::Event& e) { return e.thread == tid; }) == kEvents);
    CHECK(trace.thread_names[static_cast<size_t>(tid - 1)].rfind("application ", 0) == 0);
  }
}

TEST_CASE("profiler: the key_averages table, computed by hand") {
  // One 10 ms step holding two matmuls of 1 ms and 3 ms, 8e9 flops in all: 4 ms, 40% of the step,
  // 8e9 / 4e-3 s = 2000 GFLOP/s; an add of 2 ms over 4e6 bytes: 20%, 4e6 / 2e-3 s = 2 GB/s. The
  // ops cover 6 of the 10 ms; the pool's events are not rows.
  profiler::Trace trace;
  trace.duration_ns = 50'000'000;
  trace.thread_names = {"main", "pool worker 1"};
  trace.events = {
      {"matmul", Phase::Forward, Kind::Op, 1, 0, 1'000'000, 2'000'000'000, 0},
      {"matmul", Phase::Forward, Kind::Op, 1, 1'000'000, 3'000'000, 6'000'000'000, 0},
      {"add", Phase::Backward, Kind::Op, 1, 4'000'000, 2'000'000, 0, 4'000'000},
      {profiler::kPoolPiece, Phase::Backward, Kind::Pool, 2, 4'100'000, 1'000'000, 0, 0},
      {profiler::kPoolWait, Phase::Backward, Kind::Pool, 1, 5'000'000, 500'000, 0, 0},
      {"step", Phase::Other, Kind::Region, 1, 0, 10'000'000, 0, 0},
  };
  CHECK(profiler::wall_ns(trace) == 10'000'000);
  const std::string table = profiler::key_averages_table(trace);
  std::istringstream lines(table);
  std::string header, first, second, wall, pool;
  std::getline(lines, header), std::getline(lines, first), std::getline(lines, second);
  std::getline(lines, wall), std::getline(lines, pool);
  CHECK(header == "op      phase      calls  total ms  % wall   mean us  GFLOP/s    GB/s");
  CHECK(first == "matmul  forward        2     4.000   40.0%    2000.0   2000.0        ");
  CHECK(second == "add     backward       1     2.000   20.0%    2000.0              2.0");
  CHECK(wall == "wall time 10.000 ms; the ops cover 60.0% of it");
  CHECK(pool ==
        "thread pool: 1 parallel regions; the caller waited 0.500 ms for the workers (inside the ops above), the "
        "workers ran pieces for 1.000 ms and took 0.000 ms to start them");
}

TEST_CASE("profiler: the Chrome trace's text") {
  profiler::Trace trace;
  trace.thread_names = {"main", "pool \"1\""};
  trace.events = {{"matmul", Phase::Forward, Kind::Op, 1, 1'500, 2'999, 48, 104},
                  {profiler::kPoolPiece, Phase::Forward, Kind::Pool, 2, 2'000, 1'000, 0, 0}};
  std::ostringstream out;
  profiler::write_chrome_trace(trace, out);
  // Times in whole microseconds, each end rounded down: [1500, 4499] ns is ts 1, dur 4 - 1 = 3.
  CHECK(
      out.str() ==
      "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n"
      "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 1, \"args\": {\"name\": \"main\"}},\n"
      "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 2, \"args\": {\"name\": \"pool \\\"1\\\"\"}},\n"
      "{\"name\": \"matmul\", \"cat\": \"forward\", \"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"ts\": 1, \"dur\": 3, "
      "\"args\": {\"kind\": \"op\", \"start_ns\": 1500, \"duration_ns\": 2999, \"flops\": 48, \"bytes\": 104}},\n"
      "{\"name\": \"pool: worker's piece\", \"cat\": \"forward\", \"ph\": \"X\", \"pid\": 1, \"tid\": 2, \"ts\": 2, "
      "\"dur\": 1, \"args\": {\"kind\": \"pool\", \"start_ns\": 2000, \"duration_ns\": 1000, \"flops\": 0, \"bytes\": "
      "0}}\n"
      "]}\n");
}
