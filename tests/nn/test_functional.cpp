// linear(x, weight, bias): the one implementation of y = x W^T + b behind Linear, the attention
// projections and the output projection.
#include <vector>

#include "autograd/helpers.h"
#include "nn/all.h"

using namespace gradformer;
using test::rnd;
using test::values;

// y = x W^T + b, x's rows as one matrix, by the library's triple loop (matmul_reference): independent
// of matmul.
static std::vector<double> reference_linear(const Tensor& x, const Tensor& w, const Tensor& b) {
  const Tensor y = matmul_reference(x.reshape({-1, w.size(1)}), w.transpose(0, 1));
  return values(b.defined() ? y + b : y);
}

TEST_CASE("linear computes x W^T + b over the last dimension, with and without a bias") {
  // A hand-worked case: x [2, 2], W [3, 2], b [3].
  const Variable x(tensor({1, 1, 0, 2}, {2, 2})), w(tensor({1, 2, 3, 4, 5, 6}, {3, 2})), b(tensor({10, 20, 30}, {3}));
  // [1, 1] -> [1+2, 3+4, 5+6] + b;  [0, 2] -> [4, 8, 12] + b
  CHECK(values(linear(x, w, b).value()) == std::vector<double>{13, 27, 41, 14, 28, 42});
  CHECK(values(linear(x, w).value()) == std::vector<double>{3, 7, 11, 4, 8, 12});

  // Rank 3: the leading dimensions are kept, every row as the loops compute it.
  const Tensor x3 = rnd({2, 5, 4}, 1), w3 = rnd({3, 4}, 2), b3 = rnd({3}, 3);
  const Variable y3 = linear(Variable(x3), Variable(w3), Variable(b3));
  CHECK(y3.shape() == Shape{2, 5, 3});
  const std::vector<double> got = values(y3.value()), want = reference_linear(x3, w3, b3);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).epsilon(1e-12));
  const std::vector<double> no_bias = values(linear(Variable(x3), Variable(w3)).value()),
                            want_no_bias = reference_linear(x3, w3, Tensor());
  REQUIRE(no_bias.size() == want_no_bias.size());
  for (size_t i = 0; i < no_bias.size(); ++i) CHECK(no_bias[i] == Approx(want_no_bias[i]).epsilon(1e-12));
}

TEST_CASE("gradcheck: linear with respect to input, weight and bias, rank 2 and 3, float64") {
  for (const Shape& shape : {Shape{4, 3}, Shape{2, 5, 3}}) {
    INFO("input " << shape);
    Variable x(rnd(shape, 10), true), w(rnd({2, 3}, 11), true), b(rnd({2}, 12), true);
    CHECK_GRADCHECK([&] { return linear(x, w, b); }, std::vector<Variable>{x, w, b});
    CHECK_GRADCHECK([&] { return linear(x, w); }, std::vector<Variable>{x, w});
  }
}

TEST_CASE("linear's weight gradient comes back dense in the weight's own layout, equal to G^T x") {
  // y = x W^T: dL/dW = G^T x, [out, in] like W. The engine keeps it as W's gradient as it arrives,
  // so it must be dense; its values against the triple loop in double.
  const Tensor x = rnd({6, 5}, 21), w = rnd({4, 5}, 22), g = rnd({6, 4}, 23);
  Variable xv(x, true), wv(w, true);
  linear(xv, wv).backward(g);
  REQUIRE(wv.grad().is_contiguous());
  const std::vector<double> got = values(wv.grad()), want = values(matmul_reference(g.transpose(0, 1), x));
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).epsilon(1e-12));
  const std::vector<double> got_x = values(xv.grad()), want_x = values(matmul_reference(g, w));
  for (size_t i = 0; i < got_x.size(); ++i) CHECK(got_x[i] == Approx(want_x[i]).epsilon(1e-12));
}

TEST_CASE("linear: a shape that does not fit is a ShapeError naming linear and the shapes") {
  const Variable x(zeros({4, 3})), w(zeros({2, 5})), b(zeros({2}));
  CHECK_THROWS_MSG(linear(x, w, b), ShapeError,
                   "linear: input [4, 3] does not fit weight [2, 5]: its last dimension should be 5");
  CHECK_THROWS_MSG(linear(Variable(zeros({5})), Variable(zeros({2, 5})), Variable(zeros({3}))), ShapeError,
                   "linear: bias [3] does not fit weight [2, 5]: it should be [2]");
  CHECK_THROWS_MSG(linear(x, Variable(zeros({3})), b), ShapeError,
                   "linear: weight must be [out, in], got [3] (input [4, 3])");
  CHECK_THROWS_MSG(linear(Variable(scalar(1.0)), w), ShapeError, "linear: input [] does not fit weight [2, 5]");
}
