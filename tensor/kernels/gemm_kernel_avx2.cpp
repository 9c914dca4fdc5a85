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
// The kernels themselves are written once for any vector width in gemm_kernel_simd.h; this file
// gives them 256-bit vectors. It is compiled with -mavx2 -mfma (CMake sets that for this file only),
// and its kernels are only called after the CPU has been checked (matmul.cpp), so the library still
// runs on CPUs without AVX2.
#include "tensor/kernels/gemm.h"

#if defined(GRADFORMER_HAVE_AVX2)
#include "tensor/kernels/gemm_kernel_simd.h"

namespace gradformer::detail {
namespace {

// The vector operations the kernels need, for float (8 lanes) and double (4 lanes).
struct F32 {
  using T = float;
  using V = __m256;
  using Mask = __m256i;  // AVX2 has no mask registers: a lane is on when its 32 bits are all ones
  static constexpr int kLanes = 8;
  static GF_INLINE V zero() { return _mm256_setzero_ps(); }
  static GF_INLINE V load(const T* p) { return _mm256_loadu_ps(p); }
  static GF_INLINE V load_aligned(const T* p) { return _mm256_load_ps(p); }
  static GF_INLINE V broadcast(const T* p) { return _mm256_broadcast_ss(p); }
  static GF_INLINE V fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static GF_INLINE V add(V a, V b) { return _mm256_add_ps(a, b); }
  static GF_INLINE void store(T* p, V v) { _mm256_storeu_ps(p, v); }
  static GF_INLINE Mask mask(int n) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  static GF_INLINE V maskload(const T* p, Mask m) { return _mm256_maskload_ps(p, m); }
  static GF_INLINE void maskstore(T* p, Mask m, V v) { _mm256_maskstore_ps(p, m, v); }
};

struct F64 {
  using T = double;
  using V = __m256d;
  using Mask = __m256i;
  static constexpr int kLanes = 4;
  static GF_INLINE V zero() { return _mm256_setzero_pd(); }
  static GF_INLINE V load(const T* p) { return _mm256_loadu_pd(p); }
  static GF_INLINE V load_aligned(const T* p) { return _mm256_load_pd(p); }
  static GF_INLINE V broadcast(const T* p) { return _mm256_broadcast_sd(p); }
  static GF_INLINE V fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  static GF_INLINE V add(V a, V b) { return _mm256_add_pd(a, b); }
  static GF_INLINE void store(T* p, V v) { _mm256_storeu_pd(p, v); }
  static GF_INLINE Mask mask(int n) {
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(n), _mm256_setr_epi64x(0, 1, 2, 3));
  }
  static GF_INLINE V maskload(const T* p, Mask m) { return _mm256_maskload_pd(p, m); }
  static GF_INLINE void maskstore(T* p, Mask m, V v) { _mm256_maskstore_pd(p, m, v); }
};

constexpr int kMR = 6;  // rows of the tile; NR = 2 vectors = 16 floats or 8 doubles

const MicroKernels<float> kAvx2Float = kernel_set<F32, kMR>();
const MicroKernels<double> kAvx2Double = kernel_set<F64, kMR>();

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
