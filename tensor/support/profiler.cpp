// The profiler's recording half: one list of events per thread, so recording never waits for
// another thread (each list has its own mutex, taken only by its thread and by stop()).
#include "tensor/support/profiler.h"

#include <chrono>
#include <memory>
#include <mutex>
#include <thread>

#include "tensor/support/error.h"

namespace gradformer::profiler {

namespace detail {
std::atomic<bool> on{false};
}

namespace {

struct ThreadLog {
  std::mutex mutex;
  std::vector<Event> events;
  int id = 0;
  std::string name;
};

// The session: its number (a thread's state from an older session is stale), start time and logs.
std::mutex session_mutex;
std::atomic<uint64_t> session{0};
int64_t session_start = 0;
std::vector<std::shared_ptr<ThreadLog>> logs;

// What one thread knows of the session: its log, the time up to which its work has been given to
// an event (the mark), the flops counted since, the phase it is in, and whether it is inside an op.
struct Local {
  std::shared_ptr<ThreadLog> log;
  uint64_t session = 0;
  int64_t start = 0, mark = 0, flops = 0;
  Phase phase = Phase::Other;
  int op_depth = 0;
  std::string name;
};
thread_local Local local;

// This thread's state in the current session (joining it on first use).
Local& joined() {
  std::lock_guard lock(session_mutex);
  if (local.session != session.load()) {
    auto log = std::make_shared<ThreadLog>();
    log->id = static_cast<int>(logs.size()) + 1;
    log->name = local.name.empty() ? "thread " + std::to_string(log->id) : local.name;
    logs.push_back(log);
    local.log = std::move(log);
    local.session = session;
    local.start = session_start;
    local.mark = session_start;
    local.flops = 0;
    local.op_depth = 0;
  }
  return local;
}

Local& here() { return local.session == session.load(std::memory_order_relaxed) ? local : joined(); }

void push(Local& l, const char* name, Phase phase, Kind kind, int64_t start, int64_t end, int64_t flops,
          int64_t bytes) {
  std::lock_guard lock(l.log->mutex);
  l.log->events.push_back(Event{name, phase, kind, l.log->id, start - l.start, end - start, flops, bytes});
}

}  // namespace

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

const char* phase_name(Phase phase) {
  switch (phase) {
    case Phase::Forward:
      return "forward";
    case Phase::Backward:
      return "backward";
    case Phase::Optimizer:
      return "optimizer";
    case Phase::Data:
      return "data";
    case Phase::Other:
      return "other";
  }
  return "other";
}

void start() {
  {
    std::lock_guard lock(session_mutex);
    if (detail::on.load()) throw ValueError("profiler::start: a session is already running");
    ++session;
    session_start = now_ns();
    logs.clear();
  }
  joined();  // the starting thread is thread 1
  detail::on.store(true);
}

Trace stop() {
  std::lock_guard lock(session_mutex);
  if (!detail::on.load()) throw ValueError("profiler::stop: no session is running");
  detail::on.store(false);
  Trace trace;
  trace.duration_ns = now_ns() - session_start;
  for (const auto& log : logs) {
    std::lock_guard log_lock(log->mutex);
    trace.events.insert(trace.events.end(), log->events.begin(), log->events.end());
    trace.thread_names.push_back(log->name);
  }
  return trace;
}

Phase current_phase() { return local.phase; }

void name_this_thread(std::string name) { local.name = std::move(name); }

void pool_event(const char* name, Phase phase, int64_t start_ns, int64_t end_ns) {
  push(here(), name, phase, Kind::Pool, start_ns, end_ns, 0, 0);
}

namespace detail {

void begin_scope(Scope& s, const char* name, Phase phase, Kind kind) {
  Local& l = here();
  s.active_ = true;
  s.inside_op_ = false;
  s.name_ = name, s.phase_ = phase, s.kind_ = kind;
  s.bytes_ = 0;
  s.start_ = now_ns();
  s.saved_phase_ = l.phase;
  l.phase = s.phase_;
  if (s.kind_ == Kind::Pool) return;  // the pool's events are inside an op's time: the mark stays
  s.inside_op_ = l.op_depth > 0;
  if (s.kind_ == Kind::Op) ++l.op_depth;
  if (s.inside_op_) return;
  l.mark = s.start_;
  l.flops = 0;
}

void end_scope(Scope& s) {
  Local& l = here();
  const int64_t end = now_ns();
  l.phase = s.saved_phase_;
  if (s.kind_ == Kind::Op) --l.op_depth;
  if (s.inside_op_) return;
  push(l, s.name_, s.phase_, s.kind_, s.start_, end, s.kind_ == Kind::Op ? l.flops : 0, s.bytes_);
  if (s.kind_ == Kind::Pool) return;
  l.mark = end;
  l.flops = 0;
}

void add_flops(int64_t flops) { here().flops += flops; }

}  // namespace detail

void op_recorded(const char* name, int64_t bytes) {
  Local& l = here();
  if (l.op_depth > 0) return;  // an op a backward function or an optimizer runs belongs to it
  const int64_t end = now_ns();
  push(l, name, Phase::Forward, Kind::Op, l.mark, end, l.flops, bytes);
  l.mark = end;
  l.flops = 0;
}

}  // namespace gradformer::profiler
