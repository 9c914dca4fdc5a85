// The masks (transformer/model/masks.h), against grids written out by hand.
#include "catch.h"
#include "tensor/all.h"
#include "transformer/model/masks.h"

using namespace gradformer;

namespace {
std::vector<int64_t> bools(const Tensor& t) { return t.to(DType::Int64).to_vector<int64_t>(); }
}  // namespace

TEST_CASE("causal mask is lower triangular true") {
  const Tensor mask = causal_mask(3);
  CHECK(mask.shape() == Shape{3, 3});
  CHECK(mask.dtype() == DType::Bool);
  CHECK(bools(mask) == std::vector<int64_t>{1, 0, 0,  //
                                            1, 1, 0,  //
                                            1, 1, 1});
  CHECK_THROWS_MSG(causal_mask(0), ValueError, "causal_mask: length must be positive, got 0");
}

TEST_CASE("padding mask is true on non-pad keys") {
  const Tensor ids = from_vector<int64_t>({5, 6, 0, 7, 0, 0}, {2, 3});
  const Tensor mask = padding_mask(ids, 0);
  CHECK(mask.shape() == Shape{2, 1, 3});
  CHECK(bools(mask) == std::vector<int64_t>{1, 1, 0, 1, 0, 0});
  CHECK(bools(padding_mask(ids, 5)) == std::vector<int64_t>{0, 1, 1, 1, 1, 1});  // any id can be the pad
  CHECK_THROWS_MSG(padding_mask(ids.to(DType::Float32), 0), DTypeError, "padding_mask: ids must be int64, got float32");
  CHECK_THROWS_MSG(padding_mask(ids.reshape({6}), 0), ShapeError, "padding_mask: ids must be [B, S], got [6]");
}

TEST_CASE("target mask is padding AND causal, and broadcasts against the scores") {
  // Two decoder inputs: <s> 8 9 <pad> and <s> 8 9 10.
  const Tensor tgt_in = from_vector<int64_t>({1, 8, 9, 0, 1, 8, 9, 10}, {2, 4});
  const Tensor mask = target_mask(tgt_in, 0);
  CHECK(mask.shape() == Shape{2, 4, 4});
  CHECK(bools(mask) == std::vector<int64_t>{1, 0, 0, 0,  // sentence 0: key 3 is padding
                                            1, 1, 0, 0,  //
                                            1, 1, 1, 0,  //
                                            1, 1, 1, 0,  //
                                            1, 0, 0, 0,  // sentence 1: plain causal
                                            1, 1, 0, 0,  //
                                            1, 1, 1, 0,  //
                                            1, 1, 1, 1});
  // The masks broadcast against attention scores [B, H, Tq, Tk] after unsqueeze(1).
  const Tensor scores = zeros({2, 8, 4, 4});
  CHECK(masked_fill(scores, logical_not(mask.unsqueeze(1)), -1e9).shape() == Shape{2, 8, 4, 4});
  CHECK(masked_fill(scores, logical_not(padding_mask(tgt_in, 0).unsqueeze(1)), -1e9).shape() == Shape{2, 8, 4, 4});
}
