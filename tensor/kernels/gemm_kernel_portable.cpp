// The portable micro-kernels: the same contract as the AVX2 ones (gemm.h), for every CPU and any
// C++20 compiler (Apple Silicon, older x86, ...). With GCC or Clang the tile is written with their
// vector extensions (16-byte vectors: SSE2 on any x86-64, NEON on ARM64), which fixes how the loops
// are vectorised: left to itself, the compiler's vectoriser tends to vectorise across the rows of
// the tile and spend its time shuffling. With other compilers, plain loops over the same tile.
// On the machine this was written on it reaches about a third of the AVX2 kernel's speed (half the
// vector width and no FMA), many times the naive loop.
#include <cstring>

#include "tensor/kernels/gemm.h"

namespace gradformer::detail {
namespace {

// MR x NR = 4 x (2 vectors): 8 accumulator registers, 2 for the row of B, 1 for the element of A;
// that fits the 16 registers of SSE2 (NEON has 32).
constexpr int kMR = 4;

#if defined(__GNUC__) || defined(__clang__)

template <class T>
struct Vec {
  typedef T type __attribute__((vector_size(16)));
  static constexpr int kLanes = 16 / sizeof(T);
  static type load(const T* p) {
    type v;
    std::memcpy(&v, p, sizeof v);  // an unaligned vector load
    return v;
  }
  static void store(T* p, type v) { std::memcpy(p, &v, sizeof v); }
};

template <class T>
constexpr int kNR = 2 * Vec<T>::kLanes;  // 8 floats, 4 doubles

template <class T>
using Tile = typename Vec<T>::type[kMR][2];

// c[0:m, 0:n] (+)= the tile; the full tile with vector stores, an edge element by element.
template <class T>
void write_tile(Tile<T>& acc, T* c, int64_t ldc, int m, int n, bool accumulate) {
  constexpr int W = Vec<T>::kLanes;
  if (m == kMR && n == kNR<T>) {
    for (int r = 0; r < kMR; ++r)
      for (int h = 0; h < 2; ++h) {
        T* p = c + r * ldc + h * W;
        Vec<T>::store(p, accumulate ? acc[r][h] + Vec<T>::load(p) : acc[r][h]);
      }
    return;
  }
  for (int r = 0; r < m; ++r)
    for (int j = 0; j < n; ++j) {
      const T v = acc[r][j / W][j % W];
      c[r * ldc + j] = accumulate ? c[r * ldc + j] + v : v;
    }
}

// c[0:m, 0:n] (+)= a[0:MR, 0:kc] · b[0:kc, 0:NR]   (a[k*MR + r], b[k*NR + j], both zero-padded)
template <class T>
void packed_kernel(int64_t kc, const T* a, const T* b, T* c, int64_t ldc, int m, int n, bool accumulate) {
  constexpr int W = Vec<T>::kLanes;
  Tile<T> acc = {};
  for (int64_t k = 0; k < kc; ++k, a += kMR, b += kNR<T>) {
    const typename Vec<T>::type b0 = Vec<T>::load(b), b1 = Vec<T>::load(b + W);
    for (int r = 0; r < kMR; ++r) {
      acc[r][0] += a[r] * b0;
      acc[r][1] += a[r] * b1;
    }
  }
  write_tile<T>(acc, c, ldc, m, n, accumulate);
}

// c[0:m, 0:n] (+)= A(0:m, 0:kc) · B(0:kc, 0:n), A(r, k) = a[r*rsa + k*csa], B(k, j) = b[k*rsb + j].
// kFull: m == MR and n == NR. Otherwise only the rows and columns that exist are read: B's row goes
// through a zero-padded copy, missing rows of A count as zeros.
template <class T, bool kFull>
void unpacked_tile(int64_t kc, const T* a, int64_t rsa, int64_t csa, const T* b, int64_t rsb, T* c, int64_t ldc, int m,
                   int n, bool accumulate) {
  constexpr int W = Vec<T>::kLanes;
  Tile<T> acc = {};
  const T* arow[kMR];
  for (int r = 0; r < kMR; ++r) arow[r] = a + (kFull || r < m ? r : 0) * rsa;
  for (int64_t k = 0; k < kc; ++k, b += rsb) {
    T row[kNR<T>] = {};
    const T* bk = b;
    if (!kFull) {
      std::memcpy(row, b, sizeof(T) * static_cast<size_t>(n));
      bk = row;
    }
    const typename Vec<T>::type b0 = Vec<T>::load(bk), b1 = Vec<T>::load(bk + W);
    for (int r = 0; r < kMR; ++r) {
      const T ar = kFull || r < m ? arow[r][k * csa] : T(0);
      acc[r][0] += ar * b0;
      acc[r][1] += ar * b1;
    }
  }
  write_tile<T>(acc, c, ldc, m, n, accumulate);
}

template <class T>
void unpacked_kernel(int64_t kc, const T* a, int64_t rsa, int64_t csa, const T* b, int64_t rsb, T* c, int64_t ldc,
                     int m, int n, bool accumulate) {
  if (m == kMR && n == kNR<T>)
    unpacked_tile<T, true>(kc, a, rsa, csa, b, rsb, c, ldc, m, n, accumulate);
  else
    unpacked_tile<T, false>(kc, a, rsa, csa, b, rsb, c, ldc, m, n, accumulate);
}

#else  // no vector extensions: the same tile in plain loops

template <class T>
constexpr int kNR = 8;

template <class T>
void write_tile(const T (&acc)[kMR][8], T* c, int64_t ldc, int m, int n, bool accumulate) {
  for (int r = 0; r < m; ++r)
    for (int j = 0; j < n; ++j) c[r * ldc + j] = accumulate ? c[r * ldc + j] + acc[r][j] : acc[r][j];
}

template <class T>
void packed_kernel(int64_t kc, const T* a, const T* b, T* c, int64_t ldc, int m, int n, bool accumulate) {
  T acc[kMR][8] = {};
  for (int64_t k = 0; k < kc; ++k, a += kMR, b += 8)
    for (int r = 0; r < kMR; ++r)
      for (int j = 0; j < 8; ++j) acc[r][j] += a[r] * b[j];
  write_tile(acc, c, ldc, m, n, accumulate);
}

template <class T>
void unpacked_kernel(int64_t kc, const T* a, int64_t rsa, int64_t csa, const T* b, int64_t rsb, T* c, int64_t ldc,
                     int m, int n, bool accumulate) {
  T acc[kMR][8] = {};
  for (int64_t k = 0; k < kc; ++k, b += rsb)
    for (int r = 0; r < m; ++r) {
      const T ar = a[r * rsa + k * csa];
      for (int j = 0; j < n; ++j) acc[r][j] += ar * b[j];
    }
  write_tile(acc, c, ldc, m, n, accumulate);
}

#endif

// c[r * ldc] = sum_k a[r * lda + k] * b[k] for r < m, in the partial sums of one 64-byte span and
// the tree the SIMD kernels use (gemm.h); without fused multiply-adds, so the last bits may differ
// from theirs.
template <class T>
void dot_kernel(int64_t kc, const T* a, int64_t lda, int m, const T* b, T* c, int64_t ldc) {
  constexpr int kSpan = 64 / sizeof(T);
  for (int r = 0; r < m; ++r) {
    T part[kSpan] = {};
    const T* x = a + r * lda;
    for (int64_t k0 = 0; k0 < kc; k0 += kSpan)
      for (int64_t l = 0; l < kSpan && k0 + l < kc; ++l) part[l] += x[k0 + l] * b[k0 + l];
    for (int width = kSpan / 2; width >= 1; width /= 2)
      for (int l = 0; l < width; ++l) part[l] += part[l + width];
    c[r * ldc] = part[0];
  }
}

const MicroKernels<float> kPortableFloat{kMR,     kNR<float>, packed_kernel<float>, unpacked_kernel<float>,
                                         nullptr, nullptr,    dot_kernel<float>};
const MicroKernels<double> kPortableDouble{kMR,     kNR<double>, packed_kernel<double>, unpacked_kernel<double>,
                                           nullptr, nullptr,     dot_kernel<double>};

}  // namespace

template <>
const MicroKernels<float>& portable_kernels<float>() {
  return kPortableFloat;
}
template <>
const MicroKernels<double>& portable_kernels<double>() {
  return kPortableDouble;
}

}  // namespace gradformer::detail
