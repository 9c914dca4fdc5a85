// Shared by the autograd tests.
#pragma once

#include <cstdint>
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

// Masks built by hand, for attention (and the model tests), so the tests do not depend on the
// batching code or the model's own masks.
/// ids [B, S] -> [B, 1, S] bool, true where id != pad.
inline gradformer::Tensor pad_mask(const gradformer::Tensor& ids, int64_t pad = 0) {
  return gradformer::ne(ids, gradformer::full({}, static_cast<double>(pad), gradformer::DType::Int64)).unsqueeze(1);
}

/// [T, T] bool, true where j <= i.
inline gradformer::Tensor lower_triangle(int64_t t) {
  using namespace gradformer;
  return le(arange(t, DType::Int64).unsqueeze(0), arange(t, DType::Int64).unsqueeze(1));
}

/// ids [B, T] -> [B, T, T]: padding AND causal.
inline gradformer::Tensor tgt_mask(const gradformer::Tensor& ids, int64_t pad = 0) {
  return gradformer::logical_and(pad_mask(ids, pad), lower_triangle(ids.size(1)).unsqueeze(0));
}

inline gradformer::Tensor ids(const std::vector<int64_t>& v, int64_t rows) {
  return gradformer::from_vector(v, {rows, static_cast<int64_t>(v.size()) / rows});
}

}  // namespace test
