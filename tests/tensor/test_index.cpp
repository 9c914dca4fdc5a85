#include "catch.h"
#include "tensor/all.h"

using namespace gradformer;

static Tensor ids(std::vector<int64_t> v, const Shape& shape) { return from_vector(v, shape); }

TEST_CASE("index_select picks rows: an embedding lookup") {
  const Tensor table = arange(12).reshape({4, 3});  // 4 tokens, dimension 3
  const Tensor out = index_select(table, 0, ids({2, 0, 2, 3}, {2, 2}));
  CHECK(out.shape() == Shape{2, 2, 3});
  CHECK(out.to_vector<float>() == std::vector<float>{6, 7, 8, 0, 1, 2, 6, 7, 8, 9, 10, 11});
  const Tensor cols = index_select(table, 1, ids({2, -3}, {2}));  // negative counts from the end
  CHECK(cols.to_vector<float>() == std::vector<float>{2, 0, 5, 3, 8, 6, 11, 9});
  CHECK(index_select(table.transpose(0, 1), 0, ids({1}, {1})).to_vector<float>() == std::vector<float>{1, 4, 7, 10});
}

TEST_CASE("index_add_ is index_select's adjoint: repeated rows accumulate") {
  Tensor grad_table = zeros({4, 2});
  index_add_(grad_table, 0, ids({1, 3, 1}, {3}), tensor({1, 2, 10, 20, 100, 200}, {3, 2}));
  CHECK(grad_table.to_vector<float>() == std::vector<float>{0, 0, 101, 202, 0, 0, 10, 20});
  CHECK_THROWS_MSG(index_add_(grad_table, 0, ids({1}, {1}), zeros({1, 3})), ShapeError,
                   "index_add_: src has shape [1, 3], expected [1, 2]");
}

TEST_CASE("gather picks one element per row: the target's log-probability") {
  const Tensor logp = tensor({-1, -2, -3, -4, -5, -6}, {2, 3});
  const Tensor target = ids({2, 0}, {2, 1});
  CHECK(gather(logp, 1, target).to_vector<float>() == std::vector<float>{-3, -4});
  CHECK(gather(logp, 0, ids({1, 0, 1}, {1, 3})).to_vector<float>() == std::vector<float>{-4, -2, -6});
  CHECK(gather(logp.transpose(0, 1), 0, ids({2, 0}, {1, 2})).to_vector<float>() == std::vector<float>{-3, -4});
}

TEST_CASE("scatter_add_ is gather's adjoint") {
  Tensor g = zeros({2, 3});
  scatter_add_(g, 1, ids({2, 2, 0, 1}, {2, 2}), tensor({1, 2, 3, 4}, {2, 2}));
  CHECK(g.to_vector<float>() == std::vector<float>{0, 0, 3, 3, 4, 0});
}

TEST_CASE("concat and stack join along an existing or a new dimension") {
  const Tensor a = arange(6).reshape({2, 3});
  const Tensor b = full({1, 3}, -1);
  CHECK(concat({a, b}, 0).to_vector<float>() == std::vector<float>{0, 1, 2, 3, 4, 5, -1, -1, -1});
  CHECK(concat({a, a}, 1).shape() == Shape{2, 6});
  CHECK(concat({a, a}, -1).to_vector<float>() == std::vector<float>{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5});
  const Tensor s = stack({a, a * 2.0}, 1);
  CHECK(s.shape() == Shape{2, 2, 3});
  CHECK(s.to_vector<float>() == std::vector<float>{0, 1, 2, 0, 2, 4, 3, 4, 5, 6, 8, 10});
  CHECK(stack({a, a}, -1).shape() == Shape{2, 3, 2});
}

TEST_CASE("indexing errors say which index, dimension, shape or dtype is wrong") {
  const Tensor table = zeros({4, 3});
  CHECK_THROWS_MSG(index_select(table, 0, ids({4}, {1})), IndexError,
                   "index_select: index 4 is out of range for dimension 0 of size 4");
  CHECK_THROWS_MSG(index_select(table, 0, zeros({1})), DTypeError, "index_select: index must be int64, got float32");
  CHECK_THROWS_MSG(gather(table, 1, ids({0}, {1})), ShapeError, "gather: index has rank 1 but the tensor has rank 2");
  CHECK_THROWS_MSG(gather(table, 1, ids({0, 0, 0, 0, 0}, {5, 1})), ShapeError, "exceeds tensor shape [4, 3]");
  CHECK_THROWS_MSG(gather(table, 1, ids({3}, {1, 1})), IndexError, "gather: index 3 is out of range for dimension 1");
  CHECK_THROWS_MSG(concat({}, 0), ValueError, "concat: no tensors given");
  CHECK_THROWS_MSG(concat({table, zeros({4, 2})}, 0), ShapeError, "concat: tensor 1 has shape [4, 2]");
  CHECK_THROWS_MSG(concat({table, zeros({4, 3}, DType::Float64)}, 0), DTypeError, "concat: tensor 1 is float64");
  CHECK_THROWS_MSG(stack({table, zeros({3, 4})}, 0), ShapeError,
                   "stack: tensor 1 has shape [3, 4], tensor 0 has [4, 3]");
}
