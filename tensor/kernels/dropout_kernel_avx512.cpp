// Compiled with -mavx512f -mavx512dq -mavx512vl for this file only; used only when the CPU runs all
// three (checked here).
//
// Eight 64-bit lanes hold two draws of each of the chunk's four streams: lane k is element i + k of
// the chunk, so stream k % 4, its draw t + k / 4 (the definition in tensor/random.cpp: element i
// draws from stream i % 4). A vector then moves on by two draws of every stream at once. AVX-512DQ
// multiplies 64-bit lanes in one instruction, and AVX-512 rotates 32-bit lanes by a count per lane:
// PCG32's step and its output permutation, each one instruction where AVX2 needs several.
#include "tensor/kernels/dropout_kernel.h"
#include "tensor/kernels/pcg32.h"

#if defined(GRADFORMER_HAVE_AVX512)
// GCC 12's AVX-512 intrinsics start from an undefined vector in their masked forms, which its
// -Wmaybe-uninitialized reports at -O3 (a false alarm inside the header: GCC bug 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop
#else
#include <immintrin.h>
#endif

namespace gradformer::detail {
namespace {

bool cpu_has_avx512() {
  static const bool ok =
      (__builtin_cpu_init(),
       __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"));
  return ok;
}

// s -> s M^J + c_J in every lane: J draws of every lane's stream at once (tensor/kernels/pcg32.h).
inline __m512i jump(__m512i state, __m512i multiplier, __m512i increment) {
  return _mm512_add_epi64(_mm512_mullo_epi64(state, multiplier), increment);
}

// PCG32's output for the eight states in `old` (Generator::next_u32 before its state moves on): the
// eight 32-bit draws, in lane order. The low 32 bits of each lane are the ones that count.
inline __m256i output(__m512i old) {
  const __m512i xorshifted = _mm512_srli_epi64(_mm512_xor_si512(_mm512_srli_epi64(old, 18), old), 27);
  const __m512i rotation = _mm512_srli_epi64(old, 59);  // < 32: the low 32-bit half of the lane
  return _mm512_cvtepi64_epi32(_mm512_rorv_epi32(xorshifted, rotation));
}

// Two draws of each stream per vector, kAhead vectors side by side (their multiplies overlap), each
// jumping 2 kAhead draws at a time.
constexpr int kAhead = 4;

// Calls emit(i, draws) for the 8-element groups i = 0, 8, 16, ... < count: draws[k] from stream k % 4.
template <class Emit>
void draw_groups(uint64_t states[4], const uint64_t increments[4], int64_t count, Emit emit) {
  const __m256i s4 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(states));
  const __m256i c4 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(increments));
  const __m512i c = _mm512_inserti64x4(_mm512_castsi256_si512(c4), c4, 1);  // lane k: stream k % 4's
  auto increment_of_jump = [&](uint64_t factor) {
    return _mm512_mullo_epi64(c, _mm512_set1_epi64(static_cast<int64_t>(factor)));
  };
  // lanes 0-3 the streams' next draws, lanes 4-7 the draws after them
  __m512i state = _mm512_inserti64x4(_mm512_castsi256_si512(s4), s4, 1);
  state = _mm512_mask_add_epi64(
      state, 0xF0, _mm512_mullo_epi64(state, _mm512_set1_epi64(static_cast<int64_t>(pcg32::kMultiplier))), c);
  const __m512i m2 = _mm512_set1_epi64(static_cast<int64_t>(pcg32::multiplier_of_jump(2)));
  const __m512i c2 = increment_of_jump(pcg32::increment_factor_of_jump(2));
  int64_t i = 0;
  if (count >= 8 * kAhead) {
    const __m512i m_ahead = _mm512_set1_epi64(static_cast<int64_t>(pcg32::multiplier_of_jump(2 * kAhead)));
    const __m512i c_ahead = increment_of_jump(pcg32::increment_factor_of_jump(2 * kAhead));
    __m512i chain[kAhead];
    chain[0] = state;
    for (int j = 1; j < kAhead; ++j) chain[j] = jump(chain[j - 1], m2, c2);
    for (; i + 8 * kAhead <= count; i += 8 * kAhead)
      for (int j = 0; j < kAhead; ++j) {
        emit(i + 8 * j, output(chain[j]));
        chain[j] = jump(chain[j], m_ahead, c_ahead);
      }
    state = chain[0];  // every draw so far taken: chain 0 holds the streams' next draws
  }
  for (; i < count; i += 8) {
    emit(i, output(state));
    state = jump(state, m2, c2);
  }
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(states), _mm512_castsi512_si256(state));
}

}  // namespace

bool dropout_avx512(uint64_t states[4], const uint64_t increments[4], int64_t count, uint32_t cut, float keep,
                    const float* in, float* out, float* mask) {
  if (!cpu_has_avx512()) return false;
  const __m256i cut8 = _mm256_set1_epi32(static_cast<int>(cut));
  const __m256 keep8 = _mm256_set1_ps(keep);
  draw_groups(states, increments, count, [&](int64_t i, __m256i draws) {
    const __m256 factor = _mm256_maskz_mov_ps(_mm256_cmpge_epu32_mask(draws, cut8), keep8);
    _mm256_storeu_ps(mask + i, factor);
    if (in) _mm256_storeu_ps(out + i, _mm256_mul_ps(_mm256_loadu_ps(in + i), factor));
  });
  return true;
}

bool dropout_avx512(uint64_t states[4], const uint64_t increments[4], int64_t count, uint32_t cut, double keep,
                    const double* in, double* out, double* mask) {
  if (!cpu_has_avx512()) return false;
  const __m256i cut8 = _mm256_set1_epi32(static_cast<int>(cut));
  const __m512d keep8 = _mm512_set1_pd(keep);
  draw_groups(states, increments, count, [&](int64_t i, __m256i draws) {
    const __m512d factor = _mm512_maskz_mov_pd(_mm256_cmpge_epu32_mask(draws, cut8), keep8);
    _mm512_storeu_pd(mask + i, factor);
    if (in) _mm512_storeu_pd(out + i, _mm512_mul_pd(_mm512_loadu_pd(in + i), factor));
  });
  return true;
}

}  // namespace gradformer::detail

#else

namespace gradformer::detail {
bool dropout_avx512(uint64_t*, const uint64_t*, int64_t, uint32_t, float, const float*, float*, float*) {
  return false;
}
bool dropout_avx512(uint64_t*, const uint64_t*, int64_t, uint32_t, double, const double*, double*, double*) {
  return false;
}
}  // namespace gradformer::detail

#endif
