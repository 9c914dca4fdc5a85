// The switch between the two builds of the loops (tensor/kernels/vector_loops.h), and Avx2LoopsFor, which
// sets it for a scope. The builds' bits are compared where the loops are: test_exp_kernel.cpp,
// tests/autograd/test_fused.cpp.
#include <stdexcept>

#include "catch.h"
#include "tensor/all.h"
#include "tensor/kernels/vector_loops.h"

using namespace gradformer;

TEST_CASE("Avx2LoopsFor sets the switch for its scope and puts it back however the scope ends") {
  const bool original = avx2_loops();
  {
    const Avx2LoopsFor portable(false);
    CHECK_FALSE(avx2_loops());
  }
  CHECK(avx2_loops() == original);
  try {
    const Avx2LoopsFor portable(false);
    throw std::runtime_error("a failing check inside the scope");
  } catch (const std::runtime_error&) {
  }
  CHECK(avx2_loops() == original);
  if (avx2_loops_available()) {
    const Avx2LoopsFor portable(false);
    {
      const Avx2LoopsFor wide(true);  // scopes nest: each puts back what it found
      CHECK(avx2_loops());
    }
    CHECK_FALSE(avx2_loops());
  } else {
    CHECK_FALSE(original);
    CHECK_THROWS_MSG(set_avx2_loops(true), ValueError, "set_avx2_loops: this build or CPU cannot run the AVX2 loops");
    CHECK_THROWS_MSG(Avx2LoopsFor(true), ValueError, "set_avx2_loops: this build or CPU cannot run the AVX2 loops");
    CHECK_FALSE(avx2_loops());
  }
  CHECK(avx2_loops() == original);
}
