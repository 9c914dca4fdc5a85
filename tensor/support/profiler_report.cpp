// The profiler's reading half: the key_averages table and the Chrome trace file.
#include <algorithm>
#include <cstdio>
#include <map>
#include <ostream>
#include <sstream>
#include <tuple>

#include "tensor/support/profiler.h"

namespace gradformer::profiler {

namespace {

// The Region events no other region on their thread holds: a region holds another when it starts
// no later and ends no earlier.
std::vector<const Event*> outer_regions(const Trace& trace) {
  std::vector<const Event*> regions, outer;
  for (const Event& e : trace.events)
    if (e.kind == Kind::Region) regions.push_back(&e);
  for (const Event* r : regions) {
    const bool held = std::any_of(regions.begin(), regions.end(), [&](const Event* o) {
      return o != r && o->thread == r->thread && o->start_ns <= r->start_ns &&
             r->start_ns + r->duration_ns <= o->start_ns + o->duration_ns &&
             (o->duration_ns > r->duration_ns || o < r);  // of two equal spans, the first holds
    });
    if (!held) outer.push_back(r);
  }
  return outer;
}

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

std::string pad(const std::string& s, size_t width, bool right) {
  if (s.size() >= width) return s;
  return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

// JSON string contents: quotes, backslashes and control characters escaped.
std::string escaped(const std::string& s) {
  std::string out;
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char buffer[8];
      std::snprintf(buffer, sizeof buffer, "\\u%04x", c);
      out += buffer;
    } else {
      out += c;
    }
  }
  return out;
}

// The trace format counts whole microseconds here: each end of an event is rounded down, so an
// event inside another stays inside it (the exact nanoseconds are in the event's args).
int64_t micros(int64_t ns) { return ns / 1000; }

}  // namespace

int64_t wall_ns(const Trace& trace) {
  const std::vector<const Event*> outer = outer_regions(trace);
  if (outer.empty()) return trace.duration_ns;
  int64_t total = 0;
  for (const Event* r : outer) total += r->duration_ns;
  return total;
}

std::string key_averages_table(const Trace& trace) {
  struct Row {
    const char* name;
    Phase phase;
    int64_t calls = 0, ns = 0, flops = 0, bytes = 0;
  };
  std::map<std::pair<std::string, Phase>, Row> rows;
  int64_t op_ns = 0, wait_ns = 0, waits = 0, piece_ns = 0, wake_ns = 0;
  for (const Event& e : trace.events) {
    if (e.kind == Kind::Pool) {
      const std::string name = e.name;
      if (name == kPoolWait) wait_ns += e.duration_ns, ++waits;
      if (name == kPoolPiece) piece_ns += e.duration_ns;
      if (name == kPoolWake) wake_ns += e.duration_ns;
      continue;
    }
    if (e.kind != Kind::Op) continue;
    Row& row = rows.try_emplace({e.name, e.phase}, Row{e.name, e.phase}).first->second;
    ++row.calls, row.ns += e.duration_ns, row.flops += e.flops, row.bytes += e.bytes;
    op_ns += e.duration_ns;
  }
  std::vector<Row> sorted;
  for (const auto& [key, row] : rows) sorted.push_back(row);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Row& a, const Row& b) { return a.ns > b.ns; });

  const int64_t wall = std::max<int64_t>(1, wall_ns(trace));
  size_t name_width = 2;
  for (const Row& r : sorted) name_width = std::max(name_width, std::string(r.name).size());
  std::ostringstream out;
  out << pad("op", name_width, false) << "  " << pad("phase", 9, false) << pad("calls", 7, true)
      << pad("total ms", 10, true) << pad("% wall", 8, true) << pad("mean us", 10, true) << pad("GFLOP/s", 9, true)
      << pad("GB/s", 8, true) << "\n";
  for (const Row& r : sorted) {
    const double seconds = static_cast<double>(r.ns) * 1e-9;
    const std::string gflops = r.flops > 0 && r.ns > 0 ? fixed(static_cast<double>(r.flops) / seconds * 1e-9, 1) : "";
    const std::string gbytes =
        r.flops == 0 && r.bytes > 0 && r.ns > 0 ? fixed(static_cast<double>(r.bytes) / seconds * 1e-9, 1) : "";
    out << pad(r.name, name_width, false) << "  " << pad(phase_name(r.phase), 9, false)
        << pad(std::to_string(r.calls), 7, true) << pad(fixed(static_cast<double>(r.ns) * 1e-6, 3), 10, true)
        << pad(fixed(100.0 * static_cast<double>(r.ns) / static_cast<double>(wall), 1) + "%", 8, true)
        << pad(fixed(static_cast<double>(r.ns) * 1e-3 / static_cast<double>(r.calls), 1), 10, true)
        << pad(gflops, 9, true) << pad(gbytes, 8, true) << "\n";
  }
  out << "wall time " << fixed(static_cast<double>(wall) * 1e-6, 3) << " ms; the ops cover "
      << fixed(100.0 * static_cast<double>(op_ns) / static_cast<double>(wall), 1) << "% of it\n";
  out << "thread pool: " << waits << " parallel regions; the caller waited "
      << fixed(static_cast<double>(wait_ns) * 1e-6, 3)
      << " ms for the workers (inside the ops above), the workers ran pieces for "
      << fixed(static_cast<double>(piece_ns) * 1e-6, 3) << " ms and took "
      << fixed(static_cast<double>(wake_ns) * 1e-6, 3) << " ms to start them\n";
  return out.str();
}

void write_chrome_trace(const Trace& trace, std::ostream& out) {
  out << "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n";
  const char* kinds[] = {"region", "op", "pool"};
  bool first = true;
  auto separator = [&] {
    if (!first) out << ",\n";
    first = false;
  };
  for (size_t t = 0; t < trace.thread_names.size(); ++t) {
    separator();
    out << "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": " << t + 1 << ", \"args\": {\"name\": \""
        << escaped(trace.thread_names[t]) << "\"}}";
  }
  for (const Event& e : trace.events) {
    separator();
    out << "{\"name\": \"" << escaped(e.name) << "\", \"cat\": \"" << phase_name(e.phase)
        << "\", \"ph\": \"X\", \"pid\": 1, \"tid\": " << e.thread << ", \"ts\": " << micros(e.start_ns)
        << ", \"dur\": " << micros(e.start_ns + e.duration_ns) - micros(e.start_ns) << ", \"args\": {\"kind\": \""
        << kinds[static_cast<int>(e.kind)] << "\", \"start_ns\": " << e.start_ns
        << ", \"duration_ns\": " << e.duration_ns << ", \"flops\": " << e.flops << ", \"bytes\": " << e.bytes << "}}";
  }
  out << "\n]}\n";
}

}  // namespace gradformer::profiler
