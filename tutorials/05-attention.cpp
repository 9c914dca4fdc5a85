// Chapter 5: scaled dot-product attention and masks. The companion program of
// tutorials/05-attention.md: every listing of the chapter is a piece of this file, and every output
// the chapter shows is what this program prints. It exits non-zero if a claim does not hold.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "autograd/all.h"
#include "autograd/fused_attention.h"
#include "autograd/node.h"
#include "claims.h"
#include "nn/layers.h"
#include "transformer/inspect/diagram.h"
#include "transformer/inspect/svg.h"
#include "transformer/model/masks.h"

using namespace gradformer;
using namespace tutorial;

namespace {

double max_abs_diff(const Tensor& a, const Tensor& b) {
  const Tensor d = a - b;
  return std::abs(max(maximum(d, -d)).item());
}

// Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V, from autograd ops
Variable attention_by_hand(const Variable& q, const Variable& k, const Variable& v, const Tensor& allowed) {
  const double d_k = static_cast<double>(q.size(-1));
  Variable scores = matmul(q, transpose(k, -2, -1)) / std::sqrt(d_k);  // [..., Tq, Tk]
  scores = masked_fill(scores, logical_not(allowed), -1e30);           // "setting to -inf"
  return matmul(softmax(scores, -1), v);                               // [..., Tq, d_v]
}

// One grid of the step-by-step figure: a [rows, columns] tensor, its rows labelled by the words.
NumberGrid grid_of(const std::string& title, const Tensor& matrix, const std::vector<std::string>& rows,
                   const std::vector<std::string>& columns, const char* colour) {
  return {title, rows, columns, matrix.to(DType::Float64).to_vector<double>(), 2, 46, 24, colour};
}

// Attention on one sentence, step by step, drawn as the numbers of each step (05-step-by-step.svg):
// the words' embeddings (times sqrt(d), as the model does) projected to Q, K and V by three seeded
// Linear layers, then the scores, their softmax, and the weighted sum of the values.
void step_by_step() {
  const std::vector<std::string> words{"je", "suis", "heureux", "."}, dims{"1", "2", "3", "4"};
  const int64_t d_k = 4;
  Generator gen(5);
  const Embedding embedding(4, d_k, gen);
  const Linear w_q(d_k, d_k, gen, /*bias=*/false), w_k(d_k, d_k, gen, false), w_v(d_k, d_k, gen, false);
  const Variable x = embedding.forward(arange(4, DType::Int64)) * std::sqrt(static_cast<double>(d_k));  // [T, d]
  const Variable q = w_q.forward(x), k = w_k.forward(x), v = w_v.forward(x);                            // [T, d_k]
  const Tensor scores = matmul(q.value(), k.value().transpose(0, 1)) / std::sqrt(static_cast<double>(d_k));
  const Attention a = scaled_dot_product_attention(q, k, v);
  const Tensor row_sums = sum(a.weights, {-1}, /*keepdim=*/true);  // [T, 1]
  claim(max_abs_diff(row_sums, ones({4, 1})) < 1e-6, "each row of the softmax sums to 1");
  claim(max_abs_diff(a.output.value(), matmul(a.weights, v.value())) < 1e-6, "the output is the weights times V");

  Diagram d(1000, 470);
  d.text(500, 28, "Attention on \"je suis heureux .\", step by step (d_k = 4, one head, untrained)", {.size = 16});
  const char* blue = "#5b8fd0";
  d.grid(90, 90, grid_of("Q = x W^Q (queries)", q.value(), words, dims, blue));
  d.grid(400, 90, grid_of("K = x W^K (keys)", k.value(), words, dims, blue));
  d.grid(770, 90, grid_of("V = x W^V (values)", v.value(), words, dims, "#4caf7a"));
  d.grid(90, 300, grid_of("scores = Q K\u1d40 / \u221ad_k", scores, words, words, "#e08a3c"));
  d.grid(400, 300, grid_of("weights = softmax(scores)", a.weights, words, words, "#e08a3c"));
  d.grid(594, 300, grid_of("\u03a3", row_sums, {"", "", "", ""}, {"row"}, "#bbbbbb"));
  d.grid(770, 300, grid_of("output = weights V", a.output.value(), words, dims, "#4caf7a"));
  d.arrow({{182, 196}, {182, 262}});  // Q -> scores
  d.arrow({{492, 196}, {250, 262}});  // K -> scores
  d.arrow({{862, 196}, {862, 262}});  // V -> output
  d.arrow({{278, 348}, {344, 348}});  // scores -> softmax
  d.arrow({{648, 348}, {706, 348}});  // softmax -> output
  d.text(500, 430, "Row i of the weights says how much word i takes from each word's value: every row sums to 1.");
  d.text(500, 450, "The output row of word i is that weighted average of the rows of V.");
  write_svg(output_path("05-step-by-step.svg"), d.svg());
}

void why_scale() {
  section("why divide by sqrt(d_k)");
  Generator gen(0);
  for (int64_t d_k : {4, 64, 512}) {
    const Tensor q = randn({4000, d_k}, gen, DType::Float64), k = randn({4000, d_k}, gen, DType::Float64);
    const Tensor dots = sum(q * k, {-1});
    const double v = var(dots).item(), v_scaled = var(dots / std::sqrt(static_cast<double>(d_k))).item();
    std::printf("d_k %4lld: var(q.k) = %7.1f   var(q.k / sqrt(d_k)) = %.3f\n", static_cast<long long>(d_k), v,
                v_scaled);
    claim(std::abs(v / static_cast<double>(d_k) - 1) < 0.1, "var(q.k) is about d_k");
    claim(std::abs(v_scaled - 1) < 0.1, "the scaled dot products have variance about 1");
  }
  // What the softmax does with scores of standard deviation sqrt(512) ~ 23 versus 1.
  const int64_t d_k = 512;
  const Variable q(randn({1, 32, d_k}, gen, DType::Float64)), k(randn({1, 32, d_k}, gen, DType::Float64));
  const Variable v(randn({1, 32, 16}, gen, DType::Float64));
  for (double scale : {1.0, 1.0 / std::sqrt(static_cast<double>(d_k))}) {
    const Tensor p = scaled_dot_product_attention(q, k, v, {}, {.scale = scale}).weights;  // [1, 32, 32]
    // The softmax's Jacobian diag(p) - p p^T: its size is how much gradient reaches the scores.
    // |J|_F^2 = sum p^2 - 2 sum p^3 + (sum p^2)^2, per query row.
    const Tensor p2 = sum(p * p, {-1}), p3 = sum(p * p * p, {-1});
    const double jacobian = mean(sqrt(p2 - 2.0 * p3 + p2 * p2)).item();
    const double peak = mean(max(p, {-1})).item();
    std::printf("scale %-8.4f: mean largest weight %.3f   mean |softmax Jacobian| %.4f\n", scale, peak, jacobian);
    if (scale == 1.0)
      claim(peak > 0.9 && jacobian < 0.15, "without scaling the softmax is nearly one-hot, its gradient tiny");
    else
      claim(peak < 0.3 && jacobian > 0.2, "with scaling the weights stay spread out and the gradient flows");
  }
}

void masks() {
  section("masks: padding and causal");
  // Two sentences of 4 tokens; the second has one padding token (id 0) at the end.
  const Tensor ids = from_vector(std::vector<int64_t>{5, 6, 7, 8, 5, 6, 7, 0}, {2, 4});
  const Tensor pad = padding_mask(ids, 0);    // [B, 1, S]: true on real tokens
  const Tensor causal = target_mask(ids, 0);  // [B, T, T]: padding AND j <= i
  Generator gen(1);
  const Variable x(randn({2, 1, 4, 8}, gen));  // [B, H = 1, T, d_k]
  Attention enc = scaled_dot_product_attention(x, x, x, pad.unsqueeze(1));
  Attention dec = scaled_dot_product_attention(x, x, x, causal.unsqueeze(1));
  std::cout << "encoder weights, sentence 2 (last key is padding):\n" << enc.weights.select(0, 1).select(0, 0) << "\n";
  std::cout << "decoder weights, sentence 1 (causal):\n" << dec.weights.select(0, 0).select(0, 0) << "\n";
  claim(sum(enc.weights.select(0, 1).narrow(-1, 3, 1)).item() == 0.0, "no query attends to the padding");
  claim(dec.weights.at({0, 0, 0, 0}) == 1.0f, "the first position can only attend to itself");
  // Pictures: the mask of sentence 2 (causal and padding), and the causal weights of sentence 1
  const std::vector<std::string> tokens{"5", "6", "7", "pad"}, tokens1{"5", "6", "7", "8"};
  write_svg(output_path("05-mask.svg"), heatmap_svg({"target_mask, sentence 2: 1 = allowed", tokens, tokens,
                                                     causal.select(0, 1).to(DType::Float64).to_vector<double>(),
                                                     "query", "key", std::make_pair(0.0, 1.0)}));
  write_svg(output_path("05-causal-weights.svg"),
            heatmap_svg({"causal attention weights, sentence 1", tokens1, tokens1,
                         dec.weights.select(0, 0).select(0, 0).to(DType::Float64).to_vector<double>(), "query", "key",
                         std::make_pair(0.0, 1.0)}));
  const Tensor by_hand = attention_by_hand(x, x, x, causal.unsqueeze(1)).value();
  claim(max_abs_diff(by_hand, dec.output.value()) < 1e-5, "the listing and the library agree");
}

// The ops recorded in the graph behind v (each once), and how many of them made a tensor of `shape`
std::pair<size_t, size_t> graph_nodes(const Variable& v, const Shape& shape) {
  std::set<const Node*> seen;
  std::vector<const Node*> todo;
  if (v.grad_fn()) todo.push_back(v.grad_fn().get());
  size_t of_shape = 0;
  while (!todo.empty()) {
    const Node* node = todo.back();
    todo.pop_back();
    if (!seen.insert(node).second) continue;
    of_shape += node->shape() == shape;
    for (const Variable& input : node->inputs())
      if (input.grad_fn()) todo.push_back(input.grad_fn().get());
  }
  return {seen.size(), of_shape};
}

void fused_vs_unfused() {
  section("fused and unfused");
  Generator gen(2);
  // The copy task's shapes: batch 80, 8 heads, 10 positions, d_k 16.
  const Tensor q0 = randn({80, 8, 10, 16}, gen), k0 = randn({80, 8, 10, 16}, gen), v0 = randn({80, 8, 10, 16}, gen);
  const Tensor mask = causal_mask(10);
  {  // the graphs one forward pass records: the composition's ops, and the fused op's one
    const Variable q(q0, true), k(k0, true), v(v0, true);
    const Shape scores{80, 8, 10, 10};  // [B, H, Tq, Tk]
    const auto [unfused, of_scores] = graph_nodes(scaled_dot_product_attention_unfused(q, k, v, mask).output, scores);
    const auto [fused, fused_scores] = graph_nodes(scaled_dot_product_attention(q, k, v, mask).output, scores);
    std::printf("graph nodes of one forward pass: unfused %zu (%zu of them [B, H, Tq, Tk]), fused %zu (%zu)\n", unfused,
                of_scores, fused, fused_scores);
  }
  double seconds[2] = {0, 0};
  Tensor grads[2];
  for (int fused = 0; fused < 2; ++fused) {
    for (int rep = 0; rep < 20; ++rep) {
      Variable q(q0, true), k(k0, true), v(v0, true);
      const auto t0 = std::chrono::steady_clock::now();
      Attention a =
          fused ? scaled_dot_product_attention(q, k, v, mask) : scaled_dot_product_attention_unfused(q, k, v, mask);
      sum(a.output).backward();
      seconds[fused] += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      grads[fused] = q.grad();
    }
  }
  std::printf("forward + backward, 20 runs: unfused %.1f ms, fused %.1f ms\n", 1e3 * seconds[0], 1e3 * seconds[1]);
  claim(max_abs_diff(grads[0], grads[1]) < 1e-4, "fused and unfused gradients agree");
}

// L = sum(O * dO) for O = Attention(q, k, v): its gradients are what backward computes for upstream dO
double loss(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& dO) {
  return sum(scaled_dot_product_attention(Variable(q), Variable(k), Variable(v)).output.value() * dO).item();
}

// The largest difference between grad and central differences of loss() in the argument `which`
double finite_difference_error(Tensor args[3], int which, const Tensor& dO, const Tensor& grad) {
  const double eps = 1e-6;
  std::vector<double> x = args[which].to_vector<double>(), g = grad.to_vector<double>();
  const Shape shape = args[which].shape();
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    Tensor moved[3] = {args[0], args[1], args[2]};
    std::vector<double> plus = x, minus = x;
    plus[i] += eps, minus[i] -= eps;
    moved[which] = from_vector(plus, shape);
    const double up = loss(moved[0], moved[1], moved[2], dO);
    moved[which] = from_vector(minus, shape);
    const double down = loss(moved[0], moved[1], moved[2], dO);
    worst = std::max(worst, std::abs((up - down) / (2 * eps) - g[i]));
  }
  return worst;
}

void backward_by_hand() {
  section("the backward, derived and checked");
  Generator gen(3);
  const int64_t Tq = 3, Tk = 4, d_k = 5, d_v = 2;
  Tensor args[3] = {randn({Tq, d_k}, gen, DType::Float64), randn({Tk, d_k}, gen, DType::Float64),
                    randn({Tk, d_v}, gen, DType::Float64)};
  const Tensor dO = randn({Tq, d_v}, gen, DType::Float64);
  Variable q(args[0], true), k(args[1], true), v(args[2], true);
  const Attention a = scaled_dot_product_attention(q, k, v);
  sum(a.output * Variable(dO)).backward();  // the library's backward, with upstream gradient dO
  const double scale = 1 / std::sqrt(static_cast<double>(d_k));
  const Tensor& P = a.weights;
  const Tensor dV = matmul(P.transpose(0, 1), dO);                           // dV = P^T dO
  const Tensor dP = matmul(dO, v.value().transpose(0, 1));                   // dP = dO V^T
  const Tensor dS = scale * P * (dP - sum(dP * P, {-1}, /*keepdim=*/true));  // dS = scale P (dP - rowsum(dP P))
  const Tensor dQ = matmul(dS, k.value());                                   // dQ = dS K
  const Tensor dK = matmul(dS.transpose(0, 1), q.value());                   // dK = dS^T Q
  const double formulas =
      std::max({max_abs_diff(dQ, q.grad()), max_abs_diff(dK, k.grad()), max_abs_diff(dV, v.grad())});
  double numeric = 0;
  const Tensor grads[3] = {dQ, dK, dV};
  for (int which = 0; which < 3; ++which)
    numeric = std::max(numeric, finite_difference_error(args, which, dO, grads[which]));
  std::printf("formulas vs the library's backward: max difference %.1e\n", formulas);
  std::printf("formulas vs central differences (eps 1e-6): max difference %.1e\n", numeric);
  claim(formulas < 1e-14, "the five formulas are the library's backward");
  claim(numeric < 1e-8, "the five formulas are the derivative");
}

}  // namespace

int main() {
  step_by_step();
  why_scale();
  masks();
  fused_vs_unfused();
  backward_by_hand();
  return failures == 0 ? 0 : 1;
}
