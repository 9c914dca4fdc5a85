// The profiler's autograd hooks: a forward event per recorded op, a backward event per node the
// engine runs, with flops and bytes counted from first principles.
#include <string>
#include <vector>

#include "helpers.h"
#include "tensor/support/profiler.h"

using namespace gradformer;
using profiler::Kind, profiler::Phase;

TEST_CASE("profiler: a two-op graph gives exactly these events") {
  // x [2, 3] and w [3, 4], float32, both leaves; y = x w [2, 4]; L = sum(y).
  Variable x(ones({2, 3}), true), w(ones({3, 4}), true);
  profiler::start();
  const Variable y = matmul(x, w);
  const Variable L = sum(y);
  L.backward();
  const profiler::Trace trace = profiler::stop();

  struct Expected {
    std::string name;
    Phase phase;
    int64_t flops, bytes;
  };
  // Forward: matmul 2 M N K = 2 * 2 * 4 * 3 = 48 flops over x, w and y: (6 + 12 + 8) * 4 bytes;
  // sum reads y and writes a scalar: (8 + 1) * 4. Backward, in topological order: the engine's sort,
  // sum's node (dL/dL, y, dL/dy: (1 + 8 + 8) * 4 bytes), matmul's node: dx = G w^T and dw = x^T G,
  // each 2 * 2 * 3 * 4 = 48 flops, over G, x, w, dx, dw: (8 + 6 + 12 + 6 + 12) * 4 bytes.
  const std::vector<Expected> expected = {{"matmul", Phase::Forward, 48, 104},
                                          {"sum", Phase::Forward, 0, 36},
                                          {"backward: topological order", Phase::Backward, 0, 0},
                                          {"sum", Phase::Backward, 0, 68},
                                          {"matmul", Phase::Backward, 96, 176}};
  REQUIRE(trace.events.size() == expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    INFO("event " << i);
    const profiler::Event& e = trace.events[i];
    CHECK(e.name == expected[i].name);
    CHECK(e.phase == expected[i].phase);
    CHECK(e.kind == Kind::Op);
    CHECK(e.thread == 1);
    CHECK(e.flops == expected[i].flops);
    CHECK(e.bytes == expected[i].bytes);
    CHECK(e.duration_ns >= 0);
    // One after the other: each begins where the one before ended or later (forward ops begin
    // exactly there: the time since the previous event is the op's).
    if (i > 0) CHECK(e.start_ns >= trace.events[i - 1].start_ns + trace.events[i - 1].duration_ns);
  }
  CHECK(trace.events[1].start_ns == trace.events[0].start_ns + trace.events[0].duration_ns);
  CHECK(test::values(w.grad()) == std::vector<double>(12, 2.0));  // the hooks changed nothing: dL/dw = x^T 1
}

TEST_CASE("profiler: an op run without a graph (no grad) is timed too") {
  profiler::start();
  {
    NoGradGuard no_grad;
    const Variable a(ones({4}), true);
    const Variable b = a * a;  // a constant: no node, still an op that ran
  }
  const profiler::Trace trace = profiler::stop();
  REQUIRE(trace.events.size() == 1);
  CHECK(std::string(trace.events[0].name) == "mul");
  CHECK(trace.events[0].bytes == 3 * 4 * 4);
}
