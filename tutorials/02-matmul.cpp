// Chapter 2's companion program: the ladder from a naive triple loop to a packed, cache-blocked,
// threaded SIMD matrix multiply, each step timed in GFLOP/s and as a percent of this machine's peak.
//
//   02-matmul            the chapter's measurements: n = 512 and 1024
//   02-matmul --quick    a quick check that every step runs and agrees (what the test suite runs)
//
// Every step is checked against the definition: the library's matmul_reference
// (tensor/matmul_reference.h). Chapter 18's program includes this file, with
// GRADFORMER_LADDER_NO_MAIN defined, for the FMA loops that measure the peak.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <vector>

#include "claims.h"  // output_path
#include "tensor/all.h"
#include "tensor/kernels/gemm.h"
#include "tensor/kernels/parallel.h"
#include "tensor/matmul.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define LADDER_HAVE_X86 1
#endif

namespace ladder {

using gradformer::detail::MicroKernels;

// ---- the machine's peak ----------------------------------------------------------------------

#if defined(LADDER_HAVE_X86)
inline volatile float fma_sink;
// Peak = what the FMA units can do when nothing else is in the way: 12 independent chains of
// fused multiply-adds on 8-float vectors, so that every cycle both FMA pipes start a new one.
// (12 chains, not 2: an FMA takes 4 cycles to finish, and 2 pipes x 4 cycles = 8 in flight.)
__attribute__((target("avx2,fma"))) double fma_flops(int64_t steps) {
  __m256 acc[12];
  for (int r = 0; r < 12; ++r) acc[r] = _mm256_set1_ps(static_cast<float>(r));
  const __m256 x = _mm256_set1_ps(0.999f), y = _mm256_set1_ps(0.001f);
  for (int64_t s = 0; s < steps; ++s)
    for (int r = 0; r < 12; ++r) acc[r] = _mm256_fmadd_ps(acc[r], x, y);
  for (int r = 0; r < 12; ++r) fma_sink = _mm256_cvtss_f32(acc[r]);  // used, so not optimised away
  return 12.0 * 8 * 2 * static_cast<double>(steps);                  // 12 FMAs x 8 lanes x 2 flops each
}

// The same on AVX-512's 16-float vectors. A core with two 512-bit FMA units does twice the flops of
// AVX2 here; one that runs each 512-bit FMA as two 256-bit halves (AMD's Zen 4) does the same.
__attribute__((target("avx512f"))) double fma_flops_avx512(int64_t steps) {
  __m512 acc[12];
  for (int r = 0; r < 12; ++r) acc[r] = _mm512_set1_ps(static_cast<float>(r));
  const __m512 x = _mm512_set1_ps(0.999f), y = _mm512_set1_ps(0.001f);
  for (int64_t s = 0; s < steps; ++s)
    for (int r = 0; r < 12; ++r) acc[r] = _mm512_fmadd_ps(acc[r], x, y);
  for (int r = 0; r < 12; ++r) fma_sink = _mm512_cvtss_f32(acc[r]);
  return 12.0 * 16 * 2 * static_cast<double>(steps);  // 12 FMAs x 16 lanes x 2 flops each
}

// GFLOP/s of the best of `runs` runs (~10 ms each) of an FMA loop, timed by the CPU time it uses (so
// that other programs on a shared machine do not count against it; noise only slows, hence the best).
inline double best_fma_gflops(double (*fma_loop)(int64_t), int runs) {
  double best = 0;
  for (int run = 0; run < runs; ++run) {
    const std::clock_t start = std::clock();
    const double flops = fma_loop(5'000'000);
    best = std::max(best, flops / (static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC) / 1e9);
  }
  return best;
}
#endif

// ---- step 1: the definition -----------------------------------------------------------------
// C[i, j] = sum over k of A[i, k] * B[k, j]; A: [n, n], B: [n, n], C: [n, n], all row-major.
void naive(const float* a, const float* b, float* c, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      float sum = 0;
      for (int64_t k = 0; k < n; ++k) sum += a[i * n + k] * b[k * n + j];  // b walks down a column
      c[i * n + j] = sum;
    }
}

// ---- step 2: loop order ---------------------------------------------------------------------
// The same sums, with k in the middle: the inner loop now walks along a row of B and a row of C.
void loop_order(const float* a, const float* b, float* c, int64_t n) {
  std::fill(c, c + n * n, 0.0f);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < n; ++k) {
      const float aik = a[i * n + k];
      for (int64_t j = 0; j < n; ++j) c[i * n + j] += aik * b[k * n + j];  // unit stride: vectorised
    }
}

// ---- step 3: the micro-kernel alone ---------------------------------------------------------
// The kernels of steps 3 to 6: AVX2's 6 x 16 tile, the one the chapter explains first, whenever the
// library runs a SIMD kernel (step 7 is the wider one); the portable kernel when it runs that.
inline gradformer::MatmulKernel tile_kernel() {
  using gradformer::MatmulKernel;
  const MatmulKernel library = gradformer::matmul_kernel();
  return library == MatmulKernel::Avx512 && gradformer::matmul_kernel_available(MatmulKernel::Avx2) ? MatmulKernel::Avx2
                                                                                                    : library;
}
inline const MicroKernels<float>& tile_kernels() {
  return tile_kernel() == gradformer::matmul_kernel() ? gradformer::detail::active_kernels<float>()
                                                      : *gradformer::detail::avx2_kernels<float>();
}

// C is cut into MR x NR tiles (6 x 16 with AVX2); each tile lives in registers while k runs.
//   uk.unpacked(kc, A tile rows, rsa, csa, B tile columns, rsb, C tile, ldc, m, n, accumulate)
void micro_kernel(const float* a, const float* b, float* c, int64_t n) {
  const MicroKernels<float>& uk = tile_kernels();
  for (int64_t i = 0; i < n; i += uk.mr)
    for (int64_t j = 0; j < n; j += uk.nr) {
      const int m = static_cast<int>(std::min<int64_t>(uk.mr, n - i));
      const int w = static_cast<int>(std::min<int64_t>(uk.nr, n - j));
      uk.unpacked(n, a + i * n, n, 1, b + j, n, c + i * n + j, n, m, w, false);
    }
}

// ---- step 4: cache blocking -----------------------------------------------------------------
// Five loops around the same micro-kernel; each loop cuts out a block sized for one cache level.
constexpr int64_t KC = 256, MC = 144, NC = 4080;  // the block sizes (figures/02-blocking.svg draws them)
void blocked(const float* a, const float* b, float* c, int64_t n) {
  const MicroKernels<float>& uk = tile_kernels();
  for (int64_t jc = 0; jc < n; jc += NC)                               // loop 5: NC columns of B and C
    for (int64_t pc = 0; pc < n; pc += KC)                             // loop 4: B[pc:pc+KC, jc:jc+NC], KC x NC -> L3
      for (int64_t ic = 0; ic < n; ic += MC)                           // loop 3: A[ic:ic+MC, pc:pc+KC], MC x KC -> L2
        for (int64_t jr = jc; jr < std::min(n, jc + NC); jr += uk.nr)  // loop 2: B[pc:pc+KC, jr:jr+NR] -> L1
          for (int64_t ir = ic; ir < std::min(n, ic + MC); ir += uk.mr) {  // loop 1: A[ir:ir+MR, pc:pc+KC]
            const int64_t kc = std::min(KC, n - pc);
            const int m = static_cast<int>(std::min<int64_t>(uk.mr, n - ir));
            const int w = static_cast<int>(std::min<int64_t>(uk.nr, n - jr));
            // micro-kernel: C[ir:ir+m, jr:jr+w] += A[ir:ir+m, pc:pc+kc] · B[pc:pc+kc, jr:jr+w]
            uk.unpacked(kc, a + ir * n + pc, n, 1, b + pc * n + jr, n, c + ir * n + jr, n, m, w, pc > 0);
          }
}

// ---- step 5: packing, and step 6: threads ---------------------------------------------------
// The library's gemm_packed (tensor/kernels/gemm.cpp): the loops of step 4, plus copying each block of B
// and A into the micro-kernel's reading order; with threads, the rows of C are split between cores.
void packed(const float* a, const float* b, float* c, int64_t n) {
  const MicroKernels<float>& uk = tile_kernels();
  gradformer::detail::gemm_packed<float>(uk, n, n, n, {a, n, 1}, {b, n, 1}, c, n, 1);
}

void threaded(const float* a, const float* b, float* c, int64_t n) {
  const MicroKernels<float>& uk = tile_kernels();
  gradformer::detail::gemm_packed<float>(uk, n, n, n, {a, n, 1}, {b, n, 1}, c, n, gradformer::num_threads());
}

// ---- step 7: wider vectors ------------------------------------------------------------------
// Step 5 with the kernel the library itself runs: the widest this CPU has (AVX-512's 8 x 32 tile
// where there is AVX-512, else the same kernel as step 5).
void widest(const float* a, const float* b, float* c, int64_t n) {
  const MicroKernels<float>& uk = gradformer::detail::active_kernels<float>();
  gradformer::detail::gemm_packed<float>(uk, n, n, n, {a, n, 1}, {b, n, 1}, c, n, 1);
}

struct Step {
  const char* name;
  void (*run)(const float* a, const float* b, float* c, int64_t n);
  bool uses_all_threads;
};

inline const Step kSteps[] = {
    {"naive", naive, false},     {"loop_order", loop_order, false}, {"micro_kernel", micro_kernel, false},
    {"blocked", blocked, false}, {"packed", packed, false},         {"threaded", threaded, true},
    {"widest", widest, false},
};

}  // namespace ladder

#if !defined(GRADFORMER_LADDER_NO_MAIN)

namespace {

// Chapter 2's figure, 02-blocking.svg: C += A B cut by the five loops of `blocked` (step 4), each
// block drawn where it lies in its matrix and labelled with the cache it is sized for. The sizes are
// not to scale; the names are the constants of `blocked` and the micro-kernel's MR x NR tile.
void draw_blocking(const char* path) {
  std::FILE* f = std::fopen(path, "w");
  if (f == nullptr) return;
  auto rect = [&](int x, int y, int w, int h, const char* fill, const char* stroke) {
    std::fprintf(f, "<rect x='%d' y='%d' width='%d' height='%d' fill='%s' stroke='%s'/>\n", x, y, w, h, fill, stroke);
  };
  auto text = [&](int x, int y, const char* anchor, const char* words) {
    std::fprintf(f, "<text x='%d' y='%d' text-anchor='%s'>%s</text>\n", x, y, anchor, words);
  };
  auto line = [&](int x1, int y1, int x2, int y2) {
    std::fprintf(f, "<line x1='%d' y1='%d' x2='%d' y2='%d' stroke='#555' stroke-dasharray='3 3'/>\n", x1, y1, x2, y2);
  };
  std::fprintf(
      f,
      "<svg xmlns='http://www.w3.org/2000/svg' width='960' height='530' viewBox='0 0 960 530' "
      "font-family='Helvetica, Arial, sans-serif' font-size='13'>\n<rect width='960' height='530' fill='#fff'/>\n");
  // The three matrices: A [M, K] left of C [M, N], B [K, N] above C.
  rect(80, 220, 160, 200, "#f7f7f7", "#333"), text(160, 445, "middle", "A  [M, K]");
  rect(280, 40, 400, 160, "#f7f7f7", "#333"), text(480, 30, "middle", "B  [K, N]");
  rect(280, 220, 400, 200, "#f7f7f7", "#333"), text(480, 445, "middle", "C  [M, N]");
  // loop 5: NC columns of B and C
  rect(400, 40, 200, 160, "#e8eef7", "#7a9cc6"), rect(400, 220, 200, 200, "#e8eef7", "#7a9cc6");
  // loop 4: KC rows of that slab of B (the KC x NC block, L3), KC columns of A
  rect(400, 80, 200, 60, "#c5d6ee", "#3b6ea8"), rect(120, 220, 60, 200, "#eadff2", "#8a63a8");
  // loop 3: MC rows of A's KC columns (the MC x KC block, L2), and the MC x NC block of C it updates
  rect(120, 280, 60, 80, "#c9b3dc", "#6a3d8f"), rect(400, 280, 200, 80, "#dde8f5", "#3b6ea8");
  // loop 2: a KC x NR sliver of B (L1); loop 1: an MR x KC sliver of A; the MR x NR tile of C (registers)
  rect(440, 80, 16, 60, "#2f5f9e", "#1d3d66"), rect(120, 300, 60, 10, "#6a3d8f", "#3f2156");
  rect(440, 300, 16, 10, "#d62728", "#7f1414");
  line(456, 140, 456, 300), line(180, 305, 440, 305);
  // Labels, on the right, for each block from the outside in.
  const int lx = 700;
  char words[2][96];
  std::snprintf(words[0], sizeof words[0], "loop 5: jc steps by NC = %lld columns", static_cast<long long>(ladder::NC));
  std::snprintf(words[1], sizeof words[1], "loop 4: pc steps by KC = %lld;", static_cast<long long>(ladder::KC));
  text(lx, 60, "start", words[0]);
  text(lx, 100, "start", words[1]);
  text(lx, 116, "start", "B[pc:+KC, jc:+NC] stays in L3");
  text(lx, 156, "start", "loop 2: jr steps by NR;");
  text(lx, 172, "start", "B[pc:+KC, jr:+NR] stays in L1");
  text(lx, 300, "start", "micro-kernel: the MR x NR tile");
  text(lx, 316, "start", "of C stays in registers");
  std::fprintf(f, "<line x1='600' y1='56' x2='%d' y2='56' stroke='#7a9cc6'/>\n", lx - 4);
  std::fprintf(f, "<line x1='600' y1='104' x2='%d' y2='104' stroke='#3b6ea8'/>\n", lx - 4);
  std::fprintf(f, "<line x1='456' y1='120' x2='%d' y2='160' stroke='#1d3d66'/>\n", lx - 4);
  std::fprintf(f, "<line x1='456' y1='305' x2='%d' y2='305' stroke='#7f1414'/>\n", lx - 4);
  // A's two blocks, keyed by colour below the matrices.
  std::snprintf(words[0], sizeof words[0], "loop 3: ic steps by MC = %lld; A[ic:+MC, pc:+KC] stays in L2",
                static_cast<long long>(ladder::MC));
  rect(80, 470, 14, 14, "#c9b3dc", "#6a3d8f"), text(102, 482, "start", words[0]);
  rect(80, 496, 14, 14, "#6a3d8f", "#3f2156"),
      text(102, 508, "start", "loop 1: ir steps by MR; A[ir:+MR, pc:+KC] streams from L2");
  std::fprintf(f, "</svg>\n");
  std::fclose(f);
}

// Seconds taken by fn(). One-thread work is timed by the CPU time it uses, so that other programs
// on a shared machine do not count against it; work on several threads by the wall clock.
template <class F>
double seconds(bool wall_clock, F&& fn) {
  const auto wall = std::chrono::steady_clock::now();
  const std::clock_t cpu = std::clock();
  fn();
  if (wall_clock) return std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count();
  return static_cast<double>(std::clock() - cpu) / CLOCKS_PER_SEC;
}

// Every step must compute the same product as the definition (the library's matmul_reference, summed
// in float64), to rounding: |difference| <= n * eps * sum|a*b| <= n * eps * n for values in [-1, 1)
// (with a factor 2 to spare).
bool agrees(const std::vector<float>& c, const std::vector<float>& want, int64_t n) {
  double worst = 0;
  for (size_t i = 0; i < c.size(); ++i) worst = std::max(worst, static_cast<double>(std::abs(c[i] - want[i])));
  return worst <= 2.0 * static_cast<double>(n * n) * 1.2e-7;
}

// GFLOP/s of the best of `reps` runs (the best, because on a shared machine noise only slows).
double measure(const ladder::Step& step, const std::vector<float>& a, const std::vector<float>& b,
               std::vector<float>& c, int64_t n, int reps) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r)
    best = std::min(best, seconds(step.uses_all_threads, [&] { step.run(a.data(), b.data(), c.data(), n); }));
  return 2.0 * static_cast<double>(n) * static_cast<double>(n) * static_cast<double>(n) / best / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  draw_blocking(tutorial::output_path("02-blocking.svg").c_str());  // the figure of step 4, in every mode
  const int threads = gradformer::num_threads();
  std::printf("kernel: %s (steps 3 to 6: %s), threads: %d\n",
              gradformer::matmul_kernel_name(gradformer::matmul_kernel()),
              gradformer::matmul_kernel_name(ladder::tile_kernel()), threads);
  // How busy the machine was: runnable jobs, averaged over the last minute (Linux's /proc/loadavg).
  // Above the core count, the threaded step waits for cores that others are using.
  double load = -1;
  if (std::FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &load) != 1) load = -1;
    std::fclose(f);
  }
  if (load >= 0)
    std::printf("load average (1 minute): %.2f on %d threads\n", load, threads);
  else
    std::printf("load average: not available on this system\n");

  // Peak of one core: flops per cycle x cycles per second, measured by keeping the FMA units busy
  // (the best of several ~10 ms runs), for each vector width this CPU has; the percentages below
  // are of the higher.
  double peak = 0;
#if defined(LADDER_HAVE_X86)
  const int runs = quick ? 3 : 20;
  if (gradformer::matmul_kernel_available(gradformer::MatmulKernel::Avx2)) {
    peak = ladder::best_fma_gflops(ladder::fma_flops, runs);
    std::printf("peak of one core: %.1f GFLOP/s with AVX2 (32 flops per cycle at %.2f GHz)\n", peak, peak / 32);
  }
  if (gradformer::matmul_kernel_available(gradformer::MatmulKernel::Avx512)) {
    const double wide = ladder::best_fma_gflops(ladder::fma_flops_avx512, runs);
    std::printf("                  %.1f GFLOP/s with AVX-512 (%.2f times AVX2's)\n", wide,
                peak > 0 ? wide / peak : 0.0);
    peak = std::max(peak, wide);
  }
#endif
  if (peak == 0) std::printf("peak: not measured on this CPU (see the chapter for the formula)\n");

  int failures = 0;
  for (const int64_t n : quick ? std::vector<int64_t>{200} : std::vector<int64_t>{512, 1024}) {
    // A, B: [n, n] with values in [-1, 1); what every step must compute is the definition.
    gradformer::Generator gen(42);
    const gradformer::Tensor ta = gradformer::uniform({n, n}, -1, 1, gen), tb = gradformer::uniform({n, n}, -1, 1, gen);
    const std::vector<float> a = ta.to_vector<float>(), b = tb.to_vector<float>();
    const std::vector<float> want = gradformer::matmul_reference(ta, tb).to_vector<float>();
    std::vector<float> c(static_cast<size_t>(n * n));
    std::printf("\nn = %lld          GFLOP/s   %% of peak\n", static_cast<long long>(n));
    for (const ladder::Step& step : ladder::kSteps) {
      const bool slow = std::strcmp(step.name, "naive") == 0 || std::strcmp(step.name, "loop_order") == 0;
      const double gflops = measure(step, a, b, c, n, quick || (slow && n > 512) ? 1 : slow ? 3 : 10);
      const double step_peak = peak * (step.uses_all_threads ? threads : 1);
      const bool ok = agrees(c, want, n);
      failures += !ok;
      std::printf("  %-13s %9.1f   %8.0f%%%s\n", step.name, gflops, step_peak > 0 ? 100 * gflops / step_peak : 0.0,
                  ok ? "" : "   WRONG RESULT");
    }
  }

  // One attention head's product, 64 x 64 x 64, with each SIMD kernel this CPU runs. It takes the
  // small path (A read in place, no packing), and a tile's loop and call overhead is a larger share
  // of so little work: the case the wider tile is for. The best of several batches of products.
  std::printf("\n64 x 64 x 64     GFLOP/s   %% of peak\n");
  {
    const int64_t n = 64, products = 2000;
    gradformer::Generator gen(7);
    const gradformer::Tensor ta = gradformer::uniform({n, n}, -1, 1, gen), tb = gradformer::uniform({n, n}, -1, 1, gen);
    const std::vector<float> a = ta.to_vector<float>(), b = tb.to_vector<float>();
    const std::vector<float> want = gradformer::matmul_reference(ta, tb).to_vector<float>();
    std::vector<float> c(static_cast<size_t>(n * n));
    using gradformer::MatmulKernel;
    if (!gradformer::matmul_kernel_available(MatmulKernel::Avx2) &&
        !gradformer::matmul_kernel_available(MatmulKernel::Avx512))
      std::printf("  (no SIMD kernel in this build or on this CPU)\n");
    for (MatmulKernel kernel : {MatmulKernel::Avx2, MatmulKernel::Avx512}) {
      if (!gradformer::matmul_kernel_available(kernel)) continue;
      const gradformer::detail::MicroKernels<float>& uk = kernel == MatmulKernel::Avx2
                                                              ? *gradformer::detail::avx2_kernels<float>()
                                                              : *gradformer::detail::avx512_kernels<float>();
      double best = 1e30;
      for (int rep = 0; rep < (quick ? 3 : 20); ++rep)
        best = std::min(
            best, seconds(false, [&] {
              for (int64_t p = 0; p < products; ++p)
                gradformer::detail::gemm<float>(uk, n, n, n, {a.data(), n, 1}, {b.data(), n, 1}, c.data(), n, 1);
            }));
      const double gflops = 2.0 * n * n * n * products / best / 1e9;
      const bool ok = agrees(c, want, n);
      failures += !ok;
      std::printf("  %-13s %9.1f   %8.0f%%%s\n", gradformer::matmul_kernel_name(kernel), gflops,
                  peak > 0 ? 100 * gflops / peak : 0.0, ok ? "" : "   WRONG RESULT");
    }
  }
  return failures == 0 ? 0 : 1;
}

#endif
