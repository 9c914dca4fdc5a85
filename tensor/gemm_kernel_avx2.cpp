// The AVX2/FMA micro-kernels: one MR x NR tile of C = A·B held in registers while k runs.
//
// Why 6 x 16 for float32 (6 x 8 for float64): an AVX2 core has 16 ymm registers. A tile of
// 6 rows x 2 vectors needs 12 accumulators, 2 registers for the current row of B and 1 for a
// broadcast element of A: 15 of 16. Per step of k the kernel does 2 vector loads of B,
// 6 broadcasts of A and 12 FMAs; Zen 3 retires 2 FMAs per cycle with a latency of 4 cycles, so
// it needs at least 8 independent accumulators to keep both FMA pipes busy, and the loads
// (8 per 12 FMAs) fit in its 3 load ports. The kernel is thus bound by the FMA units:
// 2 FMA x 8 lanes x 2 flops = 32 float32 flops per cycle, the machine's peak.
//
// This file is compiled with -mavx2 -mfma (CMake sets that for this file only), and its kernels
// are only called after the CPU has been checked (gemm.cpp), so the library still runs on CPUs
// without AVX2.
#include "tensor/gemm.h"

#if defined(GRADFORMER_HAVE_AVX2)
#include <immintrin.h>

#include <utility>

namespace gradformer::detail {
namespace {

#define GF_INLINE inline __attribute__((always_inline))

// Calls f(integral_constant<int, 0>), ..., f(integral_constant<int, N-1>): a loop the compiler must
// unroll, so that acc[r] names a register, not a memory slot.
template <int N, class F>
GF_INLINE void unroll(F&& f) {
  [&]<int... i>(std::integer_sequence<int, i...>) { (f(std::integral_constant<int, i>{}), ...); }
  (std::make_integer_sequence<int, N>{});
}

// The handful of vector operations the kernel needs, for float (8 lanes) and double (4 lanes).
struct F32 {
  using T = float;
  using V = __m256;
  static constexpr int kLanes = 8;
  static GF_INLINE V zero() { return _mm256_setzero_ps(); }
  static GF_INLINE V load(const T* p) { return _mm256_loadu_ps(p); }
  static GF_INLINE V load_aligned(const T* p) { return _mm256_load_ps(p); }
  static GF_INLINE V broadcast(const T* p) { return _mm256_broadcast_ss(p); }
  static GF_INLINE V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static GF_INLINE V add(V a, V b) { return _mm256_add_ps(a, b); }
  static GF_INLINE void store(T* p, V v) { _mm256_storeu_ps(p, v); }
  // lanes [0, n) set, n clamped to [0, 8]
  static GF_INLINE __m256i mask(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static GF_INLINE V maskload(const T* p, __m256i m) { return _mm256_maskload_ps(p, m); }
  static GF_INLINE void maskstore(T* p, __m256i m, V v) { _mm256_maskstore_ps(p, m, v); }
};

struct F64 {
  using T = double;
  using V = __m256d;
  static constexpr int kLanes = 4;
  static GF_INLINE V zero() { return _mm256_setzero_pd(); }
  static GF_INLINE V load(const T* p) { return _mm256_loadu_pd(p); }
  static GF_INLINE V load_aligned(const T* p) { return _mm256_load_pd(p); }
  static GF_INLINE V broadcast(const T* p) { return _mm256_broadcast_sd(p); }
  static GF_INLINE V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  static GF_INLINE V add(V a, V b) { return _mm256_add_pd(a, b); }
  static GF_INLINE void store(T* p, V v) { _mm256_storeu_pd(p, v); }
  static GF_INLINE __m256i mask(int n) {
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_setr_epi64x(0, 1, 2, 3));
  }
  static GF_INLINE V maskload(const T* p, __m256i m) { return _mm256_maskload_pd(p, m); }
  static GF_INLINE void maskstore(T* p, __m256i m, V v) { _mm256_maskstore_pd(p, m, v); }
};

constexpr int kMR = 6;  // rows of the tile; NR = 2 vectors = 16 floats or 8 doubles

// Writes the R x NR accumulators to c[0:m, 0:n] (adding what c holds when accumulate).
template <class X, int R>
GF_INLINE void write_tile(typename X::V (&acc)[R][2], typename X::T* c, int64_t ldc, int m, int n, bool accumulate) {
  constexpr int W = X::kLanes;
  if (m == R && n == 2 * W) {
    unroll<R>([&](auto r) {
      typename X::T* row = c + r * ldc;
      if (accumulate) {
        acc[r][0] = X::add(acc[r][0], X::load(row));
        acc[r][1] = X::add(acc[r][1], X::load(row + W));
      }
      X::store(row, acc[r][0]);
      X::store(row + W, acc[r][1]);
    });
    return;
  }
  const __m256i m0 = X::mask(n), m1 = X::mask(n - W);
  unroll<R>([&](auto r) {
    if (r >= m) return;
    typename X::T* row = c + r * ldc;
    if (accumulate) {
      acc[r][0] = X::add(acc[r][0], X::maskload(row, m0));
      acc[r][1] = X::add(acc[r][1], X::maskload(row + W, m1));
    }
    X::maskstore(row, m0, acc[r][0]);
    X::maskstore(row + W, m1, acc[r][1]);
  });
}

// Packed micro-kernel: a is an MR x kc panel (a[k*MR + r]), b a kc x NR panel (b[k*NR + j]).
//   c[0:m, 0:n] (+)= a[0:MR, 0:kc] · b[0:kc, 0:NR]
template <class X>
void packed_kernel(int64_t kc, const typename X::T* a, const typename X::T* b, typename X::T* c, int64_t ldc, int m,
                   int n, bool accumulate) {
  constexpr int W = X::kLanes, NR = 2 * W;
  typename X::V acc[kMR][2];
  unroll<kMR>([&](auto r) { acc[r][0] = acc[r][1] = X::zero(); });
  // The C tile is written once at the end; asking for it now hides the miss behind the k loop.
  for (int r = 0; r < m; ++r) {
    __builtin_prefetch(c + r * ldc);
    __builtin_prefetch(c + r * ldc + NR - 1);
  }
#pragma GCC unroll 4
  for (int64_t k = 0; k < kc; ++k) {
    const typename X::V b0 = X::load_aligned(b), b1 = X::load_aligned(b + W);
    unroll<kMR>([&](auto r) {
      const typename X::V ar = X::broadcast(a + r);
      acc[r][0] = X::fma(ar, b0, acc[r][0]);
      acc[r][1] = X::fma(ar, b1, acc[r][1]);
    });
    a += kMR;
    b += NR;
  }
  write_tile<X, kMR>(acc, c, ldc, m, n, accumulate);
}

// Unpacked micro-kernel for R valid rows: A read through its strides (one broadcast per element,
// so any layout works), B rows read in place; with kMasked only the first n columns of B exist.
template <class X, int R, bool kMasked>
void unpacked_kernel(int64_t kc, const typename X::T* a, int64_t rsa, int64_t csa, const typename X::T* b, int64_t rsb,
                     typename X::T* c, int64_t ldc, int n, bool accumulate) {
  constexpr int W = X::kLanes;
  typename X::V acc[R][2];
  unroll<R>([&](auto r) { acc[r][0] = acc[r][1] = X::zero(); });
  const __m256i m0 = X::mask(n), m1 = X::mask(n - W);
  const typename X::T* arow[R];
  unroll<R>([&](auto r) { arow[r] = a + r * rsa; });
#pragma GCC unroll 2
  for (int64_t k = 0; k < kc; ++k) {
    typename X::V b0, b1;
    if constexpr (kMasked) {
      b0 = X::maskload(b, m0);
      b1 = X::maskload(b + W, m1);
    } else {
      b0 = X::load(b);
      b1 = X::load(b + W);
    }
    unroll<R>([&](auto r) {
      const typename X::V ar = X::broadcast(arow[r] + k * csa);
      acc[r][0] = X::fma(ar, b0, acc[r][0]);
      acc[r][1] = X::fma(ar, b1, acc[r][1]);
    });
    b += rsb;
  }
  write_tile<X, R>(acc, c, ldc, R, n, accumulate);
}

template <class X, int R>
void unpacked_rows(int64_t kc, const typename X::T* a, int64_t rsa, int64_t csa, const typename X::T* b, int64_t rsb,
                   typename X::T* c, int64_t ldc, int n, bool accumulate) {
  if (n == 2 * X::kLanes)
    unpacked_kernel<X, R, false>(kc, a, rsa, csa, b, rsb, c, ldc, n, accumulate);
  else
    unpacked_kernel<X, R, true>(kc, a, rsa, csa, b, rsb, c, ldc, n, accumulate);
}

template <class X>
void unpacked_dispatch(int64_t kc, const typename X::T* a, int64_t rsa, int64_t csa, const typename X::T* b,
                       int64_t rsb, typename X::T* c, int64_t ldc, int m, int n, bool accumulate) {
  switch (m) {
    case 1:
      return unpacked_rows<X, 1>(kc, a, rsa, csa, b, rsb, c, ldc, n, accumulate);
    case 2:
      return unpacked_rows<X, 2>(kc, a, rsa, csa, b, rsb, c, ldc, n, accumulate);
    case 3:
      return unpacked_rows<X, 3>(kc, a, rsa, csa, b, rsb, c, ldc, n, accumulate);
    case 4:
      return unpacked_rows<X, 4>(kc, a, rsa, csa, b, rsb, c, ldc, n, accumulate);
    case 5:
      return unpacked_rows<X, 5>(kc, a, rsa, csa, b, rsb, c, ldc, n, accumulate);
    default:
      return unpacked_rows<X, 6>(kc, a, rsa, csa, b, rsb, c, ldc, n, accumulate);
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

// dst[k*6 + r] = a[r*rs + k]: 6 rows (+ 2 rows of zeros) transposed 8 k at a time; each store
// writes 8 floats, the last 2 overwritten by the next k's (or left as slack past the panel).
void pack_a_rows_f32(int64_t kc, const float* a, int64_t rs, float* dst) {
  int64_t k = 0;
  for (; k + 8 <= kc; k += 8) {
    __m256 r[8];
    for (int i = 0; i < kMR; ++i) r[i] = _mm256_loadu_ps(a + i * rs + k);
    r[6] = r[7] = _mm256_setzero_ps();
    transpose8(r);
    for (int i = 0; i < 8; ++i) _mm256_storeu_ps(dst + (k + i) * kMR, r[i]);
  }
  for (; k < kc; ++k)
    for (int i = 0; i < kMR; ++i) dst[k * kMR + i] = a[i * rs + k];
}

// dst[k*16 + j] = b[j*cs + k]: two 8 x 8 transposes per 8 k.
void pack_b_cols_f32(int64_t kc, const float* b, int64_t cs, float* dst) {
  int64_t k = 0;
  for (; k + 8 <= kc; k += 8)
    for (int h = 0; h < 2; ++h) {
      __m256 r[8];
      for (int j = 0; j < 8; ++j) r[j] = _mm256_loadu_ps(b + (h * 8 + j) * cs + k);
      transpose8(r);
      for (int i = 0; i < 8; ++i) _mm256_store_ps(dst + (k + i) * 16 + h * 8, r[i]);
    }
  for (; k < kc; ++k)
    for (int j = 0; j < 16; ++j) dst[k * 16 + j] = b[j * cs + k];
}

// dst[k*6 + r] = a[r*rs + k]: rows 0-3 by a 4 x 4 transpose, rows 4-5 interleaved in pairs.
void pack_a_rows_f64(int64_t kc, const double* a, int64_t rs, double* dst) {
  int64_t k = 0;
  for (; k + 4 <= kc; k += 4) {
    __m256d r[4];
    for (int i = 0; i < 4; ++i) r[i] = _mm256_loadu_pd(a + i * rs + k);
    transpose4(r);
    const __m256d x4 = _mm256_loadu_pd(a + 4 * rs + k), x5 = _mm256_loadu_pd(a + 5 * rs + k);
    const __m256d lo = _mm256_unpacklo_pd(x4, x5), hi = _mm256_unpackhi_pd(x4, x5);  // pairs for k 0,2 and 1,3
    const __m128d pairs[4] = {_mm256_castpd256_pd128(lo), _mm256_castpd256_pd128(hi), _mm256_extractf128_pd(lo, 1),
                              _mm256_extractf128_pd(hi, 1)};
    for (int i = 0; i < 4; ++i) {
      _mm256_storeu_pd(dst + (k + i) * kMR, r[i]);
      _mm_storeu_pd(dst + (k + i) * kMR + 4, pairs[i]);
    }
  }
  for (; k < kc; ++k)
    for (int i = 0; i < kMR; ++i) dst[k * kMR + i] = a[i * rs + k];
}

// dst[k*8 + j] = b[j*cs + k]: two 4 x 4 transposes per 4 k.
void pack_b_cols_f64(int64_t kc, const double* b, int64_t cs, double* dst) {
  int64_t k = 0;
  for (; k + 4 <= kc; k += 4)
    for (int h = 0; h < 2; ++h) {
      __m256d r[4];
      for (int j = 0; j < 4; ++j) r[j] = _mm256_loadu_pd(b + (h * 4 + j) * cs + k);
      transpose4(r);
      for (int i = 0; i < 4; ++i) _mm256_store_pd(dst + (k + i) * 8 + h * 4, r[i]);
    }
  for (; k < kc; ++k)
    for (int j = 0; j < 8; ++j) dst[k * 8 + j] = b[j * cs + k];
}

const MicroKernels<float> kAvx2Float{
    kMR, 16, packed_kernel<F32>, unpacked_dispatch<F32>, pack_a_rows_f32, pack_b_cols_f32};
const MicroKernels<double> kAvx2Double{
    kMR, 8, packed_kernel<F64>, unpacked_dispatch<F64>, pack_a_rows_f64, pack_b_cols_f64};

}  // namespace

template <>
const MicroKernels<float>* avx2_kernels<float>() {
  return &kAvx2Float;
}
template <>
const MicroKernels<double>* avx2_kernels<double>() {
  return &kAvx2Double;
}

}  // namespace gradformer::detail

#else  // built without the AVX2 kernels

namespace gradformer::detail {
template <>
const MicroKernels<float>* avx2_kernels<float>() {
  return nullptr;
}
template <>
const MicroKernels<double>* avx2_kernels<double>() {
  return nullptr;
}
}  // namespace gradformer::detail

#endif
