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
#include "transformer/inspect/diagram.h"
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
  write_svg(output_path("06-heads.svg"),
            heatmap_svg({"4 heads, one sentence of 5 positions (untrained)", queries, keys,
                         side_by_side.to_vector<double>(), "query", "head, key", std::make_pair(0.0, 1.0)}));
  claim(side_by_side.at({0, 0}) != side_by_side.at({0, 5}), "two heads weigh the same keys differently");
}

// ---- the picture of the split and the merge (06-split-heads.svg) ----------------------------------
// Drawn from the tensors themselves: x holds 0, 1, 2, ..., so the number in a cell says which element
// of x it is wherever it moves, and the cell's colour is the head that element belongs to.
constexpr const char* kHeadColours[] = {"#f4a6a6", "#a6c8f4", "#b5e3a1", "#f7d88c"};
constexpr double kCellW = 26, kCellH = 22;

void cell(Diagram& d, double x, double y, double element, int64_t d_model, int64_t d_k) {
  const auto index = static_cast<int64_t>(element);
  d.rect(x, y, kCellW, kCellH, kHeadColours[(index % d_model) / d_k], "#777");
  d.text(x + kCellW / 2, y + kCellH / 2 + 4, std::to_string(index), {.size = 11});
}

// A [1, T, d] tensor as T rows of d cells; `gap` between the heads' d_k columns (0: none).
void rows_of(Diagram& d, double x, double y, const Tensor& t, int64_t d_k, double gap) {
  const int64_t T = t.size(1), d_model = t.size(2);
  for (int64_t p = 0; p < T; ++p) {
    d.text(x - 6, y + kCellH * static_cast<double>(p) + 15, message("t=", p), {.size = 11, .anchor = "end"});
    for (int64_t j = 0; j < d_model; ++j)
      cell(d, x + kCellW * static_cast<double>(j) + gap * static_cast<double>(j / d_k),
           y + kCellH * static_cast<double>(p), t.at({0, p, j}), d_model, d_k);
  }
}

void draw_split_and_merge() {
  const int64_t T = 5, d = 16, h = 4, d_k = d / h;
  const Tensor x = arange(T * d).reshape({1, T, d});  // [B, T, d]
  const Tensor viewed = x.view({1, T, h, d_k});       // [B, T, h, d_k]: the same memory
  const Tensor split = viewed.transpose(1, 2);        // [B, h, T, d_k]: two strides swapped
  // Attention's output is a new [B, h, T, d_k] tensor, laid out head by head: here, the split's own numbers
  const Tensor heads = split.contiguous();
  const Tensor merged = heads.transpose(1, 2).reshape({1, T, d});  // [B, T, d]: a copy, the concatenation
  claim(split.shares_storage_with(x) && !split.is_contiguous(), "the split is a view: no element moved");
  claim(!merged.shares_storage_with(heads) && max_abs_diff(merged, x) == 0, "the merge copies every element home");

  Diagram p(1000, 640);
  p.text(500, 28, "Splitting d = 16 into h = 4 heads of d_k = 4, and back (one sentence of T = 5 positions)",
         {.size = 16});
  const auto shape = [](const char* what, const Tensor& t) { return message(what, " ", to_string(t.shape())); };
  p.text(50, 64, shape("x: [B, T, d] =", x), {.anchor = "start", .bold = true});
  rows_of(p, 50, 76, x, d_k, 0);
  p.text(530, 64, shape("view: [B, T, h, d_k] =", viewed), {.anchor = "start", .bold = true});
  rows_of(p, 530, 76, viewed.reshape({1, T, d}), d_k, 10);  // drawn from the view's own memory
  p.arrow({{472, 131}, {500, 131}});
  p.text(530, 206, "the same memory: each position's row cut into h pieces", {.size = 12, .anchor = "start"});
  p.text(50, 262, shape("transpose(1, 2): [B, h, T, d_k] =", split), {.anchor = "start", .bold = true});
  for (int64_t i = 0; i < h; ++i) {
    const double left = 50 + 160 * static_cast<double>(i);
    p.text(left + 2 * kCellW, 290, message("head ", i + 1), {.size = 12});
    for (int64_t t = 0; t < T; ++t)
      for (int64_t c = 0; c < d_k; ++c) {
        if (c == 0)
          p.text(left - 6, 313 + kCellH * static_cast<double>(t), message("t=", t), {.size = 11, .anchor = "end"});
        cell(p, left + kCellW * static_cast<double>(c), 298 + kCellH * static_cast<double>(t), split.at({0, i, t, c}),
             d, d_k);
      }
  }
  p.arrow({{525, 214}, {350, 254}});
  p.text(700, 330, "no copy: the strides are swapped, so", {.size = 12, .anchor = "start"});
  p.text(700, 348, "each head is one [T, d_k] block, and", {.size = 12, .anchor = "start"});
  p.text(700, 366, "attention runs on all h blocks at once", {.size = 12, .anchor = "start"});
  p.text(50, 462, shape("after attention: transpose(1, 2), reshape: [B, T, d] =", merged),
         {.anchor = "start", .bold = true});
  rows_of(p, 50, 474, merged, d_k, 0);  // the same order as x: every element is home
  p.arrow({{280, 412}, {280, 450}});
  p.text(540, 520, "reshape copies the heads back side by side:", {.size = 12, .anchor = "start"});
  p.text(540, 538, "that copy is Concat(head_1, ..., head_h)", {.size = 12, .anchor = "start"});
  p.text(500, 620, "(The attention itself is left out: the numbers show where each element goes.)",
         {.size = 12, .colour = "#555"});
  write_svg(output_path("06-split-heads.svg"), p.svg());
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
  draw_split_and_merge();
  attention_against_recurrence();
  return failures == 0 ? 0 : 1;
}
