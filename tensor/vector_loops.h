// Loops built twice: once for any CPU of the architecture (on x86-64 that means SSE2, four floats a
// vector) and once for AVX2 (eight floats a vector), chosen at run time.
//
// A kernel marks a function GRADFORMER_TARGET_AVX2 and calls it when avx2_loops() is true, else a
// twin compiled from the same always-inline body without the mark. AVX2 has no fused multiply-add
// (that is the separate FMA extension, which this leaves off), so the compiler cannot contract
// a * b + c into one rounding: the wider build does the same operations in the same order, rounded
// the same way, and gives the same bits (tests compare the two builds). AVX-512 would not: its
// instruction set includes fused multiply-adds, and the compiler then contracts.
#pragma once

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define GRADFORMER_HAS_AVX2_LOOPS 1
#define GRADFORMER_TARGET_AVX2 __attribute__((target("avx2")))
#else
#define GRADFORMER_HAS_AVX2_LOOPS 0
#define GRADFORMER_TARGET_AVX2
#endif

// Forces a body into each of its two callers, so each is compiled for its own target.
#if defined(__GNUC__) || defined(__clang__)
#define GRADFORMER_ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define GRADFORMER_ALWAYS_INLINE inline
#endif

namespace gradformer {

/// Whether this build and this CPU (and OS) can run the AVX2 builds of the loops.
bool avx2_loops_available();
/// Whether the loops built twice take their AVX2 build: by default when available.
bool avx2_loops();
/// Turns the AVX2 builds on or off (tests compare the two); ValueError when turning on what
/// avx2_loops_available() says this machine cannot run.
void set_avx2_loops(bool on);

}  // namespace gradformer
