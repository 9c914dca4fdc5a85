#include "tensor/kernels/exp_kernel.h"

#include <cmath>
#include <cstring>
#include <type_traits>

#include "tensor/kernels/vector_loops.h"

// GCC and Clang warn that a function taking or returning a 256-bit vector without AVX has another
// calling convention than with it. Every function here that does is inlined into its one caller
// (same_bits below too, where a call to std::bit_cast was not, in an unoptimised build), so no call
// crosses from one build to the other.
#if defined(__GNUC__) || defined(__clang__)
#pragma GCC diagnostic ignored "-Wpsabi"
#endif

namespace gradformer {
namespace {

// exp(x) in the four operations of float arithmetic, in three steps:
//
//   1. range reduction   x = k ln2 + r,  k = round(x / ln2) an integer,  |r| <= ln2 / 2
//   2. a polynomial      exp(r) ~ 1 + r + r^2 (c2 + c3 r + ... + c7 r^5)
//   3. the power of two  exp(x) = exp(r) 2^k, 2^k built from its bits
//
// Step 1 rounds x / ln2 by adding 1.5 * 2^23: at that size a float's last bit is worth 1, so the sum
// is rounded to an integer and k sits in the low bits of its mantissa. r = x - k ln2 must not lose
// the digits of x that k ln2 cancels, so ln2 is split in two (Cody and Waite): a high part with
// few enough bits that k * high is exact (0.693359375 = 355 / 512), then the small rest.
// Step 2's coefficients are Cephes's expf (a minimax fit on [-ln2/2, ln2/2], close to 1/n!); Horner's
// rule evaluates it. Step 3 multiplies by 2^(k/2) and 2^(k - k/2), two powers that are always normal
// floats, where 2^k alone is not one for k = 128 (exp(88.7) is still a float): the first product is
// exact, the second rounds once, and results too large overflow to inf by themselves.
//
// Results under the smallest normal float (x < -87.34) are 0, not subnormal numbers: a CPU computes a
// subnormal, or a product that underflows, through a slow path, several times the cost of the whole
// function, and a causal mask's -inf scores are half of the decoder's. The lanes that are decided
// anyway (those, and NaN) compute exp(0) meanwhile, which no slow path touches.
//
// Written once, for a float or a vector of floats (F, with I the integers of the same width), so the
// portable build and the AVX2 build run the same operations in the same order on every element. No
// fused multiply-add is used, so the bits do not depend on the CPU.
template <class To, class From>
GRADFORMER_ALWAYS_INLINE To same_bits(const From& from) {  // std::bit_cast, but always inlined
  static_assert(sizeof(To) == sizeof(From));
  To to;
  std::memcpy(&to, &from, sizeof to);
  return to;
}

template <class Mask, class F>
GRADFORMER_ALWAYS_INLINE F select(const Mask& mask, const F& a, const F& b) {  // a where mask, else b
  if constexpr (std::is_arithmetic_v<Mask>)
    return mask ? a : b;
  else  // a vector comparison's lanes are all ones or all zeros
    return same_bits<F>((same_bits<Mask>(a) & mask) | (same_bits<Mask>(b) & ~mask));
}

template <class F, class I>
GRADFORMER_ALWAYS_INLINE F exp_lanes(const F& x) {
  constexpr float kMax = 89.0f;          // exp(89) overflows a float
  constexpr float kMin = -87.33654475f;  // log of the smallest normal float, 2^-126
  const auto low = x < kMin, nan = x != x;
  F clamped = select(x > kMax, F{} + kMax, x);
  clamped = select(low | nan, F{}, clamped);

  // 1. k = round(x / ln2) (the rounding trick), r = x - k ln2 (ln2 in two parts)
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23
  const F shifted = clamped * 1.44269504088896341f + kRound;
  const F k = shifted - kRound;
  const F r = (clamped - k * 0.693359375f) - k * -2.12194440e-4f;

  // 2. exp(r) by Horner's rule
  F p = F{} + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;

  // 3. times 2^k as 2^half 2^(k - half): a float 2^e has the bits (e + 127) << 23
  const I k_int = same_bits<I>(shifted) - same_bits<I>(F{} + kRound);  // k, from the low bits
  const I half = k_int >> 1, rest = k_int - half;
  const F y = p * same_bits<F>((half + 127) << 23) * same_bits<F>((rest + 127) << 23);
  return select(nan, x, select(low, F{}, y));  // NaN in, NaN out
}

// A vector register's worth of floats at a time: 4 in the portable build (SSE2), 8 in the AVX2 build.
// (A vector of 8 in the portable build would be split into halves by the compiler, though not every
// operation: some went one element at a time.)
#if defined(__GNUC__) || defined(__clang__)
using Floats4 = float __attribute__((vector_size(16)));
using Ints4 = int32_t __attribute__((vector_size(16)));
using Floats8 = float __attribute__((vector_size(32)));
using Ints8 = int32_t __attribute__((vector_size(32)));
#else  // another compiler: one element at a time
using Floats4 = float;
using Ints4 = int32_t;
using Floats8 = float;
using Ints8 = int32_t;
#endif

// Whole vectors, then the last few elements: as the last whole vector of x, loaded before anything
// is written (y may be x), its results stored over the end of y again. Rows shorter than a vector
// (attention's, over a few positions) go one element at a time, by the same operations on floats.
template <class Floats, class Ints>
GRADFORMER_ALWAYS_INLINE void exp_shifted_body(const float* x, float shift, float* y, int64_t n) {
  constexpr int64_t kStep = sizeof(Floats) / sizeof(float);
  if (n < kStep) {
    for (int64_t j = 0; j < n; ++j) y[j] = exp_lanes<float, int32_t>(x[j] - shift);
    return;
  }
  Floats last, v;
  std::memcpy(&last, x + n - kStep, sizeof last);
  for (int64_t j = 0; j + kStep <= n; j += kStep) {
    std::memcpy(&v, x + j, sizeof v);
    v = exp_lanes<Floats, Ints>(v - shift);
    std::memcpy(y + j, &v, sizeof v);
  }
  if (n % kStep == 0) return;
  last = exp_lanes<Floats, Ints>(last - shift);
  std::memcpy(y + n - kStep, &last, sizeof last);
}

void exp_shifted_portable(const float* x, float shift, float* y, int64_t n) {
  exp_shifted_body<Floats4, Ints4>(x, shift, y, n);
}
GRADFORMER_TARGET_AVX2 void exp_shifted_avx2(const float* x, float shift, float* y, int64_t n) {
  exp_shifted_body<Floats8, Ints8>(x, shift, y, n);
}

}  // namespace

void exp_shifted(const float* x, float shift, float* y, int64_t n) {
  run_built_twice(exp_shifted_avx2, exp_shifted_portable, x, shift, y, n);
}

void exp_shifted(const double* x, double shift, double* y, int64_t n) {
  for (int64_t j = 0; j < n; ++j) y[j] = std::exp(x[j] - shift);
}

}  // namespace gradformer
