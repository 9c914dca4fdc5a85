// Shared by the autograd tests.
#pragma once

#include <vector>

#include "autograd/all.h"
#include "catch.h"

namespace test {

/// REQUIRE-style gradcheck with the report in the failure message.
#define CHECK_GRADCHECK(f, ...)                                                           \
  do {                                                                                    \
    const gradformer::GradcheckResult gc_result_ = gradformer::gradcheck(f, __VA_ARGS__); \
    INFO(gc_result_.report);                                                              \
    CHECK(gc_result_.ok);                                                                 \
  } while (0)

inline gradformer::Tensor rnd(const gradformer::Shape& shape, uint64_t seed, double lo = -1, double hi = 1) {
  gradformer::Generator gen(seed);
  return gradformer::uniform(shape, lo, hi, gen, gradformer::DType::Float64);
}

inline std::vector<double> values(const gradformer::Tensor& t) { return t.to_vector<double>(); }

}  // namespace test
