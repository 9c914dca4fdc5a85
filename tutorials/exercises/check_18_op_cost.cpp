// Checks exercises::matmul_cost, matmul_backward_cost and add_cost (tutorials/exercises/18_op_cost.cpp,
// or the reference solution) from first principles (one multiply-add, a square product's n / 6
// flops per byte in float32, an add's 1 / 12) and against what the profiler (tensor/support/profiler.h)
// records for the library's own matmul and add, forward and backward, on odd shapes. Prints what it
// found; exits 1 if a check fails or the file is still the stub.
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "exercises.h"
#include "tensor/support/profiler.h"

using namespace gradformer;
using exercises::OpCost;

namespace {

int failed = 0;

void check(const std::string& what, const OpCost& mine, const OpCost& expected) {
  const bool ok = mine.flops == expected.flops && mine.bytes == expected.bytes;
  std::printf("%-48s: %s", what.c_str(), ok ? "yes\n" : "NO, ");
  if (!ok)
    std::printf("%lld flops and %lld bytes, expected %lld and %lld\n", static_cast<long long>(mine.flops),
                static_cast<long long>(mine.bytes), static_cast<long long>(expected.flops),
                static_cast<long long>(expected.bytes));
  if (!ok) ++failed;
}

// The flops and bytes of the profiler's events of `op` in `phase` (summed: one call each here).
OpCost recorded(const profiler::Trace& trace, const std::string& op, profiler::Phase phase) {
  OpCost cost;
  for (const profiler::Event& e : trace.events)
    if (e.kind == profiler::Kind::Op && e.phase == phase && op == e.name) cost.flops += e.flops, cost.bytes += e.bytes;
  return cost;
}

// The library's matmul on A [M, K] and B [K, N], forward and backward, under the profiler.
void against_profiler(int64_t M, int64_t K, int64_t N, DType dtype) {
  Generator gen(16);
  Variable a(randn({M, K}, gen, dtype), true), b(randn({K, N}, gen, dtype), true);
  profiler::start();
  sum(matmul(a, b)).backward();
  const profiler::Trace trace = profiler::stop();
  const int64_t size = dtype == DType::Float32 ? 4 : 8;
  char shapes[96];
  std::snprintf(shapes, sizeof shapes, "[%lld, %lld] x [%lld, %lld] %s", static_cast<long long>(M),
                static_cast<long long>(K), static_cast<long long>(K), static_cast<long long>(N),
                size == 4 ? "float32" : "float64");
  check(std::string("profiler: matmul ") + shapes, exercises::matmul_cost(M, K, N, size),
        recorded(trace, "matmul", profiler::Phase::Forward));
  check("profiler: its backward", exercises::matmul_backward_cost(M, K, N, size),
        recorded(trace, "matmul", profiler::Phase::Backward));
}

}  // namespace

static int checks() {
  using exercises::add_cost, exercises::matmul_cost, exercises::matmul_backward_cost;
  // [1, 1] x [1, 1]: one multiply and one add; three float32 numbers moved.
  check("[1, 1] x [1, 1] float32: 2 flops, 12 bytes", matmul_cost(1, 1, 1, 4), {2, 12});
  // A square product n x n x n in float32: 2 n^3 flops on 3 n^2 * 4 bytes, n / 6 flops per byte.
  for (int64_t n : {6, 128, 1024}) {
    char what[64];
    std::snprintf(what, sizeof what, "[%lld, %lld] squared: n / 6 flops per byte", static_cast<long long>(n),
                  static_cast<long long>(n));
    check(what, matmul_cost(n, n, n, 4), {2 * n * n * n, 12 * n * n});
  }
  check("the same in float64: twice the bytes", matmul_cost(128, 128, 128, 8), {2 * 128 * 128 * 128, 24 * 128 * 128});
  // The backward is two products of the forward's size, twice its flops, and it moves five tensors of
  // 36 floats: G, A and B read, dA and dB written.
  check("backward of [6, 6] x [6, 6] float32", matmul_backward_cost(6, 6, 6, 4), {4 * 6 * 6 * 6, 5 * 36 * 4});
  // An add: one flop per element on 12 bytes (two floats read, one written): 1 / 12 flops per byte.
  check("add of 1000 float32: 1 flop per 12 bytes", add_cost(1000, 4), {1000, 12000});
  check("add of 1000 float64: 1 flop per 24 bytes", add_cost(1000, 8), {1000, 24000});
  for (const auto& [M, K, N] : {std::tuple<int64_t, int64_t, int64_t>{7, 5, 3}, {800, 128, 128}, {1, 33, 17}})
    against_profiler(M, K, N, DType::Float32);
  against_profiler(10, 16, 10, DType::Float64);
  // The library's add counts no flops (the profiler's matmuls do), so it gives the bytes alone.
  Generator gen(61);
  const Variable x(randn({37, 21}, gen)), y(randn({37, 21}, gen));
  profiler::start();
  (void)add(x, y);
  const OpCost add_recorded = recorded(profiler::stop(), "add", profiler::Phase::Forward);
  check("profiler: add of [37, 21] float32, the bytes", {0, add_cost(37 * 21, 4).bytes}, {0, add_recorded.bytes});
  std::printf(failed == 0 ? "op cost: all checks pass\n" : "op cost: %d check(s) FAILED\n", failed);
  return failed;
}

int main() { return exercises::run_checks("18_op_cost.cpp", 16, checks); }
