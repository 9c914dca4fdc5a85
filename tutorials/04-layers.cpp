// Chapter 4: layers and training. The companion program of tutorials/04-layers.md: every listing of
// the chapter is a piece of this file, and every output the chapter shows is what this program
// prints. It exits with a non-zero status if a claim the chapter makes does not hold.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "claims.h"
#include "nn/all.h"

using namespace gradformer;
using namespace tutorial;

namespace {

// ---- 1. Linear and activations --------------------------------------------------------------

void linear_and_relu() {
  section("Linear and ReLU");
  Generator gen(0);
  Linear layer(3, 2, gen);  // 3 inputs, 2 outputs
  std::cout << "weight " << layer.weight.shape() << ", bias " << layer.bias.shape() << "\n";
  Tensor w = layer.weight.value(), b = layer.bias.value();
  w.copy_(tensor({1, 0, -1, 2, 1, 0}, {2, 3}));
  b.copy_(tensor({0.5, -4}, {2}));
  Variable x(tensor({1, 2, 3, 4, 5, 6}, {2, 3}));  // a batch of two inputs
  Variable y = layer.forward(x);                   // y = x W^T + b
  std::cout << "y = " << y.value() << "\n";
  ReLU relu_layer;
  std::cout << "relu(y) = " << relu_layer.forward(y).value() << "\n";
  // row 0: [1 - 3 + 0.5, 2 + 2 - 4] = [-1.5, 0]
  claim(y.value().at({0, 0}) == -1.5 && y.value().at({1, 1}) == 9.0, "y = x W^T + b");
  claim(relu_layer.forward(y).value().at({0, 0}) == 0.0, "relu clips negatives to 0");
}

// ---- 2. softmax, cross-entropy and label smoothing ---------------------------------------------

void draw_label_smoothing(int64_t C, int64_t target, double eps, const std::string& path);  // below

void softmax_and_cross_entropy() {
  section("softmax and cross-entropy");
  Variable logits(tensor({2.0, 1.0, 0.1}, {1, 3}));
  Tensor target = from_vector(std::vector<int64_t>{0}, {1});
  Variable p = softmax(logits);
  Variable loss = cross_entropy(logits, target);
  std::cout << "softmax = " << p.value() << "\n";
  std::cout << "cross_entropy = " << loss.item() << ",  -log p[target] = " << -std::log(p.value().at({0, 0})) << "\n";
  claim(std::abs(loss.item() + std::log(p.value().at({0, 0}))) < 1e-6, "cross-entropy is -log softmax[target]");

  std::cout << "confidence  plain CE   smoothed CE (eps 0.1)\n";
  double best_smoothed = 1e9, best_margin = 0;
  for (double margin : {1.0, 2.0, 4.0, 6.0, 8.0, 12.0}) {
    Variable confident(tensor({margin, 0.0, 0.0}, {1, 3}));  // the target's logit leads by `margin`
    const double plain = cross_entropy(confident, target).item();
    const double smoothed = cross_entropy(confident, target, {.label_smoothing = 0.1}).item();
    std::printf("%10.0f  %8.5f   %8.5f\n", margin, plain, smoothed);
    if (smoothed < best_smoothed) best_smoothed = smoothed, best_margin = margin;
  }
  claim(best_margin > 1.0 && best_margin < 12.0, "with label smoothing, over-confidence costs loss");
  const double q_target = 1 - 0.1 + 0.1 / 3, q_other = 0.1 / 3, best = std::log(q_target / q_other);
  Variable at_best(tensor({best, 0.0, 0.0}, {1, 3}));
  const Tensor p_best = softmax(at_best).value();
  const double ce_best = cross_entropy(at_best, target, {.label_smoothing = 0.1}).item();
  std::printf("smallest smoothed loss at m = ln(%.0f) = %.4f: softmax (%.4f, %.4f, %.4f), smoothed CE %.5f\n",
              q_target / q_other, best, p_best.at({0, 0}), p_best.at({0, 1}), p_best.at({0, 2}), ce_best);
  for (double nearby : {best - 0.01, best + 0.01}) {
    Variable other(tensor({nearby, 0.0, 0.0}, {1, 3}));
    claim(cross_entropy(other, target, {.label_smoothing = 0.1}).item() > ce_best,
          "the smoothed loss is smallest there");
  }
  draw_label_smoothing(/*C=*/5, /*target=*/1, /*eps=*/0.1, output_path("04-label-smoothing.svg"));
}

// ---- 3. LayerNorm, Dropout, Embedding -----------------------------------------------------------

void layer_norm_dropout_embedding() {
  section("LayerNorm");
  LayerNorm norm(4);
  Variable h(tensor({1, 2, 3, 4, 10, 20, 30, 40}, {2, 4}));
  Tensor out = norm.forward(h).value();
  std::cout << "LayerNorm(h) = " << out << "\n";
  std::cout << "row means " << mean(out, {1}) << ", row variances " << var(out, {1}, false, 0) << "\n";
  claim(std::abs(out.at({0, 0}) - out.at({1, 0})) < 1e-5, "LayerNorm removes the scale of a row");

  section("Dropout");
  auto gen = std::make_shared<Generator>(1);
  Dropout drop(0.25, gen);
  Variable ones_in(ones({10000}));
  Tensor dropped = drop.forward(ones_in).value();
  const double zero_fraction = 1.0 - sum(ne(dropped, zeros({1})).to(DType::Float32)).item() / 10000.0;
  std::cout << "training: zeroed " << zero_fraction << " of the elements, mean " << mean(dropped).item() << "\n";
  drop.eval();
  std::cout << "eval: mean " << mean(drop.forward(ones_in).value()).item() << "\n";
  claim(std::abs(zero_fraction - 0.25) < 0.02, "dropout zeroes about p of the elements");
  claim(std::abs(mean(dropped).item() - 1.0) < 0.03, "dropout keeps the mean (survivors scaled by 1/(1-p))");

  section("Embedding");
  Generator g(2);
  Embedding embed(5, 3, g);  // 5 tokens, 3 numbers each
  Tensor ids = from_vector(std::vector<int64_t>{4, 0, 4}, {3});
  Variable vectors = embed.forward(ids);  // [3] ids -> [3, 3]
  std::cout << "ids [4, 0, 4] -> " << vectors.value() << "\n";
  claim(vectors.value().at({0, 1}) == embed.weight.value().at({4, 1}), "row i of the weight is token i's vector");
}

// ---- 4. a first model: a two-layer MLP on a spiral ----------------------------------------------

// Three interleaved spiral arms in the plane (the classic toy of cs231n): not separable by a line.
void make_spiral(Tensor& points, Tensor& labels) {
  const int64_t per_class = 100, classes = 3;
  Generator gen(3);
  std::vector<float> xy;
  std::vector<int64_t> y;
  for (int64_t c = 0; c < classes; ++c)
    for (int64_t i = 0; i < per_class; ++i) {
      const double r = static_cast<double>(i) / per_class;
      const double theta = 4.0 * static_cast<double>(c) + 4.0 * r + 0.2 * gen.normal();
      xy.push_back(static_cast<float>(r * std::sin(theta)));
      xy.push_back(static_cast<float>(r * std::cos(theta)));
      y.push_back(c);
    }
  points = from_vector(xy, {per_class * classes, 2});
  labels = from_vector(y, {per_class * classes});
}

class MLP : public Module {
 public:
  MLP(int64_t in, int64_t hidden, int64_t out, Generator& gen) {
    fc1 = register_module("fc1", std::make_shared<Linear>(in, hidden, gen));
    fc2 = register_module("fc2", std::make_shared<Linear>(hidden, out, gen));
  }
  // x: [N, in] -> logits: [N, out]
  Variable forward(const Variable& x) const { return fc2->forward(relu(fc1->forward(x))); }
  std::shared_ptr<Linear> fc1, fc2;
};

// ---- figures: plain SVG written by hand, one element per line ----------------------------------

const char* const class_colour[] = {"#1f77b4", "#d62728", "#2ca02c"};   // points
const char* const region_colour[] = {"#d6e6f4", "#f6d5d5", "#d7eed7"};  // the regions they are classified into

// The spiral and the regions the trained model gives each class: the model is evaluated on a
// 120 x 120 grid over [-1.2, 1.2]^2, and each run of same-class cells along a row is one rectangle.
void draw_decision_boundary(const MLP& model, const Tensor& points, const Tensor& labels, const std::string& path) {
  const int cells = 120, size = 480;
  const double lo = -1.2, hi = 1.2, cell = (hi - lo) / cells;
  std::vector<float> grid;
  for (int row = 0; row < cells; ++row)
    for (int col = 0; col < cells; ++col) {
      grid.push_back(static_cast<float>(lo + (col + 0.5) * cell));  // x to the right
      grid.push_back(static_cast<float>(hi - (row + 0.5) * cell));  // y upwards
    }
  Tensor predicted;
  {
    NoGradGuard no_grad;
    predicted = argmax(model.forward(Variable(from_vector(grid, {cells * cells, 2}))).value(), 1);
  }
  const int64_t* cls = predicted.data<int64_t>();
  const double px = static_cast<double>(size) / cells;
  std::ofstream svg(path);
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << size << "' height='" << size << "' viewBox='0 0 " << size
      << " " << size << "'>\n<rect width='" << size << "' height='" << size << "' fill='#fff'/>\n";
  char buf[160];
  for (int row = 0; row < cells; ++row)
    for (int col = 0; col < cells;) {
      int end = col;
      while (end < cells && cls[row * cells + end] == cls[row * cells + col]) ++end;
      std::snprintf(buf, sizeof buf, "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='%s'/>\n", col * px,
                    row * px, (end - col) * px, px, region_colour[cls[row * cells + col]]);
      svg << buf;
      col = end;
    }
  const float* xy = points.data<float>();
  const int64_t* y = labels.data<int64_t>();
  for (int64_t i = 0; i < labels.numel(); ++i) {
    std::snprintf(buf, sizeof buf, "<circle cx='%.1f' cy='%.1f' r='3.2' fill='%s' stroke='#fff' stroke-width='0.6'/>\n",
                  (xy[2 * i] - lo) / (hi - lo) * size, (hi - xy[2 * i + 1]) / (hi - lo) * size, class_colour[y[i]]);
    svg << buf;
  }
  svg << "</svg>\n";
}

// The one-hot target and the label-smoothed one, q = (1 - eps) onehot + eps / C, as bars.
void draw_label_smoothing(int64_t C, int64_t target, double eps, const std::string& path) {
  const int width = 560, height = 260, left = 50, base = 210, bar_height = 170;
  const double slot = static_cast<double>(width - left - 20) / static_cast<double>(C);
  std::ofstream svg(path);
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width << "' height='" << height << "' viewBox='0 0 "
      << width << " " << height << "' font-family='Helvetica, Arial, sans-serif' font-size='12'>\n<rect width='"
      << width << "' height='" << height << "' fill='#fff'/>\n";
  char buf[240];
  for (double tick : {0.0, 0.5, 1.0}) {
    const double ty = base - tick * bar_height;
    std::snprintf(buf, sizeof buf,
                  "<line x1='%d' y1='%.1f' x2='%d' y2='%.1f' stroke='#ddd'/>\n<text x='%d' y='%.1f' "
                  "text-anchor='end'>%.1f</text>\n",
                  left, ty, width - 20, ty, left - 6, ty + 4, tick);
    svg << buf;
  }
  for (int64_t c = 0; c < C; ++c) {
    const double one_hot = c == target ? 1.0 : 0.0, q = (1 - eps) * one_hot + eps / static_cast<double>(C);
    const double x = left + static_cast<double>(c) * slot;
    std::snprintf(
        buf, sizeof buf,
        "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='none' stroke='#555' stroke-dasharray='4 3'/>\n"
        "<rect x='%.1f' y='%.1f' width='%.1f' height='%.1f' fill='#1f77b4'/>\n",
        x + slot * 0.15, base - one_hot * bar_height, slot * 0.7, one_hot * bar_height, x + slot * 0.25,
        base - q * bar_height, slot * 0.5, q * bar_height);
    svg << buf;
    std::snprintf(buf, sizeof buf,
                  "<text x='%.1f' y='%.1f' text-anchor='middle'>%.4f</text>\n<text x='%.1f' y='%d' "
                  "text-anchor='middle'>class %lld</text>\n",
                  x + slot / 2, base - q * bar_height - 6, q, x + slot / 2, base + 18, static_cast<long long>(c));
    svg << buf;
  }
  std::snprintf(
      buf, sizeof buf,
      "<text x='%d' y='20'>dashed: one-hot target (class %lld); blue: smoothed, eps = %.1f, C = %lld</text>\n", left,
      static_cast<long long>(target), eps, static_cast<long long>(C));
  svg << buf << "</svg>\n";
}

double accuracy(const MLP& model, const Tensor& points, const Tensor& labels) {
  NoGradGuard no_grad;
  const Tensor predicted = argmax(model.forward(points).value(), 1);
  return sum(eq(predicted, labels).to(DType::Float32)).item() / static_cast<double>(labels.numel());
}

// Trains a fresh, identically initialised model with the given optimizer; returns the final loss.
double train(const std::string& name, const Tensor& points, const Tensor& labels) {
  Generator gen(4);
  MLP model(2, 64, 3, gen);
  std::unique_ptr<Optimizer> optimizer;
  if (name == "SGD") optimizer = std::make_unique<SGD>(model.parameters(), SGDOptions{.lr = 0.1});
  if (name == "SGD+m") optimizer = std::make_unique<SGD>(model.parameters(), SGDOptions{.lr = 0.1, .momentum = 0.9});
  if (name == "Adam") optimizer = std::make_unique<Adam>(model.parameters(), AdamOptions{.lr = 0.01});
  double loss_value = 0;
  for (int step = 1; step <= 400; ++step) {
    optimizer->zero_grad();  // gradients accumulate: start from zero
    Variable loss = cross_entropy(model.forward(points), labels);
    loss.backward();    // d loss / d every parameter
    optimizer->step();  // move each parameter against its gradient
    loss_value = loss.item();
    if (step == 1 || step % 100 == 0) std::printf("%-5s step %3d  loss %.4f\n", name.c_str(), step, loss_value);
  }
  std::printf("%-5s accuracy %.1f%%\n", name.c_str(), 100 * accuracy(model, points, labels));
  if (name == "Adam") draw_decision_boundary(model, points, labels, output_path("04-spiral.svg"));
  return loss_value;
}

void first_model() {
  section("a first model: a two-layer MLP on a spiral");
  Tensor points, labels;
  make_spiral(points, labels);
  const double sgd_loss = train("SGD", points, labels);
  const double momentum_loss = train("SGD+m", points, labels);
  const double adam_loss = train("Adam", points, labels);
  claim(adam_loss < 0.1, "Adam fits the spiral");
  claim(momentum_loss < sgd_loss, "momentum helps SGD");
  claim(adam_loss < sgd_loss / 4, "Adam reaches a much lower loss than plain SGD in the same steps");
}

// ---- 5. checkpoints ------------------------------------------------------------------------------

void checkpoint() {
  section("checkpoints");
  Generator gen(5);
  MLP model(2, 8, 3, gen), restored(2, 8, 3, gen);  // different random weights
  for (const auto& [name, p] : model.named_parameters()) std::cout << name << " " << p.shape() << "\n";
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("gradformer-04-layers-" + std::to_string(std::random_device{}()) + ".safetensors");
  save_safetensors(path, model.state_dict(), {{"hidden", "8"}});
  SafetensorsFile file = load_safetensors(path);
  restored.load_state_dict(file.tensors);
  std::cout << "metadata hidden = " << file.metadata.at("hidden") << ", " << std::filesystem::file_size(path)
            << " bytes\n";
  Tensor x = tensor({0.5, -0.25}, {1, 2});
  claim(model.forward(x).value().to_vector<float>() == restored.forward(x).value().to_vector<float>(),
        "the restored model computes the same outputs");
  std::filesystem::remove(path);
}

// ---- 6. the hand-written backward passes, derived and checked --------------------------------------

// The largest |a - b| over two tensors of one shape.
double max_difference(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = a.to(DType::Float64).to_vector<double>(), y = b.to(DType::Float64).to_vector<double>();
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
  return worst;
}

// dL/dx[row, col] of L(x) = sum(f(x) * g), by central difference (float64, eps 1e-6).
template <class F>
double central_difference(F f, const Tensor& x, const Tensor& g, int64_t row, int64_t col) {
  const double eps = 1e-6;
  Tensor plus = x.clone(), minus = x.clone();
  plus.data<double>()[row * x.size(-1) + col] += eps;
  minus.data<double>()[row * x.size(-1) + col] -= eps;
  return (sum(f(plus) * g).item() - sum(f(minus) * g).item()) / (2 * eps);
}

Tensor one_hot(const Tensor& target, int64_t classes) {
  Tensor q = zeros({target.numel(), classes}, DType::Float64);
  for (int64_t n = 0; n < target.numel(); ++n) q.data<double>()[n * classes + target.data<int64_t>()[n]] = 1;
  return q;
}

void softmax_backward_derived() {
  section("softmax's backward, derived");
  Generator gen(6);
  const Tensor S = randn({2, 5}, gen, DType::Float64), dP = randn({2, 5}, gen, DType::Float64);
  Variable s(S, true);
  softmax(s).backward(dP);
  const Tensor P = softmax(Variable(S)).value();
  // dS = P * (dP - rowsum(dP * P)): the Jacobian applied to dP, without ever forming the Jacobian
  const Tensor dS = P * (dP - sum(dP * P, {1}, /*keepdim=*/true));
  const double numeric = central_difference([](const Tensor& x) { return softmax(Variable(x)).value(); }, S, dP, 1, 3);
  std::printf("|engine - formula| = %.1e, dS[1, 3]: formula %.9f, central difference %.9f\n",
              max_difference(s.grad(), dS), dS.at({1, 3}), numeric);
  claim(max_difference(s.grad(), dS) < 1e-14, "softmax's backward is P * (dP - rowsum(dP * P))");
  claim(std::abs(dS.at({1, 3}) - numeric) < 1e-8, "and agrees with the central difference");
}

void cross_entropy_backward_derived() {
  section("cross-entropy's gradient, derived");
  Generator gen(7);
  const int64_t N = 4, C = 5;
  const Tensor Z = randn({N, C}, gen, DType::Float64);
  const Tensor target = from_vector(std::vector<int64_t>{3, 0, 4, 1}, {N});
  const Tensor P = softmax(Variable(Z)).value();
  for (double eps : {0.0, 0.1}) {
    Variable z(Z, true);
    cross_entropy(z, target, {.label_smoothing = eps}).backward();
    const Tensor q = one_hot(target, C) * (1 - eps) + eps / static_cast<double>(C);  // the (smoothed) target
    const Tensor dZ = (P - q) / static_cast<double>(N);                              // the loss is the mean over N rows
    std::printf("label smoothing %.1f: |engine - (softmax - q) / N| = %.1e\n", eps, max_difference(z.grad(), dZ));
    claim(max_difference(z.grad(), dZ) < 1e-15, "cross-entropy's gradient is (softmax - target) / N");
  }
}

void layer_norm_backward_derived() {
  section("LayerNorm's backward, derived");
  Generator gen(8);
  const int64_t D = 6;
  const Tensor X = randn({3, D}, gen, DType::Float64), W = randn({D}, gen, DType::Float64),
               Bias = randn({D}, gen, DType::Float64), G = randn({3, D}, gen, DType::Float64);
  Variable x(X, true), w(W, true), b(Bias, true);
  layer_norm(x, w, b, 1e-5).backward(G);
  const Tensor mu = mean(X, {1}, true), rstd = rsqrt(var(X, {1}, true, 0) + 1e-5);
  const Tensor xhat = (X - mu) * rstd, gx = G * W;  // gx: the gradient reaching xhat
  const Tensor dX = rstd * (gx - mean(gx, {1}, true) - xhat * mean(gx * xhat, {1}, true));
  const Tensor dW = sum(G * xhat, {0}), dB = sum(G, {0});
  const double numeric = central_difference(
      [&](const Tensor& v) { return layer_norm(Variable(v), Variable(W), Variable(Bias), 1e-5).value(); }, X, G, 2, 4);
  std::printf("|engine - formula|: dx %.1e, dw %.1e, db %.1e; dx[2, 4]: formula %.9f, central difference %.9f\n",
              max_difference(x.grad(), dX), max_difference(w.grad(), dW), max_difference(b.grad(), dB), dX.at({2, 4}),
              numeric);
  claim(max_difference(x.grad(), dX) < 1e-12 && max_difference(w.grad(), dW) < 1e-12 &&
            max_difference(b.grad(), dB) < 1e-12,
        "LayerNorm's backward is the derived formula");
  claim(std::abs(dX.at({2, 4}) - numeric) < 1e-7, "and agrees with the central difference");
}

}  // namespace

int main() {
  const AdamOptions defaults;
  std::printf("AdamOptions{}: lr %g, beta1 %g, beta2 %g, eps %g\n", defaults.lr, defaults.beta1, defaults.beta2,
              defaults.eps);
  claim(defaults.beta1 == 0.9 && defaults.beta2 == 0.98 && defaults.eps == 1e-9, "Adam's defaults are the paper's");
  linear_and_relu();
  softmax_and_cross_entropy();
  layer_norm_dropout_embedding();
  softmax_backward_derived();
  cross_entropy_backward_derived();
  layer_norm_backward_derived();
  first_model();
  checkpoint();
  std::cout << "\n" << (failures == 0 ? "all claims hold" : "SOME CLAIMS FAILED") << "\n";
  return failures == 0 ? 0 : 1;
}
