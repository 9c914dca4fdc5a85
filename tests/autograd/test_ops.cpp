// Every differentiable op: values against hand-computed cases, and gradcheck (float64 central
// differences, random upstream gradient, accumulation twice) including broadcast shapes and
// non-contiguous inputs.
#include "helpers.h"

using namespace gradformer;
using test::rnd;
using test::values;
using V = std::vector<Variable>;

TEST_CASE("gradcheck: arithmetic with broadcasting") {
  const Tensor a = rnd({2, 3}, 1), b = rnd({3}, 2), c = rnd({2, 1}, 3), pos = rnd({2, 3}, 4, 0.5, 2.0);
  CHECK_GRADCHECK([](const V& x) { return x[0] + x[1]; }, {a, b});
  CHECK_GRADCHECK([](const V& x) { return x[0] - x[1]; }, {c, a});
  CHECK_GRADCHECK([](const V& x) { return x[0] * x[1]; }, {a, c});
  CHECK_GRADCHECK([](const V& x) { return x[0] / x[1]; }, {b, pos});
  CHECK_GRADCHECK([](const V& x) { return -x[0] * 2.0 + 1.0 - 3.0 / x[1]; }, {a, pos});
  CHECK_GRADCHECK([](const V& x) { return x[0] * x[0]; }, {rnd({}, 5)});  // rank 0
}

TEST_CASE("arithmetic gradients by hand: a 2x3 matrix plus a bias of 3") {
  Variable a(zeros({2, 3}), true), bias(zeros({3}), true);
  sum(a + bias).backward();
  CHECK(bias.grad().shape() == Shape{3});
  CHECK(values(bias.grad()) == std::vector<double>{2, 2, 2});  // summed over the broadcast rows
  CHECK(values(a.grad()) == std::vector<double>(6, 1.0));
}

TEST_CASE("gradcheck: non-contiguous inputs") {
  const Tensor t = rnd({4, 3}, 6).transpose(0, 1);  // [3, 4], strides [1, 3]
  const Tensor s = rnd({3, 8}, 7).slice(1, 0, 8, 2);  // [3, 4], stride 2 along the last axis
  REQUIRE_FALSE(t.is_contiguous());
  REQUIRE_FALSE(s.is_contiguous());
  CHECK_GRADCHECK([](const V& x) { return x[0] * x[1] + exp(x[0]); }, {t, s});
  CHECK_GRADCHECK([](const V& x) { return matmul(x[0], contiguous(transpose(x[1], 0, 1))); }, {t, s});
}

TEST_CASE("gradcheck: elementwise functions") {
  const Tensor x = rnd({2, 3}, 8), pos = rnd({2, 3}, 9, 0.2, 2.0);
  CHECK_GRADCHECK([](const V& v) { return exp(v[0]); }, {x});
  CHECK_GRADCHECK([](const V& v) { return log(v[0]); }, {pos});
  CHECK_GRADCHECK([](const V& v) { return sqrt(v[0]); }, {pos});
  CHECK_GRADCHECK([](const V& v) { return rsqrt(v[0]); }, {pos});
  CHECK_GRADCHECK([](const V& v) { return pow(v[0], 3.0); }, {x});
  CHECK_GRADCHECK([](const V& v) { return pow(v[0], -1.5); }, {pos});
  CHECK_GRADCHECK([](const V& v) { return pow(v[0], v[1]); }, {pos, x});
  CHECK_GRADCHECK([](const V& v) { return tanh(v[0]); }, {x});
  CHECK_GRADCHECK([](const V& v) { return gelu(v[0]); }, {rnd({2, 3}, 10, -3, 3)});
  // relu is not differentiable at 0; these points keep away from it
  CHECK_GRADCHECK([](const V& v) { return relu(v[0]); }, {tensor({-1.5, -0.2, 0.3, 2.0}, {4}, DType::Float64)});
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

TEST_CASE("gradcheck: where and masked_fill") {
  const Tensor cond = tensor({1, 0, 1}, {3}).to(DType::Bool);
  CHECK_GRADCHECK([&](const V& v) { return where(cond, v[0], v[1]); }, {rnd({2, 3}, 11), rnd({1}, 12)});
  const Tensor mask = tensor({0, 1, 0, 0, 0, 1}, {2, 3}).to(DType::Bool);
  // (a fill value like -1e9 would make L = sum(out * u) so large that its rounding swamps the differences)
  CHECK_GRADCHECK([&](const V& v) { return masked_fill(v[0], mask, 5.0); }, {rnd({2, 3}, 13)});
  Variable x(ones({2, 3}), true);
  sum(masked_fill(x, mask, 5.0)).backward();
  CHECK(values(x.grad()) == std::vector<double>{1, 0, 1, 1, 1, 0});
}

TEST_CASE("gradcheck: matmul batched and broadcast and with transposed operands") {
  CHECK_GRADCHECK([](const V& v) { return matmul(v[0], v[1]); }, {rnd({3, 4}, 14), rnd({4, 2}, 15)});
  CHECK_GRADCHECK([](const V& v) { return matmul(v[0], v[1]); }, {rnd({2, 3, 4}, 16), rnd({2, 4, 5}, 17)});
  CHECK_GRADCHECK([](const V& v) { return matmul(v[0], v[1]); }, {rnd({2, 3, 4}, 18), rnd({4, 5}, 19)});  // b broadcast
  CHECK_GRADCHECK([](const V& v) { return matmul(v[0], v[1]); }, {rnd({1, 3, 4}, 20), rnd({2, 1, 4, 2}, 21)});
  // a^T b and a b^T, as attention computes q k^T
  CHECK_GRADCHECK([](const V& v) { return matmul(transpose(v[0], -2, -1), v[1]); }, {rnd({4, 3}, 22), rnd({4, 2}, 23)});
  CHECK_GRADCHECK([](const V& v) { return matmul(v[0], transpose(v[1], -2, -1)); }, {rnd({2, 3, 4}, 24), rnd({2, 5, 4}, 25)});
  // operands that are transposed views already as inputs
  CHECK_GRADCHECK([](const V& v) { return matmul(v[0], v[1]); }, {rnd({4, 3}, 26).transpose(0, 1), rnd({2, 4}, 27).transpose(0, 1)});
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

TEST_CASE("gradcheck: views") {
  const Tensor x = rnd({2, 3, 4}, 30);
  CHECK_GRADCHECK([](const V& v) { return reshape(v[0], {6, -1}); }, {x});
  CHECK_GRADCHECK([](const V& v) { return view(v[0], {4, 6}); }, {x});
  CHECK_GRADCHECK([](const V& v) { return reshape(transpose(v[0], 0, 2), {-1}); }, {x});  // copies
  CHECK_GRADCHECK([](const V& v) { return permute(v[0], {2, 0, 1}) * permute(v[0], {2, 0, 1}); }, {x});
  CHECK_GRADCHECK([](const V& v) { return slice(v[0], 2, 1, 4, 2); }, {x});
  CHECK_GRADCHECK([](const V& v) { return narrow(v[0], 1, 1, 2); }, {x});
  CHECK_GRADCHECK([](const V& v) { return select(v[0], 0, -1); }, {x});
  CHECK_GRADCHECK([](const V& v) { return unsqueeze(squeeze(v[0], 1), 0); }, {rnd({3, 1, 2}, 31)});
  CHECK_GRADCHECK([](const V& v) { return expand(v[0], {2, 3, 4}) * 2.0; }, {rnd({3, 1}, 32)});
  CHECK_GRADCHECK([](const V& v) { return contiguous(transpose(v[0], 0, 1)); }, {x});
}

TEST_CASE("a slice's gradient is zero outside the slice") {
  Variable x(zeros({5}), true);
  sum(slice(x, 0, 1, 5, 2)).backward();  // elements 1 and 3
  CHECK(values(x.grad()) == std::vector<double>{0, 1, 0, 1, 0});
}

TEST_CASE("gradcheck: concat and stack") {
  CHECK_GRADCHECK([](const V& v) { return concat({v[0], v[1], v[0]}, 1); }, {rnd({2, 3}, 33), rnd({2, 1}, 34)});
  CHECK_GRADCHECK([](const V& v) { return stack({v[0], v[1]}, -1); }, {rnd({2, 3}, 35), rnd({2, 3}, 36)});
  // a constant piece in the middle gets no gradient, the others do
  Variable a(ones({2}), true);
  Variable c(ones({3}));
  sum(concat({a, c, a * 2.0}, 0)).backward();
  CHECK(values(a.grad()) == std::vector<double>{3, 3});
}

TEST_CASE("gradcheck: reductions") {
  const Tensor x = rnd({2, 3, 4}, 40);
  CHECK_GRADCHECK([](const V& v) { return sum(v[0]); }, {x});
  CHECK_GRADCHECK([](const V& v) { return sum(v[0], {0, 2}); }, {x});
  CHECK_GRADCHECK([](const V& v) { return sum(v[0], {-1}, true); }, {x});
  CHECK_GRADCHECK([](const V& v) { return mean(v[0], {1}); }, {x});
  CHECK_GRADCHECK([](const V& v) { return mean(v[0]); }, {x});
  CHECK_GRADCHECK([](const V& v) { return max(v[0], {-1}); }, {x});  // no ties in random data
  CHECK_GRADCHECK([](const V& v) { return max(v[0], {0, 1}, true); }, {x});
  CHECK_GRADCHECK([](const V& v) { return var(v[0], {-1}); }, {x});
  CHECK_GRADCHECK([](const V& v) { return var(v[0], {0, 2}, true, 0); }, {x});
  CHECK_GRADCHECK([](const V& v) { return logsumexp(v[0], {-1}); }, {x});
  CHECK_GRADCHECK([](const V& v) { return logsumexp(v[0], {0}, true); }, {x});
  CHECK_GRADCHECK([](const V& v) { return sum(v[0], {1}); }, {x.transpose(0, 2)});  // non-contiguous
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

TEST_CASE("gradcheck: index_select and gather with repeated indices") {
  const Tensor ids = tensor({0, 2, 2, 1, 0, 2}, {2, 3}, DType::Int64);
  CHECK_GRADCHECK([&](const V& v) { return index_select(v[0], 0, ids); }, {rnd({3, 4}, 50)});
  CHECK_GRADCHECK([&](const V& v) { return index_select(v[0], 1, ids); }, {rnd({2, 3, 2}, 51)});
  const Tensor picks = tensor({1, 1, 0, 2}, {2, 2}, DType::Int64);
  CHECK_GRADCHECK([&](const V& v) { return gather(v[0], 1, picks); }, {rnd({2, 3}, 52)});
}

TEST_CASE("an embedding row looked up twice receives both gradients") {
  Variable weight(zeros({4, 2}), true);
  const Tensor ids = tensor({3, 1, 3}, {3}, DType::Int64);
  sum(embedding(weight, ids) * Variable(tensor({1, 2, 10, 20, 100, 200}, {3, 2}))).backward();
  CHECK(values(weight.grad()) == std::vector<double>{0, 0, 10, 20, 0, 0, 101, 202});
  CHECK_THROWS_MSG(embedding(weight, tensor({4}, {1}, DType::Int64)), IndexError, "index_select: index 4 is out of range");
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
  // gradcheck with the generator reset before each call, so every evaluation draws the same mask
  CHECK_GRADCHECK([](const V& v) {
    Generator g(3);
    return dropout(v[0], 0.5, g);
  }, {rnd({4, 4}, 53)});
}

TEST_CASE("float32 inputs are checked in float64 through the same kernels") {
  const Tensor a = rnd({5, 6}, 60).to(DType::Float32), b = rnd({6, 7}, 61).to(DType::Float32);
  CHECK_GRADCHECK([](const V& v) { return tanh(matmul(v[0], v[1])); }, {a, b});
}

TEST_CASE("gradcheck rejects overlapping inputs and float32 results") {
  CHECK_THROWS_MSG(gradcheck([](const V& v) { return v[0] * 1.0; }, {rnd({1, 3}, 62).expand({2, 3})}), ValueError,
                   "overlapping elements");
  CHECK_THROWS_MSG(gradcheck([](const V& v) { return Variable(v[0].value().to(DType::Float32)); }, {rnd({2}, 63)}),
                   DTypeError, "f must return float64");
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

TEST_CASE("every entry of autograd_op_checks passes gradcheck") {
  const std::vector<OpCheck> checks = autograd_op_checks();
  CHECK(checks.size() >= 40);
  for (const OpCheck& c : checks) {
    const GradcheckResult r = gradcheck(c.f, c.inputs);
    INFO(c.name << ": " << r.report);
    CHECK(r.ok);
  }
}
