#include "catch.h"
#include "tensor/all.h"

using namespace gradformer;

TEST_CASE("Shape stores sizes inline and prints like a Python list") {
  Shape s{2, 3, 4};
  CHECK(s.rank() == 3);
  CHECK(s.numel() == 24);
  CHECK(to_string(s) == "[2, 3, 4]");
  CHECK(to_string(Shape{}) == "[]");
  CHECK(Shape{}.numel() == 1);  // a scalar has one element
  CHECK(Shape{3, 0}.numel() == 0);
  s.insert(1, 7);
  CHECK(s == Shape{2, 7, 3, 4});
  s.erase(0);
  CHECK(s == Shape{7, 3, 4});
}

TEST_CASE("Shape refuses more than kMaxRank dimensions") {
  Shape s;
  for (int i = 0; i < kMaxRank; ++i) s.push_back(1);
  CHECK_THROWS_MSG(s.push_back(1), ShapeError, "more than 8 dimensions");
}

TEST_CASE("contiguous strides are row-major, in elements") {
  CHECK(contiguous_strides(Shape{2, 3, 4}) == Shape{12, 4, 1});
  CHECK(contiguous_strides(Shape{5}) == Shape{1});
  CHECK(contiguous_strides(Shape{}) == Shape{});
}

TEST_CASE("broadcasting aligns from the right and stretches size-1 dimensions") {
  CHECK(broadcast_shapes({2, 3}, {3}, "t") == Shape{2, 3});
  CHECK(broadcast_shapes({2, 1}, {1, 3}, "t") == Shape{2, 3});
  CHECK(broadcast_shapes({4, 1, 5}, {3, 1}, "t") == Shape{4, 3, 5});
  CHECK(broadcast_shapes({}, {2, 2}, "t") == Shape{2, 2});
  CHECK(broadcast_shapes({0, 1}, {1, 5}, "t") == Shape{0, 5});
}

TEST_CASE("shapes that do not broadcast are a ShapeError naming the op and both shapes") {
  CHECK_THROWS_MSG(broadcast_shapes({2, 3}, {4}, "add"), ShapeError, "add: shapes [2, 3] and [4] do not broadcast");
  CHECK_THROWS_MSG(broadcast_shapes({2, 3}, {3, 3}, "mul"), ShapeError, "mul: shapes [2, 3] and [3, 3]");
  CHECK_THROWS_AS(broadcast_shapes({0}, {2}, "t"), ShapeError);  // 0 is not 1: no stretching
}

TEST_CASE("negative dimensions count from the end, and out of range is an IndexError") {
  CHECK(normalize_dim(-1, 3, "t") == 2);
  CHECK(normalize_dim(0, 3, "t") == 0);
  CHECK_THROWS_MSG(normalize_dim(3, 3, "sum"), IndexError, "sum: dimension 3 is out of range for a tensor of rank 3");
  CHECK_THROWS_AS(normalize_dim(-4, 3, "t"), IndexError);
}

TEST_CASE("broadcasts_to asks whether one shape stretches into exactly another") {
  CHECK(broadcasts_to({3}, {2, 3}));
  CHECK(broadcasts_to({1, 3}, {4, 2, 3}));
  CHECK(broadcasts_to({}, {5}));
  CHECK(!broadcasts_to({2, 3}, {3}));  // broadcasting never removes dimensions
  CHECK(!broadcasts_to({2}, {1}));     // nor shrinks them
  CHECK(!broadcasts_to({4}, {2, 3}));
}

TEST_CASE("element counts that do not fit in 64 bits are errors, not wrapped numbers") {
  CHECK(Shape{3037000499, 3037000499}.numel() == 9223372030926249001);  // just under 2^63
  CHECK_THROWS_MSG(Shape({4611686018427387904, 4}).numel(), ShapeError,
                   "shape [4611686018427387904, 4] has more elements than a 64-bit count holds");
  CHECK(Shape{4611686018427387904, 0}.numel() == 0);
  CHECK_THROWS_MSG(zeros({4611686018427387904, 4}), ShapeError, "more elements than a 64-bit count holds");
  // the count fits, the bytes do not: 2^61 float64 elements are 2^64 bytes
  CHECK_THROWS_MSG(zeros({2305843009213693952}, DType::Float64), ShapeError,
                   "needs more bytes than a 64-bit count holds");
  // a shape with no elements whose strides would overflow
  CHECK_THROWS_MSG(zeros({0, 4611686018427387904, 4}), ShapeError, "its strides do not fit in 64 bits");
  // a reshape may not pretend a wrapped count matches
  CHECK_THROWS_AS(zeros({0}).reshape({4611686018427387904, 4, 4}), ShapeError);
}

// AddressSanitizer's operator new reports an impossible size and stops the program instead of
// throwing std::bad_alloc, so this case runs in the normal build only.
#if !defined(__SANITIZE_ADDRESS__)
TEST_CASE("an allocation the machine cannot give is a MemoryError naming the size") {
  // 2^60 bytes: far past any machine's memory, yet a count that fits
  CHECK_THROWS_MSG(
      Tensor::empty({int64_t{1} << 58}, DType::Float32), MemoryError,
      "empty: cannot allocate 1152921504606846976 bytes for a float32 tensor of shape [288230376151711744]");
}
#endif
