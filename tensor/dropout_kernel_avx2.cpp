// Compiled with -mavx2 for this file only; used only when the CPU runs AVX2 (checked here).
#include "tensor/dropout_kernel.h"

#if defined(GRADFORMER_HAVE_AVX2)
#include <immintrin.h>

namespace gradformer::detail {
namespace {

constexpr uint64_t kMultiplier = 6364136223846793005ULL;  // PCG32's, as in Generator::next_u32

// a * kMultiplier mod 2^64 in each 64-bit lane. AVX2 multiplies 32 x 32 -> 64 bits only, so with
// a = ah 2^32 + al and m = mh 2^32 + ml:  a m = al ml + ((ah ml + al mh) << 32)  (mod 2^64).
inline __m256i times_multiplier(__m256i a) {
  const __m256i ml = _mm256_set1_epi64x(static_cast<int64_t>(kMultiplier & 0xFFFFFFFFu));
  const __m256i mh = _mm256_set1_epi64x(static_cast<int64_t>(kMultiplier >> 32));
  const __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), ml), _mm256_mul_epu32(a, mh));
  return _mm256_add_epi64(_mm256_mul_epu32(a, ml), _mm256_slli_epi64(cross, 32));
}

// One draw from each of the four streams, as Generator::next_u32: advance the state, permute the old
// one. Returns the four 32-bit draws; every step works in the low 32 bits of each 64-bit lane.
inline __m128i next_u32x4(__m256i& state, __m256i increment) {
  const __m256i old = state;
  state = _mm256_add_epi64(times_multiplier(old), increment);
  const __m256i xorshifted = _mm256_srli_epi64(_mm256_xor_si256(_mm256_srli_epi64(old, 18), old), 27);
  const __m256i rotation = _mm256_srli_epi64(old, 59);
  const __m256i left = _mm256_and_si256(_mm256_sub_epi64(_mm256_set1_epi64x(32), rotation), _mm256_set1_epi64x(31));
  const __m256i rotated = _mm256_or_si256(_mm256_srlv_epi32(xorshifted, rotation), _mm256_sllv_epi32(xorshifted, left));
  // the low 32 bits of the four lanes, in order
  return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(rotated, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7)));
}

// All ones where u >= cut (unsigned), else zero.
inline __m128i at_least(__m128i u, __m128i cut) { return _mm_cmpeq_epi32(_mm_max_epu32(u, cut), u); }

bool cpu_has_avx2() {
  static const bool ok = (__builtin_cpu_init(), __builtin_cpu_supports("avx2"));
  return ok;
}

}  // namespace

bool dropout_avx2(uint64_t states[4], const uint64_t increments[4], int64_t count, uint32_t cut, float keep,
                  const float* in, float* out, float* mask) {
  if (!cpu_has_avx2()) return false;
  __m256i state = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(states));
  const __m256i increment = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(increments));
  const __m128i cut4 = _mm_set1_epi32(static_cast<int>(cut));
  const __m128 keep4 = _mm_set1_ps(keep);
  for (int64_t i = 0; i < count; i += 4) {
    const __m128 factor = _mm_and_ps(_mm_castsi128_ps(at_least(next_u32x4(state, increment), cut4)), keep4);
    _mm_storeu_ps(mask + i, factor);
    if (in) _mm_storeu_ps(out + i, _mm_mul_ps(_mm_loadu_ps(in + i), factor));
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(states), state);
  return true;
}

bool dropout_avx2(uint64_t states[4], const uint64_t increments[4], int64_t count, uint32_t cut, double keep,
                  const double* in, double* out, double* mask) {
  if (!cpu_has_avx2()) return false;
  __m256i state = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(states));
  const __m256i increment = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(increments));
  const __m128i cut4 = _mm_set1_epi32(static_cast<int>(cut));
  const __m256d keep4 = _mm256_set1_pd(keep);
  for (int64_t i = 0; i < count; i += 4) {
    const __m256i all_ones = _mm256_cvtepi32_epi64(at_least(next_u32x4(state, increment), cut4));  // 32 -> 64 bits
    const __m256d factor = _mm256_and_pd(_mm256_castsi256_pd(all_ones), keep4);
    _mm256_storeu_pd(mask + i, factor);
    if (in) _mm256_storeu_pd(out + i, _mm256_mul_pd(_mm256_loadu_pd(in + i), factor));
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(states), state);
  return true;
}

}  // namespace gradformer::detail

#else

namespace gradformer::detail {
bool dropout_avx2(uint64_t*, const uint64_t*, int64_t, uint32_t, float, const float*, float*, float*) { return false; }
bool dropout_avx2(uint64_t*, const uint64_t*, int64_t, uint32_t, double, const double*, double*, double*) {
  return false;
}
}  // namespace gradformer::detail

#endif
