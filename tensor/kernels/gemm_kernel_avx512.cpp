// The AVX-512 micro-kernels: the kernels of gemm_kernel_simd.h with 512-bit vectors.
//
// Why 8 x 32 for float32 (8 x 16 for float64): AVX-512 has 32 zmm registers of 16 floats. A tile
// of 8 rows x 2 vectors needs 16 accumulators, 2 registers for the row of B and 1 for a broadcast
// element of A: 19 of 32. Per step of k: 2 loads of B, 8 broadcasts of A, 16 FMAs of 16 lanes.
// Against the AVX2 tile (6 x 16, 12 FMAs of 8 lanes) that is 2.7 times the arithmetic per step for
// 1.25 times the loads, and a quarter as many tiles for the same C: less loop and call overhead per
// flop, which is what small products (64 x 64 x 64 in attention) are made of. Eight rows also tile
// the usual sizes (64, 128, 512) without a ragged last tile.
//
// How much faster it is depends on the core. Some (Intel's server cores) have two 512-bit FMA
// units, twice the flops of AVX2. AMD's Zen 4 runs a 512-bit FMA as two 256-bit halves on the same
// two units, so its peak is the same as with AVX2, and the gain is only the lower overhead.
//
// Compiled with -mavx512f -mfma for this file only; used only when the CPU and the OS support
// AVX-512F (matmul.cpp), else the AVX2 kernels are.
#include "tensor/kernels/gemm.h"

#if defined(GRADFORMER_HAVE_AVX512)
#include "tensor/kernels/gemm_kernel_simd.h"

namespace gradformer::detail {
namespace {

// The vector operations the kernels need, for float (16 lanes) and double (8 lanes); masks are
// AVX-512's mask registers, one bit per lane.
struct F32 {
  using T = float;
  using V = __m512;
  using Mask = __mmask16;
  static constexpr int kLanes = 16;
  static GF_INLINE V zero() { return _mm512_setzero_ps(); }
  static GF_INLINE V load(const T* p) { return _mm512_loadu_ps(p); }
  static GF_INLINE V load_aligned(const T* p) { return _mm512_load_ps(p); }
  static GF_INLINE V broadcast(const T* p) { return _mm512_set1_ps(*p); }
  static GF_INLINE V fma(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static GF_INLINE V add(V a, V b) { return _mm512_add_ps(a, b); }
  static GF_INLINE void store(T* p, V v) { _mm512_storeu_ps(p, v); }
  static GF_INLINE Mask mask(int n) { return n <= 0 ? 0 : n >= kLanes ? 0xFFFF : static_cast<Mask>((1u << n) - 1); }
  static GF_INLINE V maskload(const T* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
  static GF_INLINE void maskstore(T* p, Mask m, V v) { _mm512_mask_storeu_ps(p, m, v); }
};

struct F64 {
  using T = double;
  using V = __m512d;
  using Mask = __mmask8;
  static constexpr int kLanes = 8;
  static GF_INLINE V zero() { return _mm512_setzero_pd(); }
  static GF_INLINE V load(const T* p) { return _mm512_loadu_pd(p); }
  static GF_INLINE V load_aligned(const T* p) { return _mm512_load_pd(p); }
  static GF_INLINE V broadcast(const T* p) { return _mm512_set1_pd(*p); }
  static GF_INLINE V fma(V a, V b, V c) { return _mm512_fmadd_pd(a, b, c); }
  static GF_INLINE V add(V a, V b) { return _mm512_add_pd(a, b); }
  static GF_INLINE void store(T* p, V v) { _mm512_storeu_pd(p, v); }
  static GF_INLINE Mask mask(int n) { return n <= 0 ? 0 : n >= kLanes ? 0xFF : static_cast<Mask>((1u << n) - 1); }
  static GF_INLINE V maskload(const T* p, Mask m) { return _mm512_maskz_loadu_pd(m, p); }
  static GF_INLINE void maskstore(T* p, Mask m, V v) { _mm512_mask_storeu_pd(p, m, v); }
};

constexpr int kMR = 8;  // rows of the tile; NR = 2 vectors = 32 floats or 16 doubles

const MicroKernels<float> kAvx512Float = kernel_set<F32, kMR>();
const MicroKernels<double> kAvx512Double = kernel_set<F64, kMR>();

}  // namespace

template <>
const MicroKernels<float>* avx512_kernels<float>() {
  return &kAvx512Float;
}
template <>
const MicroKernels<double>* avx512_kernels<double>() {
  return &kAvx512Double;
}

}  // namespace gradformer::detail

#else  // built without the AVX-512 kernels

namespace gradformer::detail {
template <>
const MicroKernels<float>* avx512_kernels<float>() {
  return nullptr;
}
template <>
const MicroKernels<double>* avx512_kernels<double>() {
  return nullptr;
}
}  // namespace gradformer::detail

#endif
