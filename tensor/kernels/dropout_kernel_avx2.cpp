// Compiled with -mavx2 for this file only; used only when the CPU runs AVX2 (checked here).
#include "tensor/kernels/dropout_kernel.h"
#include "tensor/kernels/pcg32.h"
#include "tensor/kernels/vector_loops.h"

#if defined(GRADFORMER_HAVE_AVX2)
#include <immintrin.h>

namespace gradformer::detail {
namespace {

using pcg32::kMultiplier;

// a * m mod 2^64 in each 64-bit lane. AVX2 multiplies 32 x 32 -> 64 bits only, so with
// a = ah 2^32 + al and m = mh 2^32 + ml:  a m = al ml + ((ah ml + al mh) << 32)  (mod 2^64).
inline __m256i times(__m256i a, uint64_t m) {
  const __m256i ml = _mm256_set1_epi64x(static_cast<int64_t>(m & 0xFFFFFFFFu));
  const __m256i mh = _mm256_set1_epi64x(static_cast<int64_t>(m >> 32));
  const __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(a, 32), ml), _mm256_mul_epu32(a, mh));
  return _mm256_add_epi64(_mm256_mul_epu32(a, ml), _mm256_slli_epi64(cross, 32));
}

// PCG32's output for the four states in `old` (Generator::next_u32 before its state moves on): the
// four 32-bit draws. Every step works in the low 32 bits of each 64-bit lane.
inline __m128i output(__m256i old) {
  const __m256i xorshifted = _mm256_srli_epi64(_mm256_xor_si256(_mm256_srli_epi64(old, 18), old), 27);
  const __m256i rotation = _mm256_srli_epi64(old, 59);
  const __m256i left = _mm256_and_si256(_mm256_sub_epi64(_mm256_set1_epi64x(32), rotation), _mm256_set1_epi64x(31));
  const __m256i rotated = _mm256_or_si256(_mm256_srlv_epi32(xorshifted, rotation), _mm256_sllv_epi32(xorshifted, left));
  // the low 32 bits of the four lanes, in order
  return _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(rotated, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7)));
}

// All ones where u >= cut (unsigned), else zero.
inline __m128i at_least(__m128i u, __m128i cut) { return _mm_cmpeq_epi32(_mm_max_epu32(u, cut), u); }

// Each draw waits on the previous one's multiply (about eight cycles here); kAhead chains, draws
// t, t+1, ..., t+kAhead-1 of every stream, each jumping kAhead draws at a time (tensor/kernels/pcg32.h), give
// the CPU independent work to overlap, with the same numbers in the same places.
constexpr int kAhead = 4;

// Calls emit(i, draws) for the 4-element groups i = 0, 4, 8, ... < count: draws[k] from stream k.
template <class Emit>
void draw_groups(uint64_t states[4], const uint64_t increments[4], int64_t count, Emit emit) {
  __m256i state = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(states));
  const __m256i increment = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(increments));
  const __m256i increment_ahead = times(increment, pcg32::increment_factor_of_jump(kAhead));
  int64_t i = 0;
  if (count >= 4 * kAhead) {
    __m256i chain[kAhead];
    chain[0] = state;
    for (int j = 1; j < kAhead; ++j) chain[j] = _mm256_add_epi64(times(chain[j - 1], kMultiplier), increment);
    for (; i + 4 * kAhead <= count; i += 4 * kAhead)
      for (int j = 0; j < kAhead; ++j) {
        emit(i + 4 * j, output(chain[j]));
        chain[j] = _mm256_add_epi64(times(chain[j], pcg32::multiplier_of_jump(kAhead)), increment_ahead);
      }
    state = chain[0];  // every draw so far taken: chain 0 is the streams' next state
  }
  for (; i < count; i += 4) {
    emit(i, output(state));
    state = _mm256_add_epi64(times(state, kMultiplier), increment);
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(states), state);
}

}  // namespace

bool dropout_avx2(uint64_t states[4], const uint64_t increments[4], int64_t count, uint32_t cut, float keep,
                  const float* in, float* out, float* mask) {
  if (!avx2_loops_available()) return false;  // this CPU (and OS) has no AVX2
  const __m128i cut4 = _mm_set1_epi32(static_cast<int>(cut));
  const __m128 keep4 = _mm_set1_ps(keep);
  draw_groups(states, increments, count, [&](int64_t i, __m128i draws) {
    const __m128 factor = _mm_and_ps(_mm_castsi128_ps(at_least(draws, cut4)), keep4);
    _mm_storeu_ps(mask + i, factor);
    if (in) _mm_storeu_ps(out + i, _mm_mul_ps(_mm_loadu_ps(in + i), factor));
  });
  return true;
}

bool dropout_avx2(uint64_t states[4], const uint64_t increments[4], int64_t count, uint32_t cut, double keep,
                  const double* in, double* out, double* mask) {
  if (!avx2_loops_available()) return false;  // this CPU (and OS) has no AVX2
  const __m128i cut4 = _mm_set1_epi32(static_cast<int>(cut));
  const __m256d keep4 = _mm256_set1_pd(keep);
  draw_groups(states, increments, count, [&](int64_t i, __m128i draws) {
    const __m256i all_ones = _mm256_cvtepi32_epi64(at_least(draws, cut4));  // 32 -> 64 bits
    const __m256d factor = _mm256_and_pd(_mm256_castsi256_pd(all_ones), keep4);
    _mm256_storeu_pd(mask + i, factor);
    if (in) _mm256_storeu_pd(out + i, _mm256_mul_pd(_mm256_loadu_pd(in + i), factor));
  });
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
