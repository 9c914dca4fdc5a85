// The x86 micro-kernels, written once for any vector width: gemm_kernel_avx2.cpp instantiates them
// with 256-bit vectors (AVX2 + FMA), gemm_kernel_avx512.cpp with 512-bit ones (AVX-512F). A kernel
// set is a tile shape MR x NR (NR = 2 vectors) and a vector type X that provides, for its element
// type T (float or double):
//   V, Mask, kLanes           the vector, a lane mask, lanes per vector
//   zero, load, load_aligned, broadcast, fma, add, store
//   mask(n)                   lanes [0, n) set, n clamped to [0, kLanes]
//   maskload(p, m), maskstore(p, m, v)   only the lanes in m are read / written
// Every element of C is the same chain of FMAs in the same order of k whatever the vector width or
// tile shape, so the two kernel sets give bit-identical products (tests/tensor/test_matmul.cpp).
//
// Include this only from a file compiled for the instruction set of the X it is used with (CMake
// sets -mavx2 -mfma, or -mavx512f -mfma, for those files alone); everything here lives in an
// anonymous namespace, so each such file gets its own copy and nothing leaks into code that runs on
// other CPUs. The packers use 256-bit AVX2 shuffles, which AVX-512 CPUs also have.
#pragma once

// GCC 12's AVX-512 intrinsics start from an undefined vector in their masked forms (extracting the
// upper half of a vector, shuffling lanes), which it reports as uninitialised inside the header: a
// false alarm (GCC bug 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif

#include <algorithm>
#include <array>
#include <utility>

#include "tensor/kernels/gemm.h"

namespace gradformer::detail {
namespace {

#define GF_INLINE inline __attribute__((always_inline))
// The same for a lambda, [&](auto r) GF_LAMBDA_INLINE { ... }: left to itself the compiler may call
// a large one out of line, and the accumulators it touches then have to live in memory.
#define GF_LAMBDA_INLINE __attribute__((always_inline))

// Calls f(integral_constant<int, 0>), ..., f(integral_constant<int, N-1>): a loop the compiler must
// unroll, so that acc[r] names a register, not a memory slot.
template <int N, class F>
GF_INLINE void unroll(F&& f) {
  [&]<int... i>(std::integer_sequence<int, i...>) GF_LAMBDA_INLINE { (f(std::integral_constant<int, i>{}), ...); }
  (std::make_integer_sequence<int, N>{});
}

// Writes R rows of NV (1 or 2) accumulator vectors to c[0:m, 0:n] (adding what c holds when
// accumulate).
template <class X, int R, int NV>
GF_INLINE void write_tile(typename X::V (&acc)[R][NV], typename X::T* c, int64_t ldc, int m, int n, bool accumulate) {
  static_assert(NV == 1 || NV == 2);
  constexpr int W = X::kLanes;
  if (m == R && n == NV * W) {
    unroll<R>([&](auto r) GF_LAMBDA_INLINE {
      typename X::T* row = c + r * ldc;
      if (accumulate) acc[r][0] = X::add(acc[r][0], X::load(row));
      X::store(row, acc[r][0]);
      if constexpr (NV == 2) {
        if (accumulate) acc[r][1] = X::add(acc[r][1], X::load(row + W));
        X::store(row + W, acc[r][1]);
      }
    });
    return;
  }
  const typename X::Mask m0 = X::mask(n), m1 = X::mask(n - W);
  unroll<R>([&](auto r) GF_LAMBDA_INLINE {
    if (r >= m) return;
    typename X::T* row = c + r * ldc;
    if (accumulate) acc[r][0] = X::add(acc[r][0], X::maskload(row, m0));
    X::maskstore(row, m0, acc[r][0]);
    if constexpr (NV == 2) {
      if (accumulate) acc[r][1] = X::add(acc[r][1], X::maskload(row + W, m1));
      X::maskstore(row + W, m1, acc[r][1]);
    }
  });
}

// Packed micro-kernel: a is an MR x kc panel (a[k*MR + r]), b a kc x NR panel (b[k*NR + j]).
//   c[0:m, 0:n] (+)= a[0:MR, 0:kc] · b[0:kc, 0:n]
// NV vectors of columns are computed: 2 (the whole NR), or 1 when n fits in one vector, so that a
// narrow C (a vocabulary of 11 words, say) does not cost twice the arithmetic it needs.
template <class X, int MR, int NV>
void packed_kernel(int64_t kc, const typename X::T* a, const typename X::T* b, typename X::T* c, int64_t ldc, int m,
                   int n, bool accumulate) {
  constexpr int W = X::kLanes, NR = 2 * W;
  typename X::V acc[MR][NV];
  unroll<MR>([&](auto r) GF_LAMBDA_INLINE {
    acc[r][0] = X::zero();
    if constexpr (NV == 2) acc[r][1] = X::zero();
  });
  // The C tile is written once at the end; asking for it now hides the miss behind the k loop.
  for (int r = 0; r < m; ++r) {
    __builtin_prefetch(c + r * ldc);
    __builtin_prefetch(c + r * ldc + NV * W - 1);
  }
#pragma GCC unroll 4
  for (int64_t k = 0; k < kc; ++k) {
    const typename X::V b0 = X::load_aligned(b);
    typename X::V b1;
    if constexpr (NV == 2) b1 = X::load_aligned(b + W);
    unroll<MR>([&](auto r) GF_LAMBDA_INLINE {
      const typename X::V ar = X::broadcast(a + r);
      acc[r][0] = X::fma(ar, b0, acc[r][0]);
      if constexpr (NV == 2) acc[r][1] = X::fma(ar, b1, acc[r][1]);
    });
    a += MR;
    b += NR;
  }
  write_tile<X, MR, NV>(acc, c, ldc, m, n, accumulate);
}

template <class X, int MR>
void packed_dispatch(int64_t kc, const typename X::T* a, const typename X::T* b, typename X::T* c, int64_t ldc, int m,
                     int n, bool accumulate) {
  if (n <= X::kLanes)
    packed_kernel<X, MR, 1>(kc, a, b, c, ldc, m, n, accumulate);
  else
    packed_kernel<X, MR, 2>(kc, a, b, c, ldc, m, n, accumulate);
}

// Unpacked micro-kernel for R valid rows and NV vectors of columns: A read through its strides (one
// broadcast per element, so any layout works), B rows read in place. Only the first n columns of B
// exist, (NV - 1) * lanes < n <= NV * lanes; with kMasked (n < NV * lanes) the last vector of each
// row of B is loaded under a mask. A narrow B (n <= lanes) thus takes one vector per row, not two
// of which one is all padding.
template <class X, int R, int NV, bool kMasked>
void unpacked_kernel(int64_t kc, const typename X::T* a, int64_t rsa, int64_t csa, const typename X::T* b, int64_t rsb,
                     typename X::T* c, int64_t ldc, int n, bool accumulate) {
  static_assert(NV == 1 || NV == 2);
  constexpr int W = X::kLanes;
  typename X::V acc[R][NV];
  unroll<R>([&](auto r) GF_LAMBDA_INLINE {
    acc[r][0] = X::zero();
    if constexpr (NV == 2) acc[r][1] = X::zero();
  });
  const typename X::Mask last = X::mask(n - (NV - 1) * W);
  const typename X::T* arow[R];
  unroll<R>([&](auto r) GF_LAMBDA_INLINE { arow[r] = a + r * rsa; });
#pragma GCC unroll 2
  for (int64_t k = 0; k < kc; ++k) {
    typename X::V b0, b1;
    if constexpr (NV == 1) {
      b0 = kMasked ? X::maskload(b, last) : X::load(b);
    } else {
      b0 = X::load(b);
      b1 = kMasked ? X::maskload(b + W, last) : X::load(b + W);
    }
    unroll<R>([&](auto r) GF_LAMBDA_INLINE {
      const typename X::V ar = X::broadcast(arow[r] + k * csa);
      acc[r][0] = X::fma(ar, b0, acc[r][0]);
      if constexpr (NV == 2) acc[r][1] = X::fma(ar, b1, acc[r][1]);
    });
    b += rsb;
  }
  write_tile<X, R, NV>(acc, c, ldc, R, n, accumulate);
}

template <class X, int R>
void unpacked_rows(int64_t kc, const typename X::T* a, int64_t rsa, int64_t csa, const typename X::T* b, int64_t rsb,
                   typename X::T* c, int64_t ldc, int n, bool accumulate) {
  constexpr int W = X::kLanes;
  if (n == 2 * W)
    unpacked_kernel<X, R, 2, false>(kc, a, rsa, csa, b, rsb, c, ldc, n, accumulate);
  else if (n > W)
    unpacked_kernel<X, R, 2, true>(kc, a, rsa, csa, b, rsb, c, ldc, n, accumulate);
  else if (n == W)
    unpacked_kernel<X, R, 1, false>(kc, a, rsa, csa, b, rsb, c, ldc, n, accumulate);
  else
    unpacked_kernel<X, R, 1, true>(kc, a, rsa, csa, b, rsb, c, ldc, n, accumulate);
}

// The unpacked kernel for m valid rows (1 <= m <= MR): one instance per row count, so that each
// keeps exactly m rows of accumulators in registers.
template <class X, int MR>
void unpacked_dispatch(int64_t kc, const typename X::T* a, int64_t rsa, int64_t csa, const typename X::T* b,
                       int64_t rsb, typename X::T* c, int64_t ldc, int m, int n, bool accumulate) {
  using Rows = void (*)(int64_t, const typename X::T*, int64_t, int64_t, const typename X::T*, int64_t, typename X::T*,
                        int64_t, int, bool);
  static constexpr std::array<Rows, MR> by_rows = []<int... r>(std::integer_sequence<int, r...>) {
    return std::array<Rows, MR>{&unpacked_rows<X, r + 1>...};
  }
  (std::make_integer_sequence<int, MR>{});
  by_rows[std::clamp(m, 1, MR) - 1](kc, a, rsa, csa, b, rsb, c, ldc, n, accumulate);
}

// ---- dot products (the matrix-vector path) -----------------------------------------------------

// The sum of one 64-byte span's partial sums in the fixed tree of gemm.h's dot, part[l] +=
// part[l + width] for width = span / 2, ..., 1, in registers: each step adds the upper half of the
// lanes to the lower half, the same additions of the same numbers as the loop over an array, so the
// same bits (an array on the stack costs a store and a chain of dependent loads per row).
GF_INLINE float tree_sum(__m128 v) {
  v = _mm_add_ps(v, _mm_movehl_ps(v, v));                        // width 2
  return _mm_cvtss_f32(_mm_add_ss(v, _mm_shuffle_ps(v, v, 1)));  // width 1
}
GF_INLINE float tree_sum(__m256 v) {
  return tree_sum(_mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1)));
}
GF_INLINE double tree_sum(__m128d v) { return _mm_cvtsd_f64(_mm_add_sd(v, _mm_unpackhi_pd(v, v))); }
GF_INLINE double tree_sum(__m256d v) {
  return tree_sum(_mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1)));
}
#ifdef __AVX512F__  // the AVX-512 kernels' file only
GF_INLINE float tree_sum(__m512 v) {
  const __m256 upper = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1));
  return tree_sum(_mm256_add_ps(_mm512_castps512_ps256(v), upper));
}
GF_INLINE double tree_sum(__m512d v) {
  return tree_sum(_mm256_add_pd(_mm512_castpd512_pd256(v), _mm512_extractf64x4_pd(v, 1)));
}
#endif

// c[r * ldc] = sum_k a[r * lda + k] * b[k] for r < R: R rows of A against one row of B. Per 64-byte
// span of k: S = span / lanes vectors (1 with AVX-512, 2 with AVX2), so the partial sums are the
// same. B is read front to back as one stream (a weight's rows lie one after another, so the
// matrix-vector path reads the whole weight as one): interleaving several rows of B instead gives
// the memory several short streams at once, and measured on a Zen 4 core that reads about a third
// slower. The prefetch asks for the line one 4 KB page ahead into the L2 cache: the hardware's
// stream prefetcher does not cross a page, and a page at ~20 GB/s per core is ~200 ns, about the
// memory's latency; past the row's end it fetches the next rows, which the caller reads next.
template <class X, int R>
void dot_rows(int64_t kc, const typename X::T* a, int64_t lda, const typename X::T* b, typename X::T* c, int64_t ldc) {
  using T = typename X::T;
  using V = typename X::V;
  constexpr int W = X::kLanes, kSpan = 64 / sizeof(T), S = kSpan / W;
  constexpr int64_t kPrefetchAhead = 4096 / sizeof(T);
  V acc[R][S];
  unroll<R>([&](auto r) GF_LAMBDA_INLINE { unroll<S>([&](auto s) GF_LAMBDA_INLINE { acc[r][s] = X::zero(); }); });
  auto step = [&](int64_t k, auto load) GF_LAMBDA_INLINE {
    unroll<S>([&](auto s) GF_LAMBDA_INLINE {
      const V bv = load(b + k + s * W, s);
      unroll<R>([&](auto r) GF_LAMBDA_INLINE { acc[r][s] = X::fma(load(a + r * lda + k + s * W, s), bv, acc[r][s]); });
    });
  };
  int64_t k = 0;
  for (; k + kSpan <= kc; k += kSpan) {
    _mm_prefetch(reinterpret_cast<const char*>(b + k + kPrefetchAhead), _MM_HINT_T1);
    step(k, [](const T* p, int) GF_LAMBDA_INLINE { return X::load(p); });
  }
  if (k < kc) {  // the last, partial span: lanes past kc read as zeros and add nothing
    typename X::Mask masks[S];
    for (int s = 0; s < S; ++s) masks[s] = X::mask(static_cast<int>(kc - k) - s * W);
    step(k, [&](const T* p, int s) GF_LAMBDA_INLINE { return X::maskload(p, masks[s]); });
  }
  static_assert(S == 1 || S == 2);
  unroll<R>([&](auto r) GF_LAMBDA_INLINE {  // with two vectors a span, the tree's first step adds them
    if constexpr (S == 2)
      c[r * ldc] = tree_sum(X::add(acc[r][0], acc[r][1]));
    else
      c[r * ldc] = tree_sum(acc[r][0]);
  });
}

template <class X>
void dot_dispatch(int64_t kc, const typename X::T* a, int64_t lda, int m, const typename X::T* b, typename X::T* c,
                  int64_t ldc) {
  static_assert(kDotMaxRows == 4);
  switch (m) {
    case 1:
      return dot_rows<X, 1>(kc, a, lda, b, c, ldc);
    case 2:
      return dot_rows<X, 2>(kc, a, lda, b, c, ldc);
    case 3:
      return dot_rows<X, 3>(kc, a, lda, b, c, ldc);
    default:
      return dot_rows<X, 4>(kc, a, lda, b, c, ldc);
  }
}

// ---- packing with in-register transposes ------------------------------------------------------
// Packing a row-major A (or a transposed B) is a transpose: the panel wants, for each k, the MR
// elements of one column. Element by element that costs about as much as a small product itself,
// so 8 x 8 (float) and 4 x 4 (double) blocks are transposed in registers instead.

// r[i][j] -> r[j][i] for an 8 x 8 block of floats.
GF_INLINE void transpose8(__m256 (&r)[8]) {
  __m256 t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int i = 0; i < 4; ++i) {
    r[i] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x20);
    r[i + 4] = _mm256_permute2f128_ps(u[i], u[i + 4], 0x31);
  }
}

// r[i][j] -> r[j][i] for a 4 x 4 block of doubles.
GF_INLINE void transpose4(__m256d (&r)[4]) {
  const __m256d t0 = _mm256_unpacklo_pd(r[0], r[1]), t1 = _mm256_unpackhi_pd(r[0], r[1]);
  const __m256d t2 = _mm256_unpacklo_pd(r[2], r[3]), t3 = _mm256_unpackhi_pd(r[2], r[3]);
  r[0] = _mm256_permute2f128_pd(t0, t2, 0x20);
  r[1] = _mm256_permute2f128_pd(t1, t3, 0x20);
  r[2] = _mm256_permute2f128_pd(t0, t2, 0x31);
  r[3] = _mm256_permute2f128_pd(t1, t3, 0x31);
}

// The 8 floats of row i of a at k, or zeros for a row i >= m that does not exist. The packers below
// take the count of rows m at run time only for a ragged panel (kRagged); for a full one it is the
// panel width, a constant, and every test of i < m disappears.
GF_INLINE __m256 load_row(const float* a, int64_t rs, int64_t k, int i, int m) {
  return i < m ? _mm256_loadu_ps(a + i * rs + k) : _mm256_setzero_ps();
}

// dst[k*MR + r] = a[r*rs + k] for r < m (m <= MR <= 8), zero for m <= r < MR: the m rows (+ rows of
// zeros up to 8) transposed 8 k at a time; each store writes 8 floats, the last 8 - MR overwritten
// by the next k's (or left as slack past the panel, which the caller's buffer has room for).
template <int MR, bool kRagged>
void pack_a_rows(int64_t kc, const float* a, int64_t rs, int m, float* dst) {
  static_assert(MR <= 8);
  if constexpr (!kRagged) m = MR;
  int64_t k = 0;
  for (; k + 8 <= kc; k += 8) {
    __m256 r[8];
    for (int i = 0; i < 8; ++i) r[i] = load_row(a, rs, k, i, m);
    transpose8(r);
    for (int i = 0; i < 8; ++i) _mm256_storeu_ps(dst + (k + i) * MR, r[i]);
  }
  for (; k < kc; ++k)
    for (int i = 0; i < MR; ++i) dst[k * MR + i] = i < m ? a[i * rs + k] : 0.0f;
}

// dst[k*NR + j] = b[j*cs + k] for j < n, zero for n <= j < NR: NR / 8 transposes of 8 x 8 per 8 k.
template <int NR, bool kRagged>
void pack_b_cols(int64_t kc, const float* b, int64_t cs, int n, float* dst) {
  if constexpr (!kRagged) n = NR;
  int64_t k = 0;
  for (; k + 8 <= kc; k += 8)
    for (int h = 0; h < NR / 8; ++h) {
      __m256 r[8];
      for (int j = 0; j < 8; ++j) r[j] = load_row(b, cs, k, h * 8 + j, n);
      transpose8(r);
      for (int i = 0; i < 8; ++i) _mm256_store_ps(dst + (k + i) * NR + h * 8, r[i]);
    }
  for (; k < kc; ++k)
    for (int j = 0; j < NR; ++j) dst[k * NR + j] = j < n ? b[j * cs + k] : 0.0f;
}

// The 4 doubles of row i of a at k, or zeros for a row i >= m that does not exist.
GF_INLINE __m256d load_row(const double* a, int64_t rs, int64_t k, int i, int m) {
  return i < m ? _mm256_loadu_pd(a + i * rs + k) : _mm256_setzero_pd();
}

// dst[k*MR + r] = a[r*rs + k] for r < m, zero for m <= r < MR, MR even: rows in groups of 4 by a
// 4 x 4 transpose, a last pair of rows (MR = 6) interleaved.
template <int MR, bool kRagged>
void pack_a_rows(int64_t kc, const double* a, int64_t rs, int m, double* dst) {
  static_assert(MR % 2 == 0);
  if constexpr (!kRagged) m = MR;
  int64_t k = 0;
  for (; k + 4 <= kc; k += 4) {
    for (int g = 0; g + 4 <= MR; g += 4) {
      __m256d r[4];
      for (int i = 0; i < 4; ++i) r[i] = load_row(a, rs, k, g + i, m);
      transpose4(r);
      for (int i = 0; i < 4; ++i) _mm256_storeu_pd(dst + (k + i) * MR + g, r[i]);
    }
    if constexpr (MR % 4 == 2) {
      const __m256d x = load_row(a, rs, k, MR - 2, m), y = load_row(a, rs, k, MR - 1, m);
      const __m256d lo = _mm256_unpacklo_pd(x, y), hi = _mm256_unpackhi_pd(x, y);  // pairs for k 0,2 and 1,3
      const __m128d pairs[4] = {_mm256_castpd256_pd128(lo), _mm256_castpd256_pd128(hi), _mm256_extractf128_pd(lo, 1),
                                _mm256_extractf128_pd(hi, 1)};
      for (int i = 0; i < 4; ++i) _mm_storeu_pd(dst + (k + i) * MR + MR - 2, pairs[i]);
    }
  }
  for (; k < kc; ++k)
    for (int i = 0; i < MR; ++i) dst[k * MR + i] = i < m ? a[i * rs + k] : 0.0;
}

// dst[k*NR + j] = b[j*cs + k] for j < n, zero for n <= j < NR: NR / 4 transposes of 4 x 4 per 4 k.
template <int NR, bool kRagged>
void pack_b_cols(int64_t kc, const double* b, int64_t cs, int n, double* dst) {
  if constexpr (!kRagged) n = NR;
  int64_t k = 0;
  for (; k + 4 <= kc; k += 4)
    for (int h = 0; h < NR / 4; ++h) {
      __m256d r[4];
      for (int j = 0; j < 4; ++j) r[j] = load_row(b, cs, k, h * 4 + j, n);
      transpose4(r);
      for (int i = 0; i < 4; ++i) _mm256_store_pd(dst + (k + i) * NR + h * 4, r[i]);
    }
  for (; k < kc; ++k)
    for (int j = 0; j < NR; ++j) dst[k * NR + j] = j < n ? b[j * cs + k] : 0.0;
}

// A packer for a full panel (count == W, the loads unconditional) or a ragged one.
template <class T, int W, void (*kFull)(int64_t, const T*, int64_t, int, T*),
          void (*kRagged)(int64_t, const T*, int64_t, int, T*)>
void full_or_ragged(int64_t kc, const T* src, int64_t stride, int count, T* dst) {
  (count == W ? kFull : kRagged)(kc, src, stride, count, dst);
}

// The kernel set for vectors X and tiles of MR rows x 2 vectors, with the packers of its element
// type (the float and double packers are overloads; the function pointer types pick them).
template <class X, int MR>
constexpr MicroKernels<typename X::T> kernel_set() {
  using T = typename X::T;
  constexpr int NR = 2 * X::kLanes;
  return {MR,
          NR,
          packed_dispatch<X, MR>,
          unpacked_dispatch<X, MR>,
          full_or_ragged<T, MR, pack_a_rows<MR, false>, pack_a_rows<MR, true>>,
          full_or_ragged<T, NR, pack_b_cols<NR, false>, pack_b_cols<NR, true>>,
          dot_dispatch<X>};
}

}  // namespace
}  // namespace gradformer::detail
