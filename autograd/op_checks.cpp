#include "autograd/op_checks.h"

#include "autograd/all.h"

namespace gradformer {

namespace {

using V = std::vector<Variable>;
using Checks = std::vector<OpCheck>;

Tensor random(const Shape& shape, uint64_t seed, double lo = -1, double hi = 1) {
  Generator gen(seed);
  return uniform(shape, lo, hi, gen, DType::Float64);
}

// Inputs shared by several groups. x, y: [2, 3]; bias: [3]; column: [2, 1]; positive: [2, 3] in
// [0.5, 2] (for log, sqrt, division, fractional powers); cube: [2, 3, 4].
struct Inputs {
  Tensor x = random({2, 3}, 1), y = random({2, 3}, 2), bias = random({3}, 3), column = random({2, 1}, 20);
  Tensor positive = random({2, 3}, 4, 0.5, 2), cube = random({2, 3, 4}, 5);
  // [3, 4] seen as its transpose (strides [1, 3]) and [3, 8] seen every second column (strides [8, 2])
  Tensor transposed = random({4, 3}, 21).transpose(0, 1), strided = random({3, 8}, 22).slice(1, 0, 8, 2);
};

void add_arithmetic(Checks& c, const Inputs& in) {
  c.push_back({"add (broadcast)", [](const V& v) { return v[0] + v[1]; }, {in.x, in.bias}});
  c.push_back({"sub", [](const V& v) { return v[0] - v[1]; }, {in.x, in.y}});
  c.push_back({"sub (broadcast on the left)", [](const V& v) { return v[0] - v[1]; }, {in.column, in.x}});
  c.push_back({"mul (broadcast)", [](const V& v) { return v[0] * v[1]; }, {in.x, in.bias}});
  c.push_back({"mul (broadcast column)", [](const V& v) { return v[0] * v[1]; }, {in.x, in.column}});
  c.push_back({"mul (rank 0, one input twice)", [](const V& v) { return v[0] * v[0]; }, {random({}, 23)}});
  c.push_back(
      {"mul (non-contiguous inputs)", [](const V& v) { return v[0] * v[1] + exp(v[0]); }, {in.transposed, in.strided}});
  c.push_back({"div", [](const V& v) { return v[0] / v[1]; }, {in.x, in.positive}});
  c.push_back({"div (broadcast numerator)", [](const V& v) { return v[0] / v[1]; }, {in.bias, in.positive}});
  c.push_back({"div (with scalars: -a * 2 + 1 - 3 / b)",
               [](const V& v) { return -v[0] * 2.0 + 1.0 - 3.0 / v[1]; },
               {in.x, in.positive}});
  c.push_back({"neg", [](const V& v) { return -v[0]; }, {in.x}});
}

void add_matmul(Checks& c, const Inputs& in) {
  auto mm = [](const V& v) { return matmul(v[0], v[1]); };
  c.push_back({"matmul", mm, {random({3, 4}, 6), random({4, 2}, 7)}});
  c.push_back({"matmul (batched)", mm, {random({2, 3, 4}, 24), random({2, 4, 5}, 25)}});
  c.push_back({"matmul (batched, broadcast)", mm, {random({2, 3, 4}, 8), random({4, 5}, 9)}});
  c.push_back({"matmul (both operands broadcast)", mm, {random({1, 3, 4}, 26), random({2, 1, 4, 2}, 27)}});
  c.push_back(
      {"matmul (transposed operands)", mm, {random({4, 3}, 10).transpose(0, 1), random({2, 4}, 11).transpose(0, 1)}});
  c.push_back({"matmul (a^T b)",
               [](const V& v) { return matmul(transpose(v[0], -2, -1), v[1]); },
               {random({4, 3}, 28), random({4, 2}, 29)}});
  // as attention computes q k^T
  c.push_back({"matmul (a b^T)",
               [](const V& v) { return matmul(v[0], transpose(v[1], -2, -1)); },
               {random({2, 3, 4}, 30), random({2, 5, 4}, 31)}});
  c.push_back({"matmul (non-contiguous inputs)",
               [](const V& v) { return matmul(v[0], contiguous(transpose(v[1], 0, 1))); },
               {in.transposed, in.strided}});
}

void add_pointwise(Checks& c, const Inputs& in) {
  c.push_back({"exp", [](const V& v) { return exp(v[0]); }, {in.x}});
  c.push_back({"log", [](const V& v) { return log(v[0]); }, {in.positive}});
  c.push_back({"sqrt", [](const V& v) { return sqrt(v[0]); }, {in.positive}});
  c.push_back({"rsqrt", [](const V& v) { return rsqrt(v[0]); }, {in.positive}});
  c.push_back({"pow (scalar exponent)", [](const V& v) { return pow(v[0], 3.0); }, {in.x}});
  c.push_back({"pow (exponent -1.5)", [](const V& v) { return pow(v[0], -1.5); }, {in.positive}});
  c.push_back({"pow (tensor exponent)", [](const V& v) { return pow(v[0], v[1]); }, {in.positive, in.x}});
  c.push_back({"tanh", [](const V& v) { return tanh(v[0]); }, {in.x}});
  // relu is not differentiable at 0: these points keep away from it
  c.push_back({"relu", [](const V& v) { return relu(v[0]); }, {tensor({-1.5, -0.2, 0.3, 2.0}, {4}, DType::Float64)}});
  c.push_back({"gelu", [](const V& v) { return gelu(v[0]); }, {random({2, 3}, 12, -3, 3)}});
  c.push_back({"gelu_tanh", [](const V& v) { return gelu_tanh(v[0]); }, {random({2, 3}, 13, -3, 3)}});
  c.push_back({"silu", [](const V& v) { return silu(v[0]); }, {random({2, 3}, 14, -4, 4)}});
  const Tensor mask = tensor({0, 1, 0, 1, 0, 0}, {2, 3}).to(DType::Bool), row = tensor({1, 0, 1}, {3}).to(DType::Bool);
  c.push_back({"where", [mask](const V& v) { return where(mask, v[0], v[1]); }, {in.x, in.bias}});
  c.push_back({"where (condition and b broadcast)",
               [row](const V& v) { return where(row, v[0], v[1]); },
               {in.x, random({1}, 32)}});
  // (a fill value like -1e9 would make L = sum(out * u) so large that its rounding swamps the differences)
  c.push_back({"masked_fill", [mask](const V& v) { return masked_fill(v[0], mask, 2.0); }, {in.x}});
  // the generator is made afresh in every call, so every evaluation draws the same mask
  c.push_back({"dropout",
               [](const V& v) {
                 Generator g(3);
                 return dropout(v[0], 0.5, g);
               },
               {random({4, 4}, 33)}});
}

void add_views(Checks& c, const Inputs& in) {
  const Tensor& cube = in.cube;
  c.push_back({"view", [](const V& v) { return view(v[0], {4, 6}); }, {cube}});
  c.push_back({"reshape", [](const V& v) { return reshape(v[0], {6, -1}); }, {cube}});
  c.push_back({"reshape (of a transposed view: copies)",
               [](const V& v) { return reshape(transpose(v[0], 0, 2), {-1}); },
               {cube}});
  c.push_back({"transpose", [](const V& v) { return transpose(v[0], 0, 2); }, {cube}});
  c.push_back({"permute", [](const V& v) { return permute(v[0], {2, 0, 1}); }, {cube}});
  c.push_back({"slice", [](const V& v) { return slice(v[0], 2, 1, 4, 2); }, {cube}});
  c.push_back({"narrow", [](const V& v) { return narrow(v[0], 1, 1, 2); }, {cube}});
  c.push_back({"select", [](const V& v) { return select(v[0], 1, -1); }, {cube}});
  c.push_back({"squeeze", [](const V& v) { return squeeze(v[0], 1); }, {random({3, 1, 2}, 14)}});
  c.push_back({"unsqueeze", [](const V& v) { return unsqueeze(v[0], 0); }, {random({3, 2}, 34)}});
  c.push_back({"expand", [](const V& v) { return expand(v[0], {2, 3, 4}); }, {random({3, 1}, 13)}});
  c.push_back({"contiguous", [](const V& v) { return contiguous(transpose(v[0], 0, 1)); }, {cube}});
  c.push_back({"concat (one input twice)",
               [](const V& v) {
                 return concat({v[0], v[1], v[0]}, 1);
               },
               {in.x, random({2, 1}, 15)}});
  c.push_back({"stack", [](const V& v) { return stack({v[0], v[1]}, 0); }, {in.x, in.y}});
  c.push_back({"stack (new last dimension)", [](const V& v) { return stack({v[0], v[1]}, -1); }, {in.x, in.y}});
}

// Random data has no ties, so max is differentiable at these points.
void add_reductions(Checks& c, const Inputs& in) {
  const Tensor& cube = in.cube;
  c.push_back({"sum", [](const V& v) { return sum(v[0], {0, 2}); }, {cube}});
  c.push_back({"sum (everything)", [](const V& v) { return sum(v[0]); }, {cube}});
  c.push_back({"sum (keepdim)", [](const V& v) { return sum(v[0], {-1}, true); }, {cube}});
  c.push_back({"sum (non-contiguous input)", [](const V& v) { return sum(v[0], {1}); }, {cube.transpose(0, 2)}});
  c.push_back({"mean", [](const V& v) { return mean(v[0], {-1}, true); }, {cube}});
  c.push_back({"mean (everything)", [](const V& v) { return mean(v[0]); }, {cube}});
  c.push_back({"max", [](const V& v) { return max(v[0], {-1}); }, {cube}});
  c.push_back({"max (two dims, keepdim)", [](const V& v) { return max(v[0], {0, 1}, true); }, {cube}});
  c.push_back({"var", [](const V& v) { return var(v[0], {-1}); }, {cube}});
  c.push_back({"var (two dims, keepdim, correction 0)", [](const V& v) { return var(v[0], {0, 2}, true, 0); }, {cube}});
  c.push_back({"logsumexp", [](const V& v) { return logsumexp(v[0], {1}); }, {cube}});
  c.push_back({"logsumexp (dim 0, keepdim)", [](const V& v) { return logsumexp(v[0], {0}, true); }, {cube}});
}

void add_indexing(Checks& c, const Inputs& in) {
  const Tensor ids = tensor({2, 0, 2}, {3}, DType::Int64), grid = tensor({0, 2, 2, 1, 0, 2}, {2, 3}, DType::Int64);
  const Tensor picks = tensor({1, 1, 0, 2}, {2, 2}, DType::Int64);
  c.push_back(
      {"index_select (repeated rows)", [ids](const V& v) { return index_select(v[0], 0, ids); }, {random({3, 4}, 16)}});
  c.push_back(
      {"index_select (2-D index)", [grid](const V& v) { return index_select(v[0], 0, grid); }, {random({3, 4}, 35)}});
  c.push_back(
      {"index_select (dim 1)", [grid](const V& v) { return index_select(v[0], 1, grid); }, {random({2, 3, 2}, 36)}});
  c.push_back({"gather", [picks](const V& v) { return gather(v[0], 1, picks); }, {in.x}});
}

void add_fused(Checks& c, const Inputs& in) {
  const Tensor& cube = in.cube;
  c.push_back({"softmax", [](const V& v) { return softmax(v[0]); }, {cube}});
  c.push_back({"softmax (dim 0)", [](const V& v) { return softmax(v[0], 0); }, {random({4, 2, 3}, 37)}});
  c.push_back({"softmax (non-contiguous input)",
               [](const V& v) { return softmax(v[0]); },
               {random({5, 3}, 38).transpose(0, 1)}});
  c.push_back({"log_softmax", [](const V& v) { return log_softmax(v[0], 1); }, {cube}});
  c.push_back({"log_softmax (last dim, logits in [-3, 3])",
               [](const V& v) { return log_softmax(v[0]); },
               {random({3, 5}, 39, -3, 3)}});
  c.push_back({"layer_norm",
               [](const V& v) { return layer_norm(v[0], v[1], v[2]); },
               {cube, random({4}, 17), random({4}, 18)}});
  c.push_back({"layer_norm (no weight, no bias)",
               [](const V& v) { return layer_norm(v[0], Variable(), Variable()); },
               {random({4, 5}, 40, -2, 2)}});
  c.push_back({"layer_norm (weight only, eps 1e-3)",
               [](const V& v) { return layer_norm(v[0], v[1], Variable(), 1e-3); },
               {cube, random({4}, 41)}});
  c.push_back({"layer_norm (non-contiguous inputs)",
               [](const V& v) { return layer_norm(v[0], v[1], v[2]); },
               {random({5, 4}, 42).transpose(0, 1), random({10}, 43).slice(0, 0, 10, 2), random({5}, 44)}});
  c.push_back({"rms_norm", [](const V& v) { return rms_norm(v[0], v[1]); }, {cube, random({4}, 46)}});
  c.push_back({"rms_norm (no weight, eps 1e-3)",
               [](const V& v) { return rms_norm(v[0], Variable(), 1e-3); },
               {random({4, 5}, 47, -2, 2)}});
  c.push_back({"rms_norm (non-contiguous inputs, 33 rows: two blocks of the weight's sums)",
               [](const V& v) { return rms_norm(v[0], v[1]); },
               {random({4, 33}, 48).transpose(0, 1), random({8}, 49).slice(0, 0, 8, 2)}});
  // Rotary tables of arbitrary angles: the op must be right for any cos and sin, not only a rotation's.
  const Tensor cos = random({6, 2}, 50), sin = random({6, 2}, 51);
  c.push_back({"rotary", [cos, sin](const V& v) { return rotary(v[0], cos, sin); }, {random({2, 3, 4}, 52)}});
  c.push_back({"rotary (from position 2, a transposed [B, H, T, d_k] input)",
               [cos, sin](const V& v) { return rotary(v[0], cos, sin, 2); },
               {random({2, 3, 2, 4}, 53).transpose(1, 2)}});
  const Tensor targets = tensor({1, 0, 2, 2}, {4}, DType::Int64),
               grid = tensor({2, 0, 4, 1, 4, 3}, {2, 3}, DType::Int64);
  c.push_back(
      {"cross_entropy", [grid](const V& v) { return cross_entropy(v[0], grid); }, {random({2, 3, 5}, 45, -3, 3)}});
  c.push_back(
      {"cross_entropy (smoothing, ignore index)",
       [targets](const V& v) { return cross_entropy(v[0], targets, {.ignore_index = 0, .label_smoothing = 0.1}); },
       {random({4, 3}, 19, -2, 2)}});
  c.push_back({"cross_entropy (3-D logits, smoothing, ignore index)",
               [grid](const V& v) { return cross_entropy(v[0], grid, {.ignore_index = 4, .label_smoothing = 0.1}); },
               {random({2, 3, 5}, 46, -3, 3)}});
}

// attention(q, k, v) with a fixed mask, as a function of q, k and v
GradcheckFunction attention_with(const Tensor& mask) {
  return [mask](const V& x) { return scaled_dot_product_attention(x[0], x[1], x[2], mask).output; };
}

void add_attention(Checks& c) {
  // [B, 1, 1, S]: the second sentence's last two keys are padding
  const Tensor ids = from_vector(std::vector<int64_t>{1, 2, 3, 4, 1, 2, 0, 0}, {2, 4});
  const Tensor padding = ne(ids, full({}, 0, DType::Int64)).unsqueeze(1).unsqueeze(1);
  // [4, 4]: query i may attend to keys j <= i
  const Tensor positions = arange(4, DType::Int64);
  const Tensor causal = le(positions.unsqueeze(0), positions.unsqueeze(1));
  // q [B, H, Tq, d_k], k [B, H, Tk, d_k], v [B, H, Tk, d_v]
  c.push_back({"scaled_dot_product_attention (padding mask)",
               attention_with(padding),
               {random({2, 2, 3, 4}, 1), random({2, 2, 4, 4}, 2), random({2, 2, 4, 3}, 3)}});
  c.push_back({"scaled_dot_product_attention (causal mask)",
               attention_with(causal),
               {random({2, 2, 4, 4}, 4), random({2, 2, 4, 4}, 5), random({2, 2, 4, 3}, 6)}});
  c.push_back({"scaled_dot_product_attention (no mask, rank 3)",
               attention_with(Tensor()),
               {random({3, 2, 4}, 7), random({3, 5, 4}, 8), random({3, 5, 2}, 9)}});
  // The heads of a projection are strided views: [B, T, H, d_k] seen as [B, H, T, d_k].
  c.push_back({"scaled_dot_product_attention (heads as strided views)",
               [padding](const V& x) {
                 return scaled_dot_product_attention(transpose(x[0], 1, 2), transpose(x[1], 1, 2),
                                                     transpose(x[2], 1, 2), padding)
                     .output;
               },
               {random({2, 3, 2, 4}, 10), random({2, 4, 2, 4}, 11), random({2, 4, 2, 4}, 12)}});
  // Each call starts the generator from the same state, so every call drops the same weights.
  c.push_back(
      {"scaled_dot_product_attention (dropout)",
       [padding](const V& x) {
         Generator gen(3);
         return scaled_dot_product_attention(x[0], x[1], x[2], padding, {.dropout_p = 0.3, .dropout_gen = &gen}).output;
       },
       {random({2, 2, 3, 4}, 13), random({2, 2, 4, 4}, 14), random({2, 2, 4, 3}, 15)}});
}

}  // namespace

std::vector<OpCheck> autograd_op_checks() {
  const Inputs in;
  Checks checks;
  add_arithmetic(checks, in);
  add_matmul(checks, in);
  add_pointwise(checks, in);
  add_views(checks, in);
  add_reductions(checks, in);
  add_indexing(checks, in);
  add_fused(checks, in);
  add_attention(checks);
  return checks;
}

}  // namespace gradformer
