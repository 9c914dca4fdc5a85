// PCG32's multiplier (O'Neill, 2014), and the jump of a stream by several draws at once. Shared by
// Generator (tensor/random.h) and the vector kernels that reproduce its draws
// (tensor/dropout_kernel_*.cpp), which include no header with code in it: they are compiled for other
// instruction sets, and an inline function compiled there could end up in every caller.
#pragma once

#include <cstdint>

namespace gradformer::pcg32 {

inline constexpr uint64_t kMultiplier = 6364136223846793005ULL;

// A stream's state moves s -> s M + c with each draw, so J draws at once move it
//   s -> s M^J + c (M^(J-1) + ... + M + 1)      (mod 2^64)
consteval uint64_t multiplier_of_jump(int draws) {  // M^J
  uint64_t m = 1;
  for (int i = 0; i < draws; ++i) m *= kMultiplier;
  return m;
}
consteval uint64_t increment_factor_of_jump(int draws) {  // M^(J-1) + ... + M + 1
  uint64_t sum = 0, m = 1;
  for (int i = 0; i < draws; ++i) sum += m, m *= kMultiplier;
  return sum;
}

}  // namespace gradformer::pcg32
