// The engine: chain rule on hand-computed cases, accumulation, retain_graph, freed graphs,
// no-grad, detach, deep chains, anomaly mode, graph export, error paths.
#include <memory>
#include <sstream>
#include <thread>

#include "helpers.h"

using namespace gradformer;
using test::values;

TEST_CASE("the chain rule on micrograd's expression by hand") {
  // L = (a*b + c) * f with a=2, b=-3, c=10, f=-2:  d = a*b + c = 4, L = -8
  // dL/df = d = 4, dL/dd = f = -2, dL/dc = -2, dL/da = -2 * b = 6, dL/db = -2 * a = -4
  Variable a(scalar(2.0, DType::Float64), true), b(scalar(-3.0, DType::Float64), true);
  Variable c(scalar(10.0, DType::Float64), true), f(scalar(-2.0, DType::Float64), true);
  Variable d = a * b + c;
  d.retain_grad();
  Variable L = d * f;
  CHECK(L.item() == -8.0);
  L.backward();
  CHECK(a.grad().item() == 6.0);
  CHECK(b.grad().item() == -4.0);
  CHECK(c.grad().item() == -2.0);
  CHECK(f.grad().item() == 4.0);
  CHECK(d.grad().item() == -2.0);
  CHECK(a.is_leaf());
  CHECK_FALSE(L.is_leaf());
}

TEST_CASE("a value used twice receives both contributions (b = a + a)") {
  Variable a(scalar(3.0), true);
  Variable b = a + a;
  b.backward();
  CHECK(a.grad().item() == 2.0);

  // a diamond: y = a*a + a  ->  dy/da = 2a + 1 = 7
  Variable a2(scalar(3.0), true);
  (a2 * a2 + a2).backward();
  CHECK(a2.grad().item() == 7.0);
}

TEST_CASE("gradients accumulate across backward calls until zero_grad") {
  Variable x(tensor({1, 2, 3}, {3}), true);
  sum(x * 2.0).backward();
  sum(x * 2.0).backward();
  CHECK(values(x.grad()) == std::vector<double>{4, 4, 4});
  x.zero_grad();
  CHECK_FALSE(x.grad().defined());
  sum(x * 3.0).backward();
  CHECK(values(x.grad()) == std::vector<double>{3, 3, 3});
}

TEST_CASE("accumulation never writes into a tensor someone else holds") {
  // The two inputs of add receive the same gradient tensor; adding into one must not change the other.
  Variable a(tensor({1, 1}, {2}), true), b(tensor({1, 1}, {2}), true);
  Variable y = sum(a + b);
  y.backward(ones({}), true);
  const Tensor held = a.grad();  // the user keeps a handle
  y.backward();
  CHECK(values(held) == std::vector<double>{1, 1});
  CHECK(values(a.grad()) == std::vector<double>{2, 2});
  CHECK(values(b.grad()) == std::vector<double>{2, 2});
}

TEST_CASE("narrow's gradient is added into its part of the input's gradient") {
  // y = 1 * x[:, 0:2] + 2 * x[:, 2:4] + 3 * x[:, 4:6], summed: dL/dx is 1 1 2 2 3 3 on each row,
  // gathered part by part (the three narrows of a fused q/k/v projection).
  Variable x(ones({2, 6}), true);
  Variable y = sum(narrow(x, 1, 0, 2) * 1.0) + sum(narrow(x, 1, 2, 2) * 2.0) + sum(narrow(x, 1, 4, 2) * 3.0);
  y.backward();
  CHECK(values(x.grad()) == std::vector<double>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3});
  // Overlapping parts add up; a part of an op's output (not a leaf) and a whole gradient mix.
  Variable a(tensor({1, 2, 3, 4}, {4}), true);
  Variable b = a * 1.0;  // b's gradient is gathered in the engine, then passed on to a
  Variable z = sum(narrow(b, 0, 0, 3)) + sum(narrow(b, 0, 1, 3) * 10.0) + sum(b * b);
  z.backward();
  // dz/db = [1, 11, 11, 10] + 2b = [3, 15, 17, 18]
  CHECK(values(a.grad()) == std::vector<double>{3, 15, 17, 18});
}

TEST_CASE("a part of a gradient is never added into a tensor someone else holds") {
  Variable x(tensor({1, 1, 1}, {3}), true);
  Variable y = sum(narrow(x, 0, 1, 2));
  y.backward(ones({}), true);
  const Tensor held = x.grad();  // the user keeps a handle
  y.backward();
  CHECK(values(held) == std::vector<double>{0, 1, 1});
  CHECK(values(x.grad()) == std::vector<double>{0, 2, 2});
}

TEST_CASE("retain_graph allows a second backward and without it the graph is freed") {
  Variable x(scalar(2.0), true);
  Variable y = x * x * x;  // dy/dx = 3x^2 = 12
  y.backward(true);
  CHECK(x.grad().item() == 12.0);
  y.backward();
  CHECK(x.grad().item() == 24.0);
  CHECK(y.grad_fn()->freed());
  CHECK_THROWS_MSG(y.backward(), GraphError, "was freed by an earlier backward");
  CHECK_THROWS_MSG(y.backward(), GraphError, "'mul'");
}

TEST_CASE("a freed graph also frees what it saved") {
  Variable x(tensor({1, 2}, {2}), true);
  Variable y = exp(x);
  std::weak_ptr<Storage> saved = y.value().storage();
  Variable s = sum(y);
  y = Variable();  // only the graph still holds exp's output now
  CHECK_FALSE(saved.expired());
  s.backward();
  CHECK(saved.expired());
}

TEST_CASE("NoGradGuard records nothing and restores the previous mode") {
  Variable x(scalar(1.0), true);
  {
    NoGradGuard no_grad;
    CHECK_FALSE(grad_enabled());
    Variable y = x * 2.0;
    CHECK_FALSE(y.requires_grad());
    CHECK(y.grad_fn() == nullptr);
    { NoGradGuard nested; }
    CHECK_FALSE(grad_enabled());
  }
  CHECK(grad_enabled());
  CHECK((x * 2.0).requires_grad());
}

TEST_CASE("grad mode is per thread") {
  NoGradGuard no_grad;
  bool other_thread_enabled = false;
  std::thread([&] { other_thread_enabled = grad_enabled(); }).join();
  CHECK(other_thread_enabled);
}

TEST_CASE("detach stops the gradient and shares the value") {
  Variable x(tensor({1, 2}, {2}), true);
  Variable d = x.detach();
  CHECK(d.value().shares_storage_with(x.value()));
  CHECK_FALSE(d.requires_grad());
  sum(x * d).backward();  // d/dx (x * const) = const = x's values
  CHECK(values(x.grad()) == std::vector<double>{1, 2});
}

TEST_CASE("constants and int tensors do not require grad") {
  Variable c(tensor({1, 2}, {2}));
  CHECK_FALSE((c * c).requires_grad());
  CHECK_THROWS_MSG(Variable(arange(3, DType::Int64), true), DTypeError, "only floating tensors can require grad");
  CHECK_THROWS_MSG(sum(c).backward(), GraphError, "does not require grad");
  Variable x(scalar(1.0), true);
  CHECK_THROWS_MSG((x * 2.0).set_requires_grad(false), GraphError, "only leaves");
}

TEST_CASE("backward checks the upstream gradient") {
  Variable x(tensor({1, 2, 3}, {3}), true);
  Variable y = x * 2.0;
  CHECK_THROWS_MSG(y.backward(), ShapeError, "needs a one-element output");
  CHECK_THROWS_MSG(y.backward(ones({2})), ShapeError, "upstream gradient has shape [2], the output has shape [3]");
  CHECK_THROWS_MSG(y.backward(ones({3}, DType::Float64)), DTypeError, "upstream gradient is float64");
  y.backward(tensor({1, 0, 2}, {3}));
  CHECK(values(x.grad()) == std::vector<double>{2, 0, 4});
}

TEST_CASE("backward on a leaf accumulates the seed") {
  Variable x(scalar(5.0), true);
  x.backward();
  CHECK(x.grad().item() == 1.0);
}

TEST_CASE("a 100000-op chain back-propagates and is released without recursion") {
  Variable x(scalar(1.0, DType::Float64), true);
  Variable y = x;
  std::weak_ptr<Node> first_node;
  for (int i = 0; i < 100000; ++i) {
    y = y * 1.0 + 0.0;  // two ops per step: dy/dx stays 1
    if (i == 0) first_node = y.grad_fn();
  }
  y.backward(true);
  CHECK(x.grad().item() == 1.0);
  CHECK_FALSE(first_node.expired());
  y = Variable();  // the retained graph is destroyed here: 200,000 nodes, one at a time
  CHECK(first_node.expired());
}

TEST_CASE("a 100000-op chain that never ran backward is released too") {
  Variable x(scalar(1.0), true);
  Variable y = x;
  std::weak_ptr<Node> first_node;
  for (int i = 0; i < 100000; ++i) {
    y = exp(y * 0.0);
    if (i == 0) first_node = y.grad_fn();
  }
  y = Variable();
  CHECK(first_node.expired());
}

TEST_CASE("a wide graph: many uses of one leaf") {
  Variable x(scalar(1.5, DType::Float64), true);
  Variable total(scalar(0.0, DType::Float64));
  for (int i = 0; i < 1000; ++i) total = total + x * static_cast<double>(i);
  total.backward();
  CHECK(x.grad().item() == Approx(999.0 * 1000.0 / 2));  // sum of i
}

TEST_CASE("anomaly mode names the op whose forward produced a non-finite value") {
  Variable x(tensor({1, 0}, {2}), true);
  CHECK_NOTHROW(log(x));  // off by default: -inf passes
  DetectAnomalyGuard anomaly;
  CHECK_THROWS_MSG(log(x), AnomalyError, "the forward of 'log' produced -inf (output [2]) from finite inputs");
}

TEST_CASE("anomaly mode names the op whose backward produced a non-finite gradient") {
  Variable x(tensor({4, 0}, {2}), true);
  DetectAnomalyGuard anomaly;
  Variable y = sum(sqrt(x));  // forward is finite: sqrt(0) = 0; backward 1 / (2 sqrt 0) = inf
  CHECK_THROWS_MSG(y.backward(), AnomalyError, "the backward of 'sqrt' produced inf in the gradient of input 0");
}

TEST_CASE("the graph exports as Graphviz DOT") {
  Variable a(scalar(2.0), true), b(tensor({1, 2, 3}, {3}));
  a.set_name("a");
  Variable y = sum(a * b);
  const std::string dot = to_dot(y);
  CHECK(dot.rfind("digraph", 0) == 0);
  CHECK(dot.find("label=\"mul\"") != std::string::npos);
  CHECK(dot.find("label=\"sum\"") != std::string::npos);
  CHECK(dot.find("a | [] float32 | leaf") != std::string::npos);
  CHECK(dot.find("[3] float32 | constant") != std::string::npos);
  CHECK(dot.find("[] float32\"") != std::string::npos);  // the output: neither leaf nor constant
  // 4 values (a, b, a*b, the sum) and 2 ops: a -> mul, b -> mul, mul -> a*b, a*b -> sum, sum -> out
  size_t arrows = 0;
  for (size_t at = dot.find("->"); at != std::string::npos; at = dot.find("->", at + 1)) ++arrows;
  CHECK(arrows == 5);
}

TEST_CASE("gradcheck catches a deliberately wrong backward") {
  // square(x) = x^2, whose derivative is 2x; this backward forgets the 2.
  auto broken_square = [](const std::vector<Variable>& in) {
    const Variable& x = in[0];
    return record("broken_square", x.value() * x.value(), {x}, [](const Tensor& g, Grads& dx) {
      dx[0] = g * dx.input(0);  // wrong: should be 2 * g * x
    });
  };
  const GradcheckResult r = gradcheck(broken_square, {test::rnd({3}, 1)});
  INFO(r.report);
  CHECK_FALSE(r.ok);
  CHECK(r.report.find("gradcheck FAILED") != std::string::npos);
  CHECK(r.analytic == Approx(r.numeric / 2).epsilon(1e-6));
}

TEST_CASE("gradcheck catches a backward that overwrites instead of accumulating") {
  // A backward that stores a gradient into the leaf directly (=) breaks the 2x rule.
  Variable captured;
  auto overwriting = [&](const std::vector<Variable>& in) {
    const Variable& x = in[0];
    captured = x;
    return record("overwrite", x.value() * 3.0, {x},
                  [&captured](const Tensor& g, Grads&) { captured.set_grad(g * 3.0); });
  };
  const GradcheckResult r = gradcheck(overwriting, {test::rnd({2}, 2)});
  INFO(r.report);
  CHECK_FALSE(r.ok);
  CHECK(r.report.find("do not accumulate") != std::string::npos);
}

TEST_CASE("float32 inputs are checked in float64 through the same kernels") {
  const Tensor a = test::rnd({5, 6}, 60).to(DType::Float32), b = test::rnd({6, 7}, 61).to(DType::Float32);
  CHECK_GRADCHECK([](const std::vector<Variable>& v) { return tanh(matmul(v[0], v[1])); }, {a, b});
}

TEST_CASE("gradcheck rejects overlapping inputs and float32 results") {
  CHECK_THROWS_MSG(
      gradcheck([](const std::vector<Variable>& v) { return v[0] * 1.0; }, {test::rnd({1, 3}, 62).expand({2, 3})}),
      ValueError, "overlapping elements");
  CHECK_THROWS_MSG(gradcheck([](const std::vector<Variable>& v) { return Variable(v[0].value().to(DType::Float32)); },
                             {test::rnd({2}, 63)}),
                   DTypeError, "f must return float64");
}

TEST_CASE("backward checks the shape and dtype a backward function returns") {
  Variable x(tensor({1, 2, 3}, {3}), true);
  Variable bad_shape = record("bad_shape", x.value(), {x}, [](const Tensor&, Grads& dx) { dx[0] = ones({2}); });
  CHECK_THROWS_MSG(sum(bad_shape).backward(), ShapeError,
                   "backward of 'bad_shape': the gradient of input 0 has shape [2]");
  Variable bad_dtype =
      record("bad_dtype", x.value(), {x}, [](const Tensor&, Grads& dx) { dx[0] = ones({3}, DType::Float64); });
  CHECK_THROWS_MSG(sum(bad_dtype).backward(), DTypeError, "backward of 'bad_dtype'");
  Variable bad_part =
      record("bad_part", x.value(), {x}, [](const Tensor&, Grads& dx) { dx.set_part(0, 0, 1, 2, ones({3})); });
  CHECK_THROWS_MSG(sum(bad_part).backward(), ShapeError,
                   "backward of 'bad_part': the gradient of input 0's part has shape [3], the part has shape [2]");
}

TEST_CASE("a variable prints its value and where it came from") {
  Variable a(tensor({1, 2}, {2}), true);
  std::ostringstream out;
  out << a << "\n" << a * 2.0 << "\n" << Variable(scalar(1.0)) << "\n" << Variable();
  const std::string s = out.str();
  CHECK(s.find("shape=[2], dtype=float32), leaf, requires_grad)") != std::string::npos);
  CHECK(s.find("grad_fn=mul)") != std::string::npos);
  CHECK(s.find("constant)") != std::string::npos);
  CHECK(s.find("variable(undefined)") != std::string::npos);
}

TEST_CASE("a node keeps only the input values its backward reads: an add none, a product the other side's") {
  Variable w(from_vector(std::vector<double>{1, 2, 3, 4, 5, 6}, {3, 2}), true);
  Variable frozen(from_vector(std::vector<double>{1, 0, 0, 1, 1, 1}, {2, 3}));  // wants no gradient
  std::weak_ptr<Storage> x_storage, y_storage;
  Variable loss;
  {
    const Variable x = matmul(Variable(ones({4, 3}, DType::Float64), true) * 2.0, w);  // [4, 2], made by an op
    const Variable y = matmul(x, frozen);  // [4, 3]: x read only to make frozen's gradient, which is not wanted
    x_storage = x.value().storage(), y_storage = y.value().storage();
    const Node& product = *y.grad_fn();
    CHECK(product.inputs()[0].impl()->value_released);        // x: an edge only
    CHECK_FALSE(product.inputs()[1].impl()->value_released);  // frozen: kept, to make x's gradient
    CHECK(product.inputs()[0].shape() == Shape{4, 2});
    loss = sum(y + y);  // add: neither value kept
    CHECK(loss.grad_fn()->inputs()[0].grad_fn()->inputs()[0].impl()->value_released);
  }
  // Nothing else holds x or y: their memory went back at the end of the block, the graph intact.
  CHECK(x_storage.expired());
  CHECK(y_storage.expired());
  loss.backward();
  // L = sum(2 y): dL/dy = 2; dL/dx = 2 ones [4, 3] frozen^T = [2, 6] in every row (frozen's rows
  // sum to 1 and 3); x = X w with X = 2 ones [4, 3]: dL/dw = X^T dL/dx = 4 x 2 x [2, 6] in every row.
  CHECK(w.grad().to_vector<double>() == std::vector<double>{16, 48, 16, 48, 16, 48});
}

TEST_CASE("a backward that reads an input its op said it would not read is a GraphError, not a silent zero") {
  const Variable a = Variable(scalar(2.0, DType::Float64), true) * 1.0;
  const Variable out = record("wrongly_declared", scalar(4.0, DType::Float64), {a}, Reads::None,
                              [](const Tensor& g, Grads& dx) { dx[0] = mul(g, dx.input(0)); });
  CHECK_THROWS_MSG(out.backward(), GraphError,
                   "backward read input 0 ([]), whose value its op said it would not read (Reads): the node did not "
                   "keep it");
}
