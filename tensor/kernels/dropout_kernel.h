// Dropout's factors several at a time: tensor/random.cpp's loop (the definition: element i of a chunk
// draws from the chunk's PCG32 stream i % 4) with the four streams in the 64-bit lanes of one vector
// register: four lanes with AVX2, eight (two draws of each stream) with AVX-512. The same integer
// arithmetic as Generator::next_u32, so the same bits.
#pragma once

#include <cstdint>

namespace gradformer::detail {

/// For i < count (a multiple of 4): u_i = the next draw of stream i % 4 (states and increments as
/// Generator::state() gives them; states advanced in place), factor_i = keep if u_i >= cut else 0,
/// mask[i] = factor_i and, when `in` is not null, out[i] = in[i] * factor_i.
/// Returns false, doing nothing, when the build or the CPU has no AVX2.
bool dropout_avx2(uint64_t states[4], const uint64_t increments[4], int64_t count, uint32_t cut, float keep,
                  const float* in, float* out, float* mask);
bool dropout_avx2(uint64_t states[4], const uint64_t increments[4], int64_t count, uint32_t cut, double keep,
                  const double* in, double* out, double* mask);

/// The same with AVX-512 (F, DQ and VL), for a count that is a multiple of 8. Returns false, doing
/// nothing, when the build or the CPU has no AVX-512.
bool dropout_avx512(uint64_t states[4], const uint64_t increments[4], int64_t count, uint32_t cut, float keep,
                    const float* in, float* out, float* mask);
bool dropout_avx512(uint64_t states[4], const uint64_t increments[4], int64_t count, uint32_t cut, double keep,
                    const double* in, double* out, double* mask);

}  // namespace gradformer::detail
