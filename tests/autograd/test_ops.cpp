// Every differentiable op against hand-computed values and gradients, and its errors. The gradient
// checks of the ops are one table, autograd_op_checks(), run by test_op_checks.cpp.
#include "helpers.h"

using namespace gradformer;
using test::values;

TEST_CASE("arithmetic gradients by hand: a 2x3 matrix plus a bias of 3") {
  Variable a(zeros({2, 3}), true), bias(zeros({3}), true);
  sum(a + bias).backward();
  CHECK(bias.grad().shape() == Shape{3});
  CHECK(values(bias.grad()) == std::vector<double>{2, 2, 2});  // summed over the broadcast rows
  CHECK(values(a.grad()) == std::vector<double>(6, 1.0));
}

TEST_CASE("elementwise derivatives by hand") {
  Variable x(tensor({0.0, 1.0, -2.0}, {3}, DType::Float64), true);
  sum(tanh(x)).backward();
  // tanh'(0) = 1, tanh'(x) = 1 - tanh(x)^2
  CHECK(values(x.grad())[0] == 1.0);
  CHECK(values(x.grad())[1] == Approx(1 - std::tanh(1.0) * std::tanh(1.0)));
  x.zero_grad();
  sum(gelu(x)).backward();
  CHECK(values(x.grad())[0] == Approx(0.5));  // Phi(0) + 0 * phi(0)
  x.zero_grad();
  sum(relu(x)).backward();
  CHECK(values(x.grad()) == std::vector<double>{0, 1, 0});  // 0 at x = 0, as PyTorch
}

TEST_CASE("masked_fill: masked elements get no gradient") {
  const Tensor mask = tensor({0, 1, 0, 0, 0, 1}, {2, 3}).to(DType::Bool);
  Variable x(ones({2, 3}), true);
  sum(masked_fill(x, mask, 5.0)).backward();
  CHECK(values(x.grad()) == std::vector<double>{1, 0, 1, 1, 1, 0});
}

TEST_CASE("matmul gradients by hand") {
  // C = A B with A = [[1, 2]], B = [[3], [4]]: dC/dA = B^T = [3, 4], dC/dB = A^T = [1, 2]
  Variable A(tensor({1, 2}, {1, 2}), true), B(tensor({3, 4}, {2, 1}), true);
  Variable C = matmul(A, B);
  CHECK(C.item() == 11.0);
  C.backward();
  CHECK(values(A.grad()) == std::vector<double>{3, 4});
  CHECK(values(B.grad()) == std::vector<double>{1, 2});
}

TEST_CASE("matmul errors name the op and both shapes") {
  Variable a(zeros({4, 3}), true), b(zeros({5, 2}), true);
  CHECK_THROWS_MSG(matmul(a, b), ShapeError, "matmul: inner dimensions differ: a is [4, 3], b is [5, 2]");
  CHECK_THROWS_MSG(a + Variable(zeros({2})), ShapeError, "add: shapes [4, 3] and [2] do not broadcast");
  CHECK_THROWS_MSG(a + Variable(zeros({3}, DType::Float64)), DTypeError, "add: dtypes differ");
}

TEST_CASE("a slice's gradient is zero outside the slice") {
  Variable x(zeros({5}), true);
  sum(slice(x, 0, 1, 5, 2)).backward();  // elements 1 and 3
  CHECK(values(x.grad()) == std::vector<double>{0, 1, 0, 1, 0});
}

TEST_CASE("concat: a constant piece gets no gradient, an input used twice gets both") {
  // a constant piece in the middle gets no gradient, the others do
  Variable a(ones({2}), true);
  Variable c(ones({3}));
  sum(concat({a, c, a * 2.0}, 0)).backward();
  CHECK(values(a.grad()) == std::vector<double>{3, 3});
}

TEST_CASE("reduction gradients by hand") {
  Variable x(tensor({1, 3, 3, 2}, {2, 2}), true);
  sum(max(x, {-1})).backward();  // row 0: max 3 at index 1; row 1: tie between 3 and... no: [3, 2]
  CHECK(values(x.grad()) == std::vector<double>{0, 1, 1, 0});
  Variable t(tensor({5, 5, 1}, {3}), true);
  max(t).backward();  // a tie: the gradient is split evenly
  CHECK(values(t.grad()) == std::vector<double>{0.5, 0.5, 0});
  Variable m(tensor({1, 2, 3, 4}, {4}), true);
  mean(m).backward();
  CHECK(values(m.grad()) == std::vector<double>(4, 0.25));
  // var with Bessel's correction: d/dx_i = 2 (x_i - mean) / (n - 1) = 2/3 * (x_i - 2.5)
  Variable w(tensor({1, 2, 3, 4}, {4}, DType::Float64), true);
  var(w).backward();
  const std::vector<double> g = values(w.grad());
  CHECK(g[0] == Approx(2.0 / 3 * -1.5));
  CHECK(g[3] == Approx(2.0 / 3 * 1.5));
  // logsumexp of equal values: the gradient is uniform (the softmax of a constant row)
  Variable e(tensor({7, 7, 7, 7}, {4}, DType::Float64), true);
  logsumexp(e).backward();
  for (double gi : values(e.grad())) CHECK(gi == Approx(0.25));
}

TEST_CASE("an embedding row looked up twice receives both gradients") {
  Variable weight(zeros({4, 2}), true);
  const Tensor ids = tensor({3, 1, 3}, {3}, DType::Int64);
  sum(embedding(weight, ids) * Variable(tensor({1, 2, 10, 20, 100, 200}, {3, 2}))).backward();
  CHECK(values(weight.grad()) == std::vector<double>{0, 0, 10, 20, 0, 0, 101, 202});
  CHECK_THROWS_MSG(embedding(weight, tensor({4}, {1}, DType::Int64)), IndexError,
                   "index_select: index 4 is out of range");
}

TEST_CASE("dropout: the mask is saved and survivors are scaled by 1/(1-p)") {
  Generator gen(7);
  Variable x(ones({1000}, DType::Float64), true);
  Variable y = dropout(x, 0.25, gen);
  const std::vector<double> out = values(y.value());
  int64_t kept = 0;
  for (double v : out) {
    CHECK((v == 0.0 || v == Approx(1 / 0.75)));
    kept += v != 0;
  }
  CHECK(kept > 700);
  CHECK(kept < 800);
  sum(y).backward();
  CHECK(values(x.grad()) == out);  // d(x * m)/dx = m: the very mask of the forward
  CHECK(dropout(x, 0.25, gen, /*training=*/false).impl() == x.impl());
  CHECK(sum(dropout(x, 1.0, gen)).item() == 0.0);
  CHECK_THROWS_MSG(dropout(x, 1.5, gen), ValueError, "dropout: p must be in [0, 1], got 1.5");
}

TEST_CASE("op errors are typed and name the op and the shapes") {
  Variable x(zeros({2, 3}), true);
  CHECK_THROWS_MSG(reshape(x, {4}), ShapeError, "reshape: shape [4] is invalid for 6 elements");
  CHECK_THROWS_MSG(concat({x, Variable(zeros({2, 2}))}, 0), ShapeError, "concat: tensor 1 has shape [2, 2]");
  CHECK_THROWS_MSG(stack({x, Variable(zeros({3, 2}))}, 0), ShapeError, "stack: tensor 1 has shape [3, 2]");
  CHECK_THROWS_MSG(softmax(x, 2), IndexError, "softmax: dimension 2 is out of range for a tensor of rank 2");
  CHECK_THROWS_MSG(sum(x, {5}), IndexError, "sum: dimension 5 is out of range");
  CHECK_THROWS_MSG(expand(x, {3, 3}), ShapeError, "expand: cannot expand shape [2, 3] to [3, 3]");
  CHECK_THROWS_MSG(layer_norm(x, Variable(), Variable(), 0.0), ValueError, "layer_norm: eps must be positive");
  CHECK_THROWS_MSG(cross_entropy(x, tensor({0, 1}, {1, 2}, DType::Int64)), ShapeError, "got [1, 2]");
  CHECK_THROWS_MSG(exp(Variable(arange(3, DType::Int64))), DTypeError, "exp: expected a floating dtype");
  CHECK_THROWS_MSG(Variable().value(), ValueError, "value: the variable is undefined");
}

TEST_CASE("gelu_tanh's gradient in float32 is the tanh form's derivative in float64, at the extremes too") {
  // d/dx x/2 (1 + tanh u) = (1 + tanh u)/2 + x/2 (1 - tanh^2 u) u',  u = sqrt(2/pi) (x + 0.044715 x^3)
  auto slope = [](double x) {
    const double k = 0.79788456080286535588, c = 0.044715, t = std::tanh(k * (x + c * x * x * x));
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * k * (1 + 3 * c * x * x);
  };
  std::vector<double> xs;
  for (int i = -2000; i <= 2000; ++i) xs.push_back(i / 200.0);  // [-10, 10] in steps of 0.005
  xs.insert(xs.end(), {-100.0, 100.0, -1000.0, 1000.0});
  Variable x(from_vector(xs, {static_cast<int64_t>(xs.size())}).to(DType::Float32), true);
  sum(gelu_tanh(x)).backward();
  const std::vector<double> got = values(x.grad());
  for (size_t i = 0; i < xs.size(); ++i) {
    const double want = slope(static_cast<double>(static_cast<float>(xs[i])));
    INFO("x = " << xs[i] << ": got " << got[i] << ", want " << want);
    // float32 roundings of u, of s and of the sum; the slope dips to about -0.13 and peaks near 1.13
    CHECK(std::abs(got[i] - want) <= 64 * std::numeric_limits<float>::epsilon() * (std::abs(want) + 1e-2));
  }
}
