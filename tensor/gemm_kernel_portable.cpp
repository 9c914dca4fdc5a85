// The portable micro-kernels: the same contract as the AVX2 ones (gemm.h), in plain C++.
// They build and are correct with any C++20 compiler on any CPU (Apple Silicon, older x86, ...).
// The tile is a fixed-size array and every loop over it has a compile-time trip count, so an
// optimising compiler keeps the tile in vector registers and vectorises the j loops with whatever
// SIMD the target has (SSE2 on any x86-64, NEON on ARM64): about a third of what the AVX2 kernels
// reach on the machine this was written on, many times the naive loop.
#include "tensor/gemm.h"

namespace gradformer::detail {
namespace {

// 4 x 8: 32 accumulators, 8 SSE or NEON registers of 4 floats (16 for doubles, still within the
// 16 of SSE2 and the 32 of NEON once the row of B and the broadcast element are added).
constexpr int kMR = 4, kNR = 8;

template <class T>
void write_tile(const T (&acc)[kMR][kNR], T* c, int64_t ldc, int m, int n, bool accumulate) {
  for (int r = 0; r < m; ++r)
    for (int j = 0; j < n; ++j) c[r * ldc + j] = accumulate ? c[r * ldc + j] + acc[r][j] : acc[r][j];
}

// c[0:m, 0:n] (+)= a[0:MR, 0:kc] · b[0:kc, 0:NR]   (a[k*MR + r], b[k*NR + j], both zero-padded)
template <class T>
void packed_kernel(int64_t kc, const T* a, const T* b, T* c, int64_t ldc, int m, int n, bool accumulate) {
  T acc[kMR][kNR] = {};
  for (int64_t k = 0; k < kc; ++k, a += kMR, b += kNR)
    for (int r = 0; r < kMR; ++r)
      for (int j = 0; j < kNR; ++j) acc[r][j] += a[r] * b[j];
  write_tile(acc, c, ldc, m, n, accumulate);
}

// c[0:m, 0:n] (+)= A(0:m, 0:kc) · B(0:kc, 0:n), A(r, k) = a[r*rsa + k*csa], B(k, j) = b[k*rsb + j]
template <class T>
void unpacked_kernel(int64_t kc, const T* a, int64_t rsa, int64_t csa, const T* b, int64_t rsb, T* c, int64_t ldc,
                     int m, int n, bool accumulate) {
  T acc[kMR][kNR] = {};
  if (m == kMR && n == kNR) {  // the common full tile: fixed trip counts, vectorised
    for (int64_t k = 0; k < kc; ++k, b += rsb)
      for (int r = 0; r < kMR; ++r) {
        const T ar = a[r * rsa + k * csa];
        for (int j = 0; j < kNR; ++j) acc[r][j] += ar * b[j];
      }
  } else {  // an edge tile: only the rows and columns that exist are read
    for (int64_t k = 0; k < kc; ++k, b += rsb)
      for (int r = 0; r < m; ++r) {
        const T ar = a[r * rsa + k * csa];
        for (int j = 0; j < n; ++j) acc[r][j] += ar * b[j];
      }
  }
  write_tile(acc, c, ldc, m, n, accumulate);
}

const MicroKernels<float> kPortableFloat{kMR, kNR, packed_kernel<float>, unpacked_kernel<float>, nullptr, nullptr};
const MicroKernels<double> kPortableDouble{kMR, kNR, packed_kernel<double>, unpacked_kernel<double>, nullptr, nullptr};

}  // namespace

template <> const MicroKernels<float>& portable_kernels<float>() { return kPortableFloat; }
template <> const MicroKernels<double>& portable_kernels<double>() { return kPortableDouble; }

}  // namespace gradformer::detail
