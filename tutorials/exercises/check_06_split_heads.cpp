// Checks exercises::split_heads and exercises::merge_heads (tutorials/exercises/06_split_heads.cpp,
// or the reference solution): every element where the definition puts it, merge undoing split, and
// both inside the library's MultiheadAttention (its projections split into heads, its attention's
// heads merged before W^O). Prints what it found; exits 1 if a check fails or the file is still the stub.
#include <cstdio>
#include <string>
#include <vector>

#include "autograd/fused_attention.h"
#include "exercises.h"
#include "nn/functional.h"
#include "transformer/model/multihead_attention.h"

using namespace gradformer;
using exercises::max_difference;

static bool report(const std::string& what, bool ok) {
  std::printf("%-66s: %s\n", what.c_str(), ok ? "yes" : "NO");
  return ok;
}

// result[b, i, t, j] = x[b, t, i d_k + j], element by element.
static bool split_by_definition(const Tensor& x, const Tensor& split, int64_t heads) {
  const int64_t B = x.size(0), T = x.size(1), d = x.size(2), d_k = d / heads;
  if (split.shape() != Shape{B, heads, T, d_k}) return false;
  const std::vector<double> in = x.contiguous().to_vector<double>(), out = split.contiguous().to_vector<double>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t i = 0; i < heads; ++i)
      for (int64_t t = 0; t < T; ++t)
        for (int64_t j = 0; j < d_k; ++j)
          if (out[static_cast<size_t>(((b * heads + i) * T + t) * d_k + j)] !=
              in[static_cast<size_t>((b * T + t) * d + i * d_k + j)])
            return false;
  return true;
}

static int checks() {
  int failed = 0;
  Generator gen(6);
  for (const auto& [shape, heads] : {std::pair<Shape, int64_t>{{2, 5, 12}, 3}, {{1, 4, 8}, 8}, {{3, 2, 6}, 1}}) {
    const Tensor x = randn(shape, gen, DType::Float64);
    const std::string name = to_string(shape) + ", h = " + std::to_string(heads);
    const Tensor split = exercises::split_heads(x, heads);
    if (!report(name + ": split_heads puts each element where it belongs", split_by_definition(x, split, heads)))
      ++failed;
    if (!report(name + ": merge_heads(split_heads(x)) is x", max_difference(exercises::merge_heads(split), x) == 0))
      ++failed;
  }

  // Inside the library's multi-head attention, d = 12, h = 3, with biases that are not zero.
  const int64_t d = 12, heads = 3;
  MultiheadAttention mha(d, heads, 0.0, gen, nullptr, DType::Float64);
  Tensor in_bias = mha.in_proj_bias.value(), out_bias = mha.out_proj->bias.value();  // the same storage
  in_bias.copy_(randn({3 * d}, gen, DType::Float64));
  out_bias.copy_(randn({d}, gen, DType::Float64));
  const Tensor x = randn({2, 5, d}, gen, DType::Float64), memory = randn({2, 7, d}, gen, DType::Float64);
  const Variable w = mha.in_proj_weight, b = mha.in_proj_bias;
  // Q = x W^Q + b^Q, K and V from the memory; W^Q, W^K, W^V are rows [0, d), [d, 2d), [2d, 3d).
  auto project = [&](const Tensor& input, int64_t first) {
    return linear(Variable(input), narrow(w, 0, first, d), narrow(b, 0, first, d)).value();
  };
  const Tensor q = exercises::split_heads(project(x, 0), heads), k = exercises::split_heads(project(memory, d), heads),
               v = exercises::split_heads(project(memory, 2 * d), heads);
  if (!report("the library's projected queries, split",
              max_difference(q, mha.project_query(Variable(x)).value()) < 1e-12))
    ++failed;
  const KVCache kv = mha.project_key_value(Variable(memory));
  if (!report("the library's projected keys and values, split",
              max_difference(k, kv.k.value()) < 1e-12 && max_difference(v, kv.v.value()) < 1e-12))
    ++failed;
  const Tensor heads_out = scaled_dot_product_attention(Variable(q), Variable(k), Variable(v)).output.value();
  const Tensor mine = mha.out_proj->forward(Variable(exercises::merge_heads(heads_out))).value();
  if (!report(
          "the library's attention output, heads merged before W^O",
          max_difference(mine, mha.forward(Variable(x), Variable(memory), Variable(memory)).output.value()) < 1e-12))
    ++failed;

  std::printf(failed == 0 ? "split and merge heads: all checks pass\n" : "split and merge heads: %d check(s) FAILED\n",
              failed);
  return failed;
}

int main() { return exercises::run_checks("06_split_heads.cpp", 6, checks); }
