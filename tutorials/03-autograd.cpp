// Chapter 3: autograd. The companion program of tutorials/03-autograd.md: every listing of the
// chapter is a piece of this file, and every output the chapter shows is what this program prints.
// It first builds a scalar reverse-mode engine (micrograd's size: a Value, +, *, tanh, a topological
// sort, backward) and draws the graph of a small expression after backward (03-graph.svg, in the
// current directory); then it runs the library's engine (autograd/) on the same ideas. It exits
// with a non-zero status if a claim the chapter makes does not hold.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "autograd/all.h"
#include "claims.h"

using namespace gradformer;
using namespace tutorial;

// ---- 0. a scalar engine on one screen -------------------------------------------------------

namespace micro {

struct Value;
using V = std::shared_ptr<Value>;

// One number of a computation: its value, dL/d(it) once backward has run, the values it was
// computed from, and how to pass its gradient on to them.
struct Value {
  double data = 0;
  double grad = 0;
  std::vector<V> parents;          // the values this one was computed from (none for an input)
  std::function<void()> backward;  // adds grad times the local derivative into each parent's grad
  std::string op, name;            // "+", "*", "tanh" (empty for an input); a label for printing
};

V value(double data, std::string name = "") {
  V v = std::make_shared<Value>();
  v->data = data, v->name = std::move(name), v->backward = [] {};
  return v;
}

V result(double data, std::vector<V> parents, std::string op) {
  V v = std::make_shared<Value>();
  v->data = data, v->parents = std::move(parents), v->op = std::move(op);
  return v;
}

V named(V v, std::string name) {
  v->name = std::move(name);
  return v;
}

// The closures hold plain pointers: `out` owns its closure, so capturing `out` itself (a V) would be
// a reference cycle and nothing would ever be freed. The parents are kept alive by out->parents.

// d(a+b)/da = 1, d(a+b)/db = 1
V operator+(const V& a, const V& b) {
  V out = result(a->data + b->data, {a, b}, "+");
  Value *o = out.get(), *x = a.get(), *y = b.get();
  out->backward = [o, x, y] {
    x->grad += o->grad;
    y->grad += o->grad;
  };
  return out;
}

// d(a*b)/da = b, d(a*b)/db = a
V operator*(const V& a, const V& b) {
  V out = result(a->data * b->data, {a, b}, "*");
  Value *o = out.get(), *x = a.get(), *y = b.get();
  out->backward = [o, x, y] {
    x->grad += y->data * o->grad;
    y->grad += x->data * o->grad;
  };
  return out;
}

// d tanh(a)/da = 1 - tanh(a)^2
V tanh(const V& a) {
  const double t = std::tanh(a->data);
  V out = result(t, {a}, "tanh");
  Value *o = out.get(), *x = a.get();
  out->backward = [o, x, t] { x->grad += (1 - t * t) * o->grad; };
  return out;
}

// Every value before the values it was computed from: a depth-first search lists a value after
// its parents (post-order), and the list reversed starts at the root.
std::vector<Value*> topological_order(Value* root) {
  std::vector<Value*> order;
  std::set<Value*> visited;
  std::function<void(Value*)> visit = [&](Value* v) {
    if (!visited.insert(v).second) return;
    for (const V& parent : v->parents) visit(parent.get());
    order.push_back(v);
  };
  visit(root);
  std::reverse(order.begin(), order.end());
  return order;
}

void backward(const V& root) {
  root->grad = 1;  // dL/dL
  for (Value* v : topological_order(root.get())) v->backward();
}

}  // namespace micro

namespace {

using micro::V;

// micrograd's example expression: L = (a b + c) f, its inner values named as in the chapter.
V expression(const std::vector<V>& in) {
  const V &a = in[0], &b = in[1], &c = in[2], &f = in[3];
  V e = named(a * b, "e");
  V d = named(e + c, "d");
  return named(d * f, "L");
}

// A neuron with two inputs: o = tanh(x1 w1 + x2 w2 + b).
V neuron(const std::vector<V>& in) {
  const V &x1 = in[0], &w1 = in[1], &x2 = in[2], &w2 = in[3], &b = in[4];
  return tanh(x1 * w1 + x2 * w2 + b);
}

using Expression = std::function<V(const std::vector<V>&)>;

// Runs backward once, then nudges each input by +-eps and compares its gradient with the central
// difference (f(x + eps) - f(x - eps)) / (2 eps). Returns the largest |difference|.
double check_gradients(const Expression& f, const std::vector<double>& at, const std::vector<std::string>& names) {
  std::vector<V> inputs;
  for (size_t i = 0; i < at.size(); ++i) inputs.push_back(micro::value(at[i], names[i]));
  const V out = f(inputs);
  micro::backward(out);
  const double eps = 1e-6;
  double worst = 0;
  for (size_t i = 0; i < at.size(); ++i) {
    auto f_nudged = [&](double delta) {
      std::vector<V> nudged;
      for (size_t j = 0; j < at.size(); ++j) nudged.push_back(micro::value(at[j] + (j == i ? delta : 0.0)));
      return f(nudged)->data;
    };
    const double numeric = (f_nudged(eps) - f_nudged(-eps)) / (2 * eps);
    std::printf("  d/d%-3s backward %10.6f   central difference %10.6f\n", names[i].c_str(), inputs[i]->grad, numeric);
    worst = std::max(worst, std::abs(inputs[i]->grad - numeric));
  }
  return worst;
}

// ---- 0b. the graph of an expression, drawn after backward (SVG) --------------------------------

// A number as micrograd's draw_dot shows it: four decimals, and no "-0.0000".
std::string four_decimals(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", std::abs(x) < 5e-5 ? 0.0 : x);
  return text;
}

// Where each value of the graph goes: columns by distance from the output (the output rightmost),
// rows so that each value sits at the mean height of the values it was computed from (the inputs in
// order of a depth-first search).
struct GraphLayout {
  std::map<micro::Value*, int> column;  // 0 for the root, +1 for each step towards the inputs
  std::map<micro::Value*, double> row;
  int columns = 0;
  double rows = 0;  // the inputs' rows are 0, 1, ..., rows - 1
};

GraphLayout lay_out(const V& root) {
  GraphLayout g;
  for (micro::Value* v : micro::topological_order(root.get()))
    for (const V& p : v->parents) g.column[p.get()] = std::max(g.column[p.get()], g.column[v] + 1);
  for (const auto& [v, c] : g.column) g.columns = std::max(g.columns, c + 1);
  std::function<void(micro::Value*)> place = [&](micro::Value* v) {
    if (g.row.count(v)) return;
    if (v->parents.empty()) {
      g.row[v] = g.rows++;
      return;
    }
    double sum = 0;
    for (const V& p : v->parents) place(p.get()), sum += g.row[p.get()];
    g.row[v] = sum / static_cast<double>(v->parents.size());
  };
  place(root.get());
  return g;
}

// The picture: a box per value (name | data over grad), a circle per op, arrows the way data flowed.
// Data and grad are stacked, not side by side, so that four columns fit a page at full size.
std::string graph_svg(const V& root, const std::string& title) {
  const std::vector<micro::Value*> order = micro::topological_order(root.get());
  GraphLayout g = lay_out(root);
  const int columns = g.columns;
  const double next_row = g.rows;

  const int name_w = 26, number_w = 108, box_w = name_w + number_w, box_h = 44, gap = 64, pitch = 66;
  const int left = 20, top = 60, op_r = 18;
  const int width = left * 2 + columns * box_w + (columns - 1) * gap;
  const int height = top + static_cast<int>(next_row - 1) * pitch + box_h + 56;
  auto box_x = [&](micro::Value* v) { return left + (columns - 1 - g.column[v]) * (box_w + gap); };
  auto box_y = [&](micro::Value* v) { return top + static_cast<int>(g.row[v] * pitch); };

  std::ostringstream svg;
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width << "' height='" << height << "' viewBox='0 0 "
      << width << " " << height << "' font-family='monospace' font-size='13'>\n";
  svg << "<defs><marker id='arrow' viewBox='0 0 10 10' refX='10' refY='5' markerWidth='7' markerHeight='7' "
         "orient='auto'><path d='M0,0 L10,5 L0,10 z' fill='#555'/></marker></defs>\n";
  svg << "<rect width='100%' height='100%' fill='#fff'/>\n";
  svg << "<text x='" << left << "' y='28' font-size='15' font-family='sans-serif'>" << title << "</text>\n";
  auto arrow = [&](double x1, double y1, double x2, double y2) {
    svg << "<line x1='" << x1 << "' y1='" << y1 << "' x2='" << x2 << "' y2='" << y2
        << "' stroke='#555' stroke-width='1.3' marker-end='url(#arrow)'/>\n";
  };
  for (micro::Value* v : order) {
    const int x = box_x(v), y = box_y(v);
    const double mid = y + box_h / 2.0;
    if (!v->parents.empty()) {  // the op that made v, and the arrows into and out of it
      const double cx = x - gap / 2.0;
      for (const V& p : v->parents) arrow(box_x(p.get()) + box_w, box_y(p.get()) + box_h / 2.0, cx - op_r, mid);
      arrow(cx + op_r, mid, x, mid);
      svg << "<circle cx='" << cx << "' cy='" << mid << "' r='" << op_r << "' fill='#fff4dd' stroke='#b08020'/>\n";
      svg << "<text x='" << cx << "' y='" << mid + 4.5 << "' text-anchor='middle'>" << v->op << "</text>\n";
    }
    const char* fill = v->parents.empty() ? "#dbe9f6" : "#ffffff";  // inputs filled, as to_dot does
    svg << "<rect x='" << x << "' y='" << y << "' width='" << box_w << "' height='" << box_h << "' fill='" << fill
        << "' stroke='#333'/>\n";
    svg << "<line x1='" << x + name_w << "' y1='" << y << "' x2='" << x + name_w << "' y2='" << y + box_h
        << "' stroke='#333'/>\n";  // name | numbers
    svg << "<line x1='" << x + name_w << "' y1='" << mid << "' x2='" << x + box_w << "' y2='" << mid
        << "' stroke='#bbb'/>\n";  // data over grad
    svg << "<text x='" << x + name_w / 2.0 << "' y='" << mid + 4.5 << "' text-anchor='middle' font-weight='bold'>"
        << v->name << "</text>\n";
    svg << "<text x='" << x + name_w + 5 << "' y='" << mid - 6 << "'>data " << four_decimals(v->data) << "</text>\n";
    svg << "<text x='" << x + name_w + 5 << "' y='" << mid + 16 << "' fill='#b02020'>grad " << four_decimals(v->grad)
        << "</text>\n";
  }
  svg << "<text x='" << left << "' y='" << height - 16 << "' font-family='sans-serif' font-size='12' fill='#444'>"
      << "data: the value computed forward.  grad (red): dL/d(value), computed by backward.  "
      << "Blue boxes are the inputs.</text>\n";
  svg << "</svg>\n";
  return svg.str();
}

// ---- 0c. the scalar engine at work ----------------------------------------------------------

// Returns dL/da, dL/db, dL/dc, dL/df, for the library's engine to match.
std::vector<double> scalar_expression() {
  section("a scalar engine: micrograd's expression");
  using micro::value;
  V a = value(2.0, "a"), b = value(-3.0, "b"), c = value(10.0, "c"), f = value(-2.0, "f");
  V L = expression({a, b, c, f});  // e = a * b, d = e + c, L = d * f
  micro::backward(L);
  for (micro::Value* v : micro::topological_order(L.get()))
    std::printf("%s: data %5.1f   grad %5.1f\n", v->name.c_str(), v->data, v->grad);
  std::ofstream(output_path("03-graph.svg")) << graph_svg(L, "L = (a * b + c) * f, after backward");
  claim(a->grad == f->data * b->data && b->grad == f->data * a->data, "dL/da = f b and dL/db = f a");
  claim(c->grad == f->data && f->grad == a->data * b->data + c->data, "dL/dc = f and dL/df = a b + c");

  std::cout << "checked against central differences:\n";
  const double worst = check_gradients(expression, {2.0, -3.0, 10.0, -2.0}, {"a", "b", "c", "f"});
  claim(worst < 1e-6, "the expression's gradients match the central differences");
  return {a->grad, b->grad, c->grad, f->grad};
}

void scalar_neuron() {
  section("a scalar engine: a neuron");
  // micrograd's neuron: b is chosen so that x1 w1 + x2 w2 + b = atanh(1/sqrt(2)), and o = 1/sqrt(2).
  const double x1 = 2.0, w1 = -3.0, x2 = 0.0, w2 = 1.0, b = 6.0 + std::atanh(1 / std::sqrt(2.0));
  const V o = neuron({micro::value(x1), micro::value(w1), micro::value(x2), micro::value(w2), micro::value(b)});
  std::printf("o = tanh(x1 w1 + x2 w2 + b) = %.6f\n", o->data);
  const double worst = check_gradients(neuron, {x1, w1, x2, w2, b}, {"x1", "w1", "x2", "w2", "b"});
  claim(worst < 1e-8, "the neuron's gradients match the central differences");
  claim(std::abs(o->data - 1 / std::sqrt(2.0)) < 1e-12, "o = 1/sqrt(2)");
}

// ---- 1. the chain rule on a small expression ------------------------------------------------

void chain_rule(const std::vector<double>& scalar_engine) {
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
  claim(a.grad().item() == scalar_engine[0] && b.grad().item() == scalar_engine[1] &&
            c.grad().item() == scalar_engine[2] && f.grad().item() == scalar_engine[3],
        "the library's gradients are the scalar engine's");
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

// ---- 3b. broadcasting: the gradient summed back to the input's shape ----------------------------

void broadcasting() {
  section("broadcasting's gradient, summed back");
  Variable x(zeros({2, 3}), true), bias(zeros({3}), true);                     // bias is added to each of x's 2 rows
  const Tensor g = from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {2, 3});  // dL/d(x + bias), [2, 3]
  (x + bias).backward(g);
  std::cout << "g         " << g << "\n";
  std::cout << "x.grad    " << x.grad() << "\n";
  std::cout << "bias.grad " << bias.grad() << "\n";
  bool column_sums = true;  // bias[j] was used in both rows, so its gradient is g[0, j] + g[1, j]
  for (int64_t j = 0; j < 3; ++j) column_sums = column_sums && bias.grad().at({j}) == g.at({0, j}) + g.at({1, j});
  claim(column_sums, "the bias's gradient is the column sums of g");
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
  const std::vector<double> scalar_gradients = scalar_expression();
  scalar_neuron();
  chain_rule(scalar_gradients);
  topological();
  why_not_recursion();
  accumulation();
  broadcasting();
  matmul_backward();
  why_float64();
  gradient_check();
  broken_backward();
  if (failures) std::cout << "\n" << failures << " claim(s) failed\n";
  return failures == 0 ? 0 : 1;
}
