// Chapter 8: the encoder. The companion program of tutorials/08-encoder.md: every listing of the
// chapter is a piece of this file, and every output the chapter shows is what this program prints.
// It exits non-zero if a claim does not hold.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <vector>

#include "claims.h"
#include "nn/all.h"
#include "transformer/model/encoder.h"
#include "transformer/model/feed_forward.h"

using namespace gradformer;
using namespace tutorial;

namespace {

double rms(const Tensor& t) { return std::sqrt(mean(t * t).item()); }

// One post-LN layer, with its two residual connections or without them
Variable block(const EncoderLayer& layer, const Variable& x, bool residual) {
  const Variable a = layer.self_attn->forward(x, x, x).output;
  const Variable h = layer.norm1->forward(residual ? x + a : a);
  const Variable f = feed_forward(h, *layer.linear1, *layer.linear2, *layer.dropout);
  return layer.norm2->forward(residual ? h + f : f);
}

// The gradient that reaches each layer of a 12-layer stack, with and without the residual connections
void without_residuals() {
  section("without the residual connections");
  const int64_t depth = 12;
  Generator data(2), gen(0);
  const Tensor x0 = randn({4, 16, 64}, data, DType::Float64), upstream = randn({4, 16, 64}, data, DType::Float64);
  Encoder encoder({64, 4, 256, 0.0, NormPlacement::Post, DType::Float64}, depth, gen, std::make_shared<Generator>(0));
  double first_over_last[2] = {0, 0}, input_grad[2] = {0, 0};
  for (bool residual : {true, false}) {
    encoder.zero_grad();
    const Variable x(x0, /*requires_grad=*/true);
    Variable h = x;
    for (const auto& layer : *encoder.layers) h = block(*layer, h, residual);
    h.backward(upstream);
    input_grad[residual ? 0 : 1] = std::sqrt(sum(x.grad() * x.grad()).item());
    std::printf("%-9s |dL/d linear1.weight|, layer 1..12:", residual ? "residual" : "none");
    std::vector<double> g;
    for (const auto& layer : *encoder.layers) {
      g.push_back(std::sqrt(sum(layer->linear1->weight.grad() * layer->linear1->weight.grad()).item()));
      std::printf(" %.3g", g.back());
    }
    first_over_last[residual ? 0 : 1] = g.front() / g.back();
    std::printf("\n");
  }
  std::printf("layer 1 / layer 12: with residuals %.3g, without %.3g\n", first_over_last[0], first_over_last[1]);
  std::printf("|dL/d input|: with residuals %.3g, without %.3g\n", input_grad[0], input_grad[1]);
  claim(std::abs(std::log(first_over_last[1])) > 3 * std::abs(std::log(first_over_last[0])),
        "without residuals the gradient changes far more between the first and the last layer");
}

}  // namespace

int main() {
  without_residuals();
  section("post-LN and pre-LN");
  const int64_t layers = 6;
  Generator data(1);
  const Tensor x0 = randn({4, 16, 64}, data, DType::Float64);
  const Tensor upstream = randn({4, 16, 64}, data, DType::Float64);
  double growth[2] = {0, 0}, spread[2] = {0, 0};
  bool increasing = true;
  for (NormPlacement placement : {NormPlacement::Post, NormPlacement::Pre}) {
    const int p = placement == NormPlacement::Pre;
    Generator gen(0);
    Encoder encoder({64, 4, 256, 0.0, placement, DType::Float64}, layers, gen, std::make_shared<Generator>(0));
    Variable h(x0);
    std::printf("%s-LN  rms of x after each layer:", p ? "pre " : "post");
    std::vector<double> sizes;
    for (const auto& layer : *encoder.layers) {
      h = layer->forward(h);
      sizes.push_back(rms(h.value()));
      std::printf(" %.2f", sizes.back());
    }
    growth[p] = sizes.back() / sizes.front();
    for (size_t i = 1; i < sizes.size(); ++i) increasing = increasing && (!p || sizes[i] > sizes[i - 1]);
    Variable out = encoder.norm ? encoder.norm->forward(h) : h;
    out.backward(upstream);
    std::printf("\n%s-LN  |dL/d linear2.weight| per layer:  ", p ? "pre " : "post");
    double lo = 1e300, hi = 0;
    for (const auto& layer : *encoder.layers) {
      const double g = std::sqrt(sum(layer->linear2->weight.grad() * layer->linear2->weight.grad()).item());
      lo = std::min(lo, g), hi = std::max(hi, g);
      std::printf(" %.2f", g);
    }
    spread[p] = hi / lo;
    std::printf("\n");
  }
  std::printf("growth of x over 6 layers: post %.2f, pre %.2f; gradient max/min over layers: post %.2f, pre %.2f\n",
              growth[0], growth[1], spread[0], spread[1]);
  claim(std::abs(growth[0] - 1) < 0.05, "post-LN keeps the residual stream at unit size");
  claim(increasing && growth[1] > 1.1, "pre-LN's residual stream grows with depth (hence the final norm)");
  return failures == 0 ? 0 : 1;
}
