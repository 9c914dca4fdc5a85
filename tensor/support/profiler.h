// The profiler: where the time of a training step goes. While it is on, the library records one
// event per unit of work: each op's forward (when autograd records it), each node the backward
// engine runs, the optimizer's step, each batch the data stream makes, and the thread pool's part
// in every parallel region (a worker waking up and running its piece, the caller waiting for the
// slowest worker). Each event is {name, phase, thread, start, duration, flops, bytes}.
//
//   profiler::start();
//   train_step(...);                                 // anything: the hooks are inside the library
//   const profiler::Trace trace = profiler::stop();
//   std::cout << profiler::key_averages_table(trace);  // per op and phase, sorted by total time
//   std::ofstream out("trace.json");
//   profiler::write_chrome_trace(trace, out);          // opens in Perfetto or chrome://tracing
//
// Off (the default), every hook is one relaxed load of a bool and a branch that is always taken
// the same way. On, an event costs two clock reads and an append to its thread's own list.
//
// How an op's forward is timed. autograd's ops compute their value first and record it after, so
// the forward event of an op runs from the end of the previous event on its thread to the moment
// the op has recorded its result: the op's kernel and the few instructions between ops (a view, a
// shape check). Nothing on the thread goes unaccounted, which is why the ops add up to the step.
#pragma once

#include <atomic>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace gradformer::profiler {

/// Which part of a training step an event belongs to.
enum class Phase : uint8_t { Forward, Backward, Optimizer, Data, Other };
const char* phase_name(Phase phase);  // "forward", "backward", "optimizer", "data", "other"

/// Region: a span holding other events (a step, a whole backward pass); not a row of the table.
/// Op: one unit of work; on one thread, ops never overlap (an op inside an op is not recorded).
/// Pool: the thread pool's part of an op: a worker's piece and wake-up, the caller's wait.
enum class Kind : uint8_t { Region, Op, Pool };

struct Event {
  const char* name;  // a string that lives for the program (an op's name, a literal)
  Phase phase;
  Kind kind;
  int thread;                     // 1, 2, ... in the order threads first recorded in this session
  int64_t start_ns, duration_ns;  // start from the session's start
  int64_t flops;                  // floating-point operations counted by the kernels (matmul: 2 M N K)
  int64_t bytes;                  // the sizes of the tensors the op reads and writes, each once
};

struct Trace {
  std::vector<Event> events;              // each thread's in the order they ended
  std::vector<std::string> thread_names;  // thread t's name is thread_names[t - 1]
  int64_t duration_ns = 0;                // from start() to stop()
};

class Scope;
namespace detail {
extern std::atomic<bool> on;
void begin_scope(Scope& scope, const char* name, Phase phase, Kind kind);
void end_scope(Scope& scope);
void add_flops(int64_t flops);
}  // namespace detail

/// Whether the profiler is recording: the one check every hook makes first.
inline bool enabled() { return detail::on.load(std::memory_order_relaxed); }

/// Starts a session: clears the events of the last one. ValueError if one is running.
void start();
/// Ends the session and returns its events. ValueError if none is running.
Trace stop();

/// Records an event from its construction to its destruction (when the profiler is on then).
class Scope {
 public:
  // Off, only active_ is written: the rest is set by begin_scope.
  Scope(const char* name, Phase phase, Kind kind = Kind::Op) {
    if (enabled()) detail::begin_scope(*this, name, phase, kind);
  }
  ~Scope() {
    if (active_) detail::end_scope(*this);
  }
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;
  /// Adds to the bytes the event reports (when it is being recorded).
  void add_bytes(int64_t bytes) {
    if (active_) bytes_ += bytes;
  }
  bool active() const { return active_; }

 private:
  friend void detail::begin_scope(Scope&, const char*, Phase, Kind);
  friend void detail::end_scope(Scope&);
  bool active_ = false;
  bool inside_op_;  // opened inside an op: part of it, not an event of its own (unless a Pool one)
  Phase phase_, saved_phase_;
  Kind kind_;
  const char* name_;
  int64_t start_, bytes_;
};

/// autograd's hook: an op named `name` has just recorded its result (see "How an op's forward is
/// timed" above). Call only when enabled().
void op_recorded(const char* name, int64_t bytes);

/// A kernel's hook: adds flops to the event the calling thread is in.
inline void count_flops(int64_t flops) {
  if (enabled()) detail::add_flops(flops);
}

/// The thread pool's events (parallel.cpp makes them; the table sums them).
inline constexpr const char* kPoolWait = "pool: caller waits";     // after its own piece, for the workers'
inline constexpr const char* kPoolWake = "pool: worker wakes";     // from the job's start to a worker's piece
inline constexpr const char* kPoolPiece = "pool: worker's piece";  // a worker running its piece
/// Records a Pool event from start to end (now_ns() times) on this thread. Call only when enabled().
void pool_event(const char* name, Phase phase, int64_t start_ns, int64_t end_ns);

/// The phase of the innermost scope open on this thread (Other outside any).
Phase current_phase();
/// The name this thread's track gets in a trace ("pool worker 1"); unnamed threads are "thread N".
void name_this_thread(std::string name);
/// The steady clock in nanoseconds, as events are stamped.
int64_t now_ns();

/// torch.profiler's key_averages table: one row per (op, phase) of the Op events, sorted by total
/// time: calls, total ms, % of the wall time, mean µs, GFLOP/s (ops that count flops) or GB/s
/// (the others), then what the rows cover and the thread pool's share. The wall time is the sum of
/// the Region events that no other region holds (the steps), or the session's length without any.
std::string key_averages_table(const Trace& trace);
/// The wall time the table's percentages are of (see key_averages_table).
int64_t wall_ns(const Trace& trace);
/// The Chrome trace event format: {"traceEvents": [...]} with a complete event ("ph": "X") per
/// event, one track (tid) per thread, and each thread's name as metadata ("ph": "M"). Times ("ts",
/// "dur") are whole microseconds, each end rounded down, so nesting is kept exactly; the args hold
/// the kind, the exact start_ns and duration_ns, flops and bytes. Numbers are integers only (the
/// library's own JSON reader, tensor/support/json.h, reads the file back).
void write_chrome_trace(const Trace& trace, std::ostream& out);

}  // namespace gradformer::profiler
