// A seedable random generator with the same sequence on every machine: PCG32 (O'Neill, 2014),
// whose integer output is defined bit for bit, unlike std::normal_distribution's, which each
// standard library implements its own way. Uniform numbers come from the integer bits alone;
// normal ones add one log, sqrt and cos (Box-Muller), which every IEEE libm rounds alike to
// within an ulp or so.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "tensor/kernels/pcg32.h"
#include "tensor/tensor.h"

namespace gradformer {

class Generator {
 public:
  /// Seeded as PCG32's reference pcg32_srandom(seed, stream): generators with different streams
  /// give independent sequences for the same seed.
  explicit Generator(uint64_t seed = 0, uint64_t stream = 0);
  uint32_t next_u32() {
    const uint64_t old = state_;
    state_ = old * pcg32::kMultiplier + increment_;  // a 64-bit linear congruential step...
    const auto xorshifted = static_cast<uint32_t>(((old >> 18u) ^ old) >> 27u);
    const auto rotation = static_cast<uint32_t>(old >> 59u);
    return (xorshifted >> rotation) | (xorshifted << ((32u - rotation) & 31u));  // ...output permuted
  }
  double uniform();  // in [0, 1), 53 random bits
  double normal();   // mean 0, standard deviation 1
  /// Uniform integer in [lo, hi) without modulo bias. ValueError if lo >= hi.
  int64_t integer(int64_t lo, int64_t hi);

  /// The whole state, to save in a checkpoint and restore for an exact resume.
  std::array<uint64_t, 2> state() const { return {state_, increment_}; }
  void set_state(const std::array<uint64_t, 2>& s) { state_ = s[0], increment_ = s[1]; }

 private:
  uint64_t state_ = 0, increment_ = 0;
};

/// A generator's whole state as text ("<state> <increment>", for a checkpoint's metadata) and back.
/// restore_generator: CheckpointError naming `source` unless the text is exactly two integers.
std::string generator_state_text(const Generator& gen);
void restore_generator(Generator& gen, const std::string& text, const std::string& source);

Tensor uniform(const Shape& shape, double lo, double hi, Generator& gen, DType dtype = DType::Float32);
Tensor randn(const Shape& shape, Generator& gen, DType dtype = DType::Float32);  // N(0, 1)
Tensor normal(const Shape& shape, double mean, double std, Generator& gen, DType dtype = DType::Float32);
Tensor randint(const Shape& shape, int64_t lo, int64_t hi, Generator& gen);  // int64 in [lo, hi)

/// Inverted dropout of x in one pass: each element kept and scaled by 1/(1-p) with probability
/// 1 - p, else 0 (all 0 for p = 1), and which were kept as a bool mask (for the backward pass: one
/// byte an element, where the factors themselves would take four or eight).
/// Filled in parallel and still reproducible: one number drawn from `gen` seeds four PCG streams
/// per fixed-size chunk of elements, so the mask depends on the seed alone, never on the thread
/// count. Each element compares one 32-bit draw with p * 2^32. ValueError unless 0 <= p <= 1;
/// DTypeError unless x is float32 or float64.
struct Dropped {
  Tensor output;  // x * factor, factor = 1/(1-p) where kept, else 0
  Tensor kept;    // bool, x's shape
};
Dropped apply_dropout(const Tensor& x, double p, Generator& gen);

/// g times dropout's factors: g * 1/(1-p) where `kept`, g * 0 elsewhere (the same products, bit for
/// bit, as multiplying by the factors). g float32 or float64, contiguous or not; kept bool of g's
/// shape (ShapeError otherwise).
Tensor times_dropout_factors(const Tensor& g, const Tensor& kept, double p);

}  // namespace gradformer
