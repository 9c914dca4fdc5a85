// Loops built twice: once for any CPU of the architecture (on x86-64 that means SSE2, four floats a
// vector) and once for AVX2 (eight floats a vector), chosen at run time.
//
// A kernel writes its loop once, as a GRADFORMER_ALWAYS_INLINE body, and calls it from two functions:
// one marked GRADFORMER_TARGET_AVX2, one not; run_built_twice calls the first when avx2_loops() is true,
// else the second. AVX2 has no fused multiply-add
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

/// Sets avx2_loops() for as long as it lives and puts back what it was when it goes, however the
/// scope ends (a test or a benchmark comparing the two builds):  { Avx2LoopsFor portable(false); ... }
/// ValueError, changing nothing, when turning on what this machine cannot run.
class Avx2LoopsFor {
 public:
  explicit Avx2LoopsFor(bool on) : was_(avx2_loops()) { set_avx2_loops(on); }
  ~Avx2LoopsFor() { set_avx2_loops(was_); }
  Avx2LoopsFor(const Avx2LoopsFor&) = delete;
  Avx2LoopsFor& operator=(const Avx2LoopsFor&) = delete;

 private:
  bool was_;
};

/// Runs a loop built twice: avx2(args...) when avx2_loops(), else portable(args...). On other
/// architectures the mark is empty and the two builds are the same code.
template <class Fn, class... Args>
void run_built_twice(Fn* avx2, Fn* portable, Args&&... args) {
  (avx2_loops() ? avx2 : portable)(static_cast<Args&&>(args)...);
}

}  // namespace gradformer
