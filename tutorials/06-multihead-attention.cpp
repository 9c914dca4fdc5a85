// Chapter 6: multi-head attention. The companion program of tutorials/06-multihead-attention.md:
// every listing of the chapter is a piece of this file, and every output the chapter shows is what
// this program prints. It exits non-zero if a claim does not hold.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "claims.h"
#include "nn/all.h"
#include "transformer/inspect/svg.h"
#include "transformer/model/multihead_attention.h"

using namespace gradformer;
using namespace tutorial;

namespace {

double max_abs_diff(const Tensor& a, const Tensor& b) {
  const Tensor d = a - b;
  return std::abs(max(maximum(d, -d)).item());
}

void names_and_shapes() {
  section("parameters");
  Generator gen(0);
  MultiheadAttention mha(512, 8, 0.1, gen, std::make_shared<Generator>(1));
  for (const auto& [name, p] : mha.named_parameters()) std::cout << name << " " << p.shape() << "\n";
  std::cout << "total " << mha.parameter_count() << " = 4 d^2 + 4 d with d = 512\n";
  claim(mha.parameter_count() == 4 * 512 * 512 + 4 * 512, "4 d^2 + 4 d parameters");
}

void heads_one_at_a_time() {
  section("one product for all heads equals h separate heads");
  Generator gen(1);
  const int64_t d = 16, h = 4, d_k = d / h;
  MultiheadAttention mha(d, h, 0.0, gen, std::make_shared<Generator>(2), DType::Float64);
  const Variable x(randn({2, 5, d}, gen, DType::Float64));
  const Variable W = mha.in_proj_weight, b = mha.in_proj_bias;
  // head_i = Attention(x W_i^Q, x W_i^K, x W_i^V): rows i*d_k .. (i+1)*d_k of each of W^Q, W^K, W^V
  std::vector<Variable> heads;
  for (int64_t i = 0; i < h; ++i) {
    auto project = [&](int64_t which) {  // 0: Q, 1: K, 2: V
      const int64_t first = which * d + i * d_k;
      return matmul(x, transpose(narrow(W, 0, first, d_k), 0, 1)) + narrow(b, 0, first, d_k);
    };
    heads.push_back(scaled_dot_product_attention(project(0), project(1), project(2)).output);  // [B, T, d_k]
  }
  const Variable by_hand = mha.out_proj->forward(concat(heads, -1));  // Concat(head_1..head_h) W^O
  const Attention fast = mha.forward(x, x, x);
  std::printf("max difference %.2g; weights %s\n", max_abs_diff(by_hand.value(), fast.output.value()),
              to_string(fast.weights.shape()).c_str());
  claim(max_abs_diff(by_hand.value(), fast.output.value()) < 1e-12, "the stacked projection computes every head");
  // The picture: sentence 1's weights, the h heads side by side ([T, h, T] -> [T, h*T])
  const Tensor side_by_side = fast.weights.select(0, 0).transpose(0, 1).reshape({5, h * 5});
  std::vector<std::string> queries, keys;
  for (int64_t t = 0; t < 5; ++t) queries.push_back(std::to_string(t));
  for (int64_t i = 0; i < h; ++i)
    for (int64_t t = 0; t < 5; ++t) keys.push_back(message("h", i + 1, " ", t));  // g++ 12 warns falsely on + here
  write_svg("06-heads.svg",
            heatmap_svg({"4 heads, one sentence of 5 positions (untrained)", queries, keys,
                         side_by_side.to_vector<double>(), "query", "head, key", std::make_pair(0.0, 1.0)}));
  claim(side_by_side.at({0, 0}) != side_by_side.at({0, 5}), "two heads weigh the same keys differently");
}

// The paper's table 1, evaluated: per layer, for n tokens of width d (kernel width k for convolutions)
void attention_against_recurrence() {
  section("attention against recurrence");
  const double d = 512, k = 3;
  std::printf("%5s  %-26s %-26s %-26s\n", "n", "self-attention", "recurrent", "dilated conv. (k 3)");
  std::printf("%5s  %-26s %-26s %-26s\n", "", "ops / seq. steps / path", "ops / seq. steps / path",
              "ops / seq. steps / path");
  for (double n : {10.0, 100.0, 1000.0}) {
    const double attention_ops = n * n * d, recurrent_ops = n * d * d, conv_ops = k * n * d * d;
    const double conv_path = std::ceil(std::log(n) / std::log(k));
    char a[40], r[40], c[40];
    std::snprintf(a, sizeof a, "%.1e / %d / %d", attention_ops, 1, 1);
    std::snprintf(r, sizeof r, "%.1e / %.0f / %.0f", recurrent_ops, n, n - 1);
    std::snprintf(c, sizeof c, "%.1e / %d / %.0f", conv_ops, 1, conv_path);
    std::printf("%5.0f  %-26s %-26s %-26s\n", n, a, r, c);
    if (n < d) claim(attention_ops < recurrent_ops, "for n < d self-attention does fewer operations than a recurrence");
  }
}

}  // namespace

int main() {
  names_and_shapes();
  heads_one_at_a_time();
  attention_against_recurrence();
  return failures == 0 ? 0 : 1;
}
