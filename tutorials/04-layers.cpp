// Chapter 4: layers and training. The companion program of tutorials/04-layers.md: every listing of
// the chapter is a piece of this file, and every output the chapter shows is what this program
// prints. It exits with a non-zero status if a claim the chapter makes does not hold.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "nn/all.h"
#include "claims.h"

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
  w.copy_(tensor({1, 0, -1,
                  2, 1, 0}, {2, 3}));
  b.copy_(tensor({0.5, -4}, {2}));
  Variable x(tensor({1, 2, 3,
                     4, 5, 6}, {2, 3}));  // a batch of two inputs
  Variable y = layer.forward(x);        // y = x W^T + b
  std::cout << "y = " << y.value() << "\n";
  ReLU relu_layer;
  std::cout << "relu(y) = " << relu_layer.forward(y).value() << "\n";
  // row 0: [1 - 3 + 0.5, 2 + 2 - 4] = [-1.5, 0]
  claim(y.value().at({0, 0}) == -1.5 && y.value().at({1, 1}) == 9.0, "y = x W^T + b");
  claim(relu_layer.forward(y).value().at({0, 0}) == 0.0, "relu clips negatives to 0");
}

// ---- 2. softmax, cross-entropy and label smoothing ---------------------------------------------

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
}

// ---- 3. LayerNorm, Dropout, Embedding -----------------------------------------------------------

void layer_norm_dropout_embedding() {
  section("LayerNorm");
  LayerNorm norm(4);
  Variable h(tensor({1, 2, 3, 4,
                     10, 20, 30, 40}, {2, 4}));
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
    optimizer->zero_grad();                                    // gradients accumulate: start from zero
    Variable loss = cross_entropy(model.forward(points), labels);
    loss.backward();                                           // d loss / d every parameter
    optimizer->step();                                         // move each parameter against its gradient
    loss_value = loss.item();
    if (step == 1 || step % 100 == 0) std::printf("%-5s step %3d  loss %.4f\n", name.c_str(), step, loss_value);
  }
  std::printf("%-5s accuracy %.1f%%\n", name.c_str(), 100 * accuracy(model, points, labels));
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
  const std::filesystem::path path = std::filesystem::temp_directory_path() / ("gradformer-04-layers-" + std::to_string(std::random_device{}()) + ".safetensors");
  save_safetensors(path, model.state_dict(), {{"hidden", "8"}});
  SafetensorsFile file = load_safetensors(path);
  restored.load_state_dict(file.tensors);
  std::cout << "metadata hidden = " << file.metadata.at("hidden") << ", " << std::filesystem::file_size(path) << " bytes\n";
  Tensor x = tensor({0.5, -0.25}, {1, 2});
  claim(model.forward(x).value().to_vector<float>() == restored.forward(x).value().to_vector<float>(),
        "the restored model computes the same outputs");
  std::filesystem::remove(path);
}

}  // namespace

int main() {
  linear_and_relu();
  softmax_and_cross_entropy();
  layer_norm_dropout_embedding();
  first_model();
  checkpoint();
  std::cout << "\n" << (failures == 0 ? "all claims hold" : "SOME CLAIMS FAILED") << "\n";
  return failures == 0 ? 0 : 1;
}
