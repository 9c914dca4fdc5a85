// Chapter 3: autograd. The companion program of tutorials/03-autograd.md: every listing of the
// chapter is a piece of this file, and every output the chapter shows is what this program prints.
// It exits with a non-zero status if a claim the chapter makes does not hold.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>

#include "autograd/all.h"
#include "claims.h"

using namespace gradformer;
using namespace tutorial;

namespace {

// ---- 1. the chain rule on a small expression ------------------------------------------------

void chain_rule() {
  section("the chain rule, and the graph as Graphviz DOT");
  Variable a(scalar(2.0), true), b(scalar(-3.0), true), c(scalar(10.0), true), f(scalar(-2.0), true);
  a.set_name("a"), b.set_name("b"), c.set_name("c"), f.set_name("f");
  Variable e = a * b;  // e = -6
  Variable d = e + c;  // d = 4
  Variable L = d * f;  // L = -8
  e.set_name("e"), d.set_name("d"), L.set_name("L");
  std::cout << to_dot(L);  // before backward, which frees the graph

  e.retain_grad(), d.retain_grad();  // keep the gradients of non-leaves too, to print them
  L.backward();
  std::cout << "L = " << L.item() << "\n";
  std::cout << "dL/dd = " << d.grad().item() << "   dL/df = " << f.grad().item() << "\n";
  std::cout << "dL/de = " << e.grad().item() << "   dL/dc = " << c.grad().item() << "\n";
  std::cout << "dL/da = " << a.grad().item() << "   dL/db = " << b.grad().item() << "\n";
  // by hand: dL/da = dL/dd * dd/de * de/da = f * 1 * b
  claim(a.grad().item() == f.item() * b.item(), "dL/da = f * b");
  claim(b.grad().item() == f.item() * a.item(), "dL/db = f * a");
}

// ---- 2. topological order -------------------------------------------------------------------

void topological() {
  section("topological order");
  Variable x(scalar(3.0), true);
  Variable y = x * x;    // mul
  Variable z = exp(y);   // exp
  Variable out = y + z;  // add: y is used twice, directly and through exp
  for (const auto& node : topological_order(out)) std::cout << node->op() << " ";
  std::cout << "\n";
  out.backward();
  // d(out)/dx = (1 + e^y) * 2x, with y = x^2
  std::cout << "dout/dx = " << x.grad().item() << ", by hand " << (1 + std::exp(9.0f)) * 6 << "\n";
}

// The number of calls a naive backward makes: it calls itself on each input as soon as it gets a
// gradient, so a node is visited once per path from the output, not once.
long long naive_visits(const Node& node) {
  long long visits = 1;
  for (const Variable& input : node.inputs())
    if (input.grad_fn()) visits += naive_visits(*input.grad_fn());
  return visits;
}

void why_not_recursion() {
  section("why recursion over children is not enough");
  Variable x(scalar(1.0, DType::Float64), true);
  Variable y = x;
  for (int i = 0; i < 20; ++i) y = y + y;  // 20 nodes, each using the previous one twice
  std::cout << "nodes: " << topological_order(y).size() << ", naive recursive visits: " << naive_visits(*y.grad_fn())
            << "\n";
  y.backward();
  std::printf("dy/dx = %.0f = 2^20\n", x.grad().item());
  claim(x.grad().item() == 1048576.0, "dy/dx = 2^20");

  using clock = std::chrono::steady_clock;
  Variable w(scalar(1.0), true);
  Variable chain = w;
  for (int i = 0; i < 100000; ++i) chain = chain * 1.0;
  const auto start = clock::now();
  chain.backward();
  chain = Variable();  // releases the 100,000 nodes, one at a time
  const double seconds = std::chrono::duration<double>(clock::now() - start).count();
  std::printf("a 100,000-op chain: backward and release in %.3f s, dw = %g\n", seconds, w.grad().item());
}

// ---- 3. gradient accumulation ---------------------------------------------------------------

void accumulation() {
  section("gradient accumulation");
  Variable a(scalar(3.0), true);
  Variable b = a + a;
  b.backward();
  std::cout << "b = a + a: db/da = " << a.grad().item() << "\n";
  claim(a.grad().item() == 2.0, "b = a + a gives 2");
  Variable c = a * 4.0;
  c.backward();
  std::cout << "after a second backward (dc/da = 4): a.grad = " << a.grad().item() << "\n";
  a.zero_grad();
  std::cout << "after zero_grad: a.grad defined? " << std::boolalpha << a.grad().defined() << "\n";
}

// ---- 4. gradient checking -------------------------------------------------------------------

// The central difference of tanh at x = 0.5, in float32 and float64, against the exact derivative.
template <class T>
double central_difference_error(double eps) {
  const T x = T(0.5), h = static_cast<T>(eps);
  const double numeric = (static_cast<double>(std::tanh(x + h)) - static_cast<double>(std::tanh(x - h))) / (2 * eps);
  const double exact = 1 - std::tanh(0.5) * std::tanh(0.5);
  return std::abs(numeric - exact);
}

void why_float64() {
  section("why float64");
  for (double eps : {1e-2, 1e-4, 1e-6})
    std::printf("eps %.0e: error float32 %.1e, float64 %.1e\n", eps, central_difference_error<float>(eps),
                central_difference_error<double>(eps));
  claim(central_difference_error<double>(1e-6) < 1e-9, "float64 with eps 1e-6 is good to 1e-9");
  claim(central_difference_error<float>(1e-6) > 1e-3, "float32 with eps 1e-6 is useless");
}

void gradient_check() {
  section("gradcheck");
  Generator gen(0);
  const Tensor x = randn({4, 5}, gen, DType::Float64), w = randn({5, 3}, gen, DType::Float64);
  GradcheckResult ok = gradcheck([](const std::vector<Variable>& in) { return tanh(matmul(in[0], in[1])); }, {x, w});
  std::cout << ok.report << "\n";
  claim(ok.ok, "tanh(x w) passes");
}

// square(x) = x^2, whose derivative is 2x. This backward forgets the 2.
Variable broken_square(const Variable& x) {
  return record("broken_square", x.value() * x.value(), {x}, [](const Tensor& g, Grads& dx) {
    dx[0] = g * dx.input(0);  // should be g * 2 * x
  });
}

void broken_backward() {
  section("a broken backward, caught");
  Generator gen(1);
  GradcheckResult bad = gradcheck([](const std::vector<Variable>& in) { return broken_square(in[0]); },
                                  {randn({3}, gen, DType::Float64)});
  std::cout << bad.report << "\n";
  claim(!bad.ok, "the broken backward is caught");
  claim(std::abs(bad.analytic * 2 - bad.numeric) < 1e-6, "off by exactly the forgotten factor 2");
}

// ---- 7. matmul's backward, derived ----------------------------------------------------------

// The largest |a - b| over two matrices of one shape.
double max_difference(const Tensor& a, const Tensor& b) {
  double worst = 0;
  for (int64_t i = 0; i < a.shape()[0]; ++i)
    for (int64_t j = 0; j < a.shape()[1]; ++j) worst = std::max(worst, std::abs(a.at({i, j}) - b.at({i, j})));
  return worst;
}

void matmul_backward() {
  section("matmul's backward, derived and checked");
  Generator gen(2);
  const Tensor A = randn({2, 3}, gen, DType::Float64), B = randn({3, 4}, gen, DType::Float64);
  const Tensor dC = randn({2, 4}, gen, DType::Float64);  // the gradient arriving from above, dL/dC
  Variable a(A, true), b(B, true);
  matmul(a, b).backward(dC);
  const Tensor dA = matmul(dC, B.transpose(0, 1)), dB = matmul(A.transpose(0, 1), dC);
  std::printf("|engine - dC B^T| = %.1e   |engine - A^T dC| = %.1e\n", max_difference(a.grad(), dA),
              max_difference(b.grad(), dB));
  claim(max_difference(a.grad(), dA) < 1e-14 && max_difference(b.grad(), dB) < 1e-14, "dA = dC B^T, dB = A^T dC");

  // The derivation element by element, against the definition: L(A) = sum(dC * (A B)), nudge A[1, 2].
  auto L = [&](const Tensor& x) { return sum(mul(matmul(x, B), dC)).item(); };
  const double eps = 1e-6;
  Tensor plus = A.clone(), minus = A.clone();
  plus.data<double>()[1 * 3 + 2] += eps;
  minus.data<double>()[1 * 3 + 2] -= eps;
  const double numeric = (L(plus) - L(minus)) / (2 * eps);
  double formula = 0;  // dL/dA[1, 2] = sum over j of dC[1, j] * B[2, j]
  for (int64_t j = 0; j < 4; ++j) formula += dC.at({1, j}) * B.at({2, j});
  std::printf("dL/dA[1, 2]: formula %.9f, central difference %.9f\n", formula, numeric);
  claim(std::abs(formula - numeric) < 1e-8, "the formula agrees with the central difference");
}

}  // namespace

int main() {
  chain_rule();
  topological();
  why_not_recursion();
  accumulation();
  why_float64();
  gradient_check();
  broken_backward();
  matmul_backward();
  if (failures) std::cout << "\n" << failures << " claim(s) failed\n";
  return failures == 0 ? 0 : 1;
}
