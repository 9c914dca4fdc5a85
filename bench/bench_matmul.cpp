// bench_matmul: gradformer's matmul on a fixed list of shapes (square, linear-layer, attention and
// tutorial sizes), each registered as
//   BM_Matmul/M:<M>/N:<N>/K:<K>/TA:<0|1>/TB:<0|1>/T:<threads>   with a GFLOPS counter.
// The names are a contract: a BLAS benchmark that registers the same names (an OpenBLAS sgemm
// program, say) can be run alternately with this one and compared row by row, so the ratio is
// measured side by side on one machine, not against a number from another day. TA = 1: A is stored transposed, [K, M],
// and passed as a transposed view (TB likewise for B: stored [N, K]). T: threads of gradformer's pool. The shapes come
// from the file named by $MATMUL_SHAPES, else from the built-in copy below.
//
// Also the definition, the library's triple loop (matmul_reference), where tutorial chapter 2's
// ladder starts; the ladder ends at BM_Matmul's rows of the same square shapes:
//   BM_Reference/n:<n>   n = 512 and 1024, one thread
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "tensor/all.h"

using namespace gradformer;

namespace {

// The shapes, M N K TA TB T per line (override with a file of the same format in $MATMUL_SHAPES).
const char* const kBuiltinShapes = R"(# square
256 256 256 0 0 1
512 512 512 0 0 1
1024 1024 1024 0 0 1
2048 2048 2048 0 0 1
1024 1024 1024 0 0 2
2048 2048 2048 0 0 2
# Linear layers of the base model (d_model 512, d_ff 2048) on a batch of 1024 tokens; weights stored [out, in]
1024 512 512 0 1 1
1024 2048 512 0 1 1
1024 512 2048 0 1 1
1024 512 2048 0 0 1
2048 512 1024 1 0 1
1024 2048 512 0 1 2
1024 512 2048 0 1 2
# the small model of the tutorials (d_model 128, d_ff 512) on a batch of 800 tokens
800 128 128 0 1 1
800 512 128 0 1 1
800 128 512 0 1 1
128 128 800 1 0 1
# one attention head (d_k 64) over 64 positions
64 64 64 0 1 1
64 64 64 0 0 1
32 32 64 0 1 1
)";

void BM_Matmul(benchmark::State& state) {
  const int64_t M = state.range(0), N = state.range(1), K = state.range(2);
  const bool ta = state.range(3) != 0, tb = state.range(4) != 0;
  set_num_threads(static_cast<int>(state.range(5)));
  Generator gen(0);
  // a: [M, K] (a view of a [K, M] tensor when TA), b: [K, N] (a view of [N, K] when TB)
  const Tensor a = ta ? uniform({K, M}, -1, 1, gen).transpose(0, 1) : uniform({M, K}, -1, 1, gen);
  const Tensor b = tb ? uniform({N, K}, -1, 1, gen).transpose(0, 1) : uniform({K, N}, -1, 1, gen);
  for (auto _ : state) {
    Tensor c = matmul(a, b);
    benchmark::DoNotOptimize(c.data<float>());
  }
  state.counters["GFLOPS"] =
      benchmark::Counter(2.0 * static_cast<double>(M * N * K) * static_cast<double>(state.iterations()) / 1e9,
                         benchmark::Counter::kIsRate);
}

void BM_Reference(benchmark::State& state) {
  const int64_t n = state.range(0);
  Generator gen(0);
  const Tensor a = uniform({n, n}, -1, 1, gen), b = uniform({n, n}, -1, 1, gen);  // [n, n] each
  for (auto _ : state) {
    Tensor c = matmul_reference(a, b);
    benchmark::DoNotOptimize(c.data<float>());
  }
  state.counters["GFLOPS"] =
      benchmark::Counter(2.0 * static_cast<double>(n * n * n) * static_cast<double>(state.iterations()) / 1e9,
                         benchmark::Counter::kIsRate);
}

}  // namespace

int main(int argc, char** argv) {
  keep_freed_memory();  // as bench_main.cpp does for the other benchmarks (tensor/support/memory.h)
  std::string shapes = kBuiltinShapes;
  if (const char* path = std::getenv("MATMUL_SHAPES")) {
    std::ifstream in(path);
    if (!in) {
      std::fprintf(stderr, "bench_matmul: cannot read MATMUL_SHAPES=%s\n", path);
      return 2;
    }
    std::stringstream text;
    text << in.rdbuf();
    shapes = text.str();
  }
  auto* bm = benchmark::RegisterBenchmark("BM_Matmul", BM_Matmul);
  bm->ArgNames({"M", "N", "K", "TA", "TB", "T"})->UseRealTime()->Unit(benchmark::kMicrosecond);
  std::istringstream lines(shapes);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream s(line);
    int64_t m, n, k, ta, tb, t;
    if (s >> m >> n >> k >> ta >> tb >> t) bm->Args({m, n, k, ta, tb, t});
  }
  benchmark::RegisterBenchmark("BM_Reference", BM_Reference)
      ->ArgName("n")
      ->Arg(512)
      ->Arg(1024)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  return 0;
}
