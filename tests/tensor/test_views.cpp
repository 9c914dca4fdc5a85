#include "catch.h"
#include "tensor/all.h"

using namespace gradformer;

// m = [[0, 1, 2, 3],
//      [4, 5, 6, 7],
//      [8, 9, 10, 11]]
static Tensor m34() { return arange(12).reshape({3, 4}); }

TEST_CASE("transpose swaps shape and strides and shares storage") {
  const Tensor m = m34();
  const Tensor t = m.transpose(0, 1);
  CHECK(t.shape() == Shape{4, 3});
  CHECK(t.strides() == Shape{1, 4});
  CHECK(t.shares_storage_with(m));
  CHECK(!t.is_contiguous());
  CHECK(t.at({3, 1}) == 7.0);  // t[j][i] == m[i][j]
  CHECK(t.to_vector<float>() == std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
}

TEST_CASE("permute reorders dimensions, and duplicates or wrong counts are errors") {
  const Tensor x = arange(24).reshape({2, 3, 4});
  const Tensor p = x.permute({2, 0, 1});
  CHECK(p.shape() == Shape{4, 2, 3});
  CHECK(p.strides() == Shape{1, 12, 4});
  CHECK(p.at({3, 1, 2}) == x.at({1, 2, 3}));
  CHECK_THROWS_MSG(x.permute({0, 1}), ShapeError, "permute: 2 dimensions given for a tensor of rank 3");
  CHECK_THROWS_MSG(x.permute({0, 1, 1}), IndexError, "permute: dimension 1 appears twice");
}

TEST_CASE("slice follows Python's start:end:step with clamping and negative indices") {
  const Tensor m = m34();
  const Tensor cols = m.slice(1, 1, 3);  // m[:, 1:3]
  CHECK(cols.shape() == Shape{3, 2});
  CHECK(cols.offset() == 1);
  CHECK(cols.to_vector<float>() == std::vector<float>{1, 2, 5, 6, 9, 10});
  CHECK(m.slice(1, 0, 4, 2).to_vector<float>() == std::vector<float>{0, 2, 4, 6, 8, 10});  // m[:, ::2]
  CHECK(m.slice(0, -1, 100).to_vector<float>() == std::vector<float>{8, 9, 10, 11});       // m[-1:]
  CHECK(m.slice(0, 2, 1).numel() == 0);                                                    // empty
  CHECK(m.narrow(0, 1, 2).to_vector<float>() == std::vector<float>{4, 5, 6, 7, 8, 9, 10, 11});
  CHECK(m.select(1, -1).to_vector<float>() == std::vector<float>{3, 7, 11});
  CHECK_THROWS_MSG(m.slice(0, 0, 2, 0), ValueError, "slice: step must be positive, got 0");
  CHECK_THROWS_MSG(m.narrow(1, 3, 2), IndexError, "narrow: start 3 and length 2 do not fit in dimension 1 of size 4");
  CHECK_THROWS_MSG(m.select(0, 3), IndexError, "select: index 3 is out of range for dimension 0 of size 3");
}

TEST_CASE("views share storage: writing through one is seen by the other") {
  Tensor m = m34();
  Tensor row = m.select(0, 1);
  row.fill_(-1.0);
  CHECK(m.to_vector<float>() == std::vector<float>{0, 1, 2, 3, -1, -1, -1, -1, 8, 9, 10, 11});
}

TEST_CASE("view re-splits contiguous chunks and refuses what strides cannot express") {
  const Tensor m = m34();
  CHECK(m.view({2, 6}).to_vector<float>() == m.to_vector<float>());
  CHECK(m.view({-1}).shape() == Shape{12});
  CHECK(m.view({2, -1, 3}).shape() == Shape{2, 2, 3});
  // A column slice [3, 2] with strides [4, 1] can be viewed as [3, 2, 1] or [3, 1, 2] but not flattened.
  const Tensor cols = m.slice(1, 0, 2);
  CHECK(cols.view({3, 1, 2}).at({2, 0, 1}) == 9.0);
  CHECK(cols.view({3, 1, 2}).shares_storage_with(m));
  CHECK_THROWS_MSG(cols.view({6}), ShapeError, "view: cannot view a tensor of shape [3, 2] and strides [4, 1] as [6]");
  // A transpose's chunks: [4, 3] with strides [1, 4] can split its dims but not merge them.
  const Tensor t = m.transpose(0, 1);
  CHECK(t.view({2, 2, 3}).at({1, 0, 2}) == 10.0);  // t[2][2] == m[2][2]
  CHECK_THROWS_AS(t.view({12}), ShapeError);
  CHECK_THROWS_MSG(m.view({5, -1}), ShapeError, "shape [5, -1] is invalid for 12 elements");
  CHECK_THROWS_MSG(m.view({-1, -1}), ShapeError, "only one dimension can be -1");
  CHECK_THROWS_MSG(m.view({7, 2}), ShapeError, "view: shape [7, 2] is invalid for 12 elements");
}

TEST_CASE("reshape views when it can and copies when it must") {
  const Tensor m = m34();
  CHECK(m.reshape({4, 3}).shares_storage_with(m));
  const Tensor flat = m.transpose(0, 1).reshape({12});
  CHECK(!flat.shares_storage_with(m));
  CHECK(flat.to_vector<float>() == std::vector<float>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
}

TEST_CASE("squeeze and unsqueeze add and remove size-1 dimensions") {
  const Tensor m = m34();
  const Tensor u = m.unsqueeze(1);
  CHECK(u.shape() == Shape{3, 1, 4});
  CHECK(u.squeeze(1).shape() == Shape{3, 4});
  CHECK(m.unsqueeze(-1).shape() == Shape{3, 4, 1});
  CHECK(m.unsqueeze(0).shape() == Shape{1, 3, 4});
  CHECK(m.unsqueeze(2).is_contiguous());
  CHECK_THROWS_MSG(m.squeeze(0), ShapeError, "squeeze: dimension 0 has size 3, not 1, in shape [3, 4]");
  CHECK_THROWS_AS(m.unsqueeze(3), IndexError);
}

TEST_CASE("expand broadcasts with stride 0, without copying") {
  const Tensor v = tensor({1, 2, 3}, {3});
  const Tensor e = v.expand({2, 3});
  CHECK(e.strides() == Shape{0, 1});
  CHECK(e.shares_storage_with(v));
  CHECK(e.to_vector<float>() == std::vector<float>{1, 2, 3, 1, 2, 3});
  const Tensor c = tensor({1, 2}, {2, 1}).expand({2, 3});
  CHECK(c.to_vector<float>() == std::vector<float>{1, 1, 1, 2, 2, 2});
  CHECK_THROWS_MSG(v.expand({2, 4}), ShapeError, "expand: cannot expand shape [3] to [2, 4]");
  CHECK_THROWS_AS(tensor({1, 2}, {2, 1}).expand({3}), ShapeError);
}

TEST_CASE("contiguous copies only when needed") {
  const Tensor m = m34();
  CHECK(m.contiguous().shares_storage_with(m));
  const Tensor c = m.transpose(0, 1).contiguous();
  CHECK(!c.shares_storage_with(m));
  CHECK(c.is_contiguous());
  CHECK(c.strides() == Shape{3, 1});
  CHECK(c.at({3, 2}) == 11.0);
  // Size-1 dimensions do not break contiguity whatever their stride.
  CHECK(m.slice(0, 1, 2).is_contiguous());
}
