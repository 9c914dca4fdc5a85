#include "autograd/op_checks.h"

#include "autograd/all.h"

namespace gradformer {

namespace {

Tensor random(const Shape& shape, uint64_t seed, double lo = -1, double hi = 1) {
  Generator gen(seed);
  return uniform(shape, lo, hi, gen, DType::Float64);
}

}  // namespace

std::vector<OpCheck> autograd_op_checks() {
  using V = std::vector<Variable>;
  const Tensor x = random({2, 3}, 1), y = random({2, 3}, 2), bias = random({3}, 3), positive = random({2, 3}, 4, 0.5, 2);
  const Tensor cube = random({2, 3, 4}, 5), ids = tensor({2, 0, 2}, {3}, DType::Int64);
  const Tensor mask = tensor({0, 1, 0, 1, 0, 0}, {2, 3}).to(DType::Bool), targets = tensor({1, 0, 2, 2}, {4}, DType::Int64);
  return {
      {"add (broadcast)", [](const V& v) { return v[0] + v[1]; }, {x, bias}},
      {"sub", [](const V& v) { return v[0] - v[1]; }, {x, y}},
      {"mul (broadcast)", [](const V& v) { return v[0] * v[1]; }, {x, bias}},
      {"div", [](const V& v) { return v[0] / v[1]; }, {x, positive}},
      {"neg", [](const V& v) { return -v[0]; }, {x}},
      {"matmul", [](const V& v) { return matmul(v[0], v[1]); }, {random({3, 4}, 6), random({4, 2}, 7)}},
      {"matmul (batched, broadcast)", [](const V& v) { return matmul(v[0], v[1]); }, {random({2, 3, 4}, 8), random({4, 5}, 9)}},
      {"matmul (transposed operands)", [](const V& v) { return matmul(v[0], v[1]); },
       {random({4, 3}, 10).transpose(0, 1), random({2, 4}, 11).transpose(0, 1)}},
      {"exp", [](const V& v) { return exp(v[0]); }, {x}},
      {"log", [](const V& v) { return log(v[0]); }, {positive}},
      {"sqrt", [](const V& v) { return sqrt(v[0]); }, {positive}},
      {"rsqrt", [](const V& v) { return rsqrt(v[0]); }, {positive}},
      {"pow (scalar exponent)", [](const V& v) { return pow(v[0], 3.0); }, {x}},
      {"pow (tensor exponent)", [](const V& v) { return pow(v[0], v[1]); }, {positive, x}},
      {"tanh", [](const V& v) { return tanh(v[0]); }, {x}},
      {"relu", [](const V& v) { return relu(v[0]); }, {tensor({-1.5, -0.2, 0.3, 2.0}, {4}, DType::Float64)}},
      {"gelu", [](const V& v) { return gelu(v[0]); }, {random({2, 3}, 12, -3, 3)}},
      {"where", [mask](const V& v) { return where(mask, v[0], v[1]); }, {x, bias}},
      {"masked_fill", [mask](const V& v) { return masked_fill(v[0], mask, 2.0); }, {x}},
      {"dropout", [](const V& v) { Generator g(3); return dropout(v[0], 0.5, g); }, {x}},
      {"reshape", [](const V& v) { return reshape(v[0], {4, 6}); }, {cube}},
      {"transpose", [](const V& v) { return transpose(v[0], 0, 2); }, {cube}},
      {"permute", [](const V& v) { return permute(v[0], {2, 0, 1}); }, {cube}},
      {"slice", [](const V& v) { return slice(v[0], 2, 1, 4, 2); }, {cube}},
      {"select", [](const V& v) { return select(v[0], 1, -1); }, {cube}},
      {"expand", [](const V& v) { return expand(v[0], {2, 3, 4}); }, {random({3, 1}, 13)}},
      {"squeeze/unsqueeze", [](const V& v) { return unsqueeze(squeeze(v[0], 1), 0); }, {random({3, 1, 2}, 14)}},
      {"concat", [](const V& v) { return concat({v[0], v[1]}, 1); }, {x, random({2, 1}, 15)}},
      {"stack", [](const V& v) { return stack({v[0], v[1]}, 0); }, {x, y}},
      {"sum", [](const V& v) { return sum(v[0], {0, 2}); }, {cube}},
      {"mean", [](const V& v) { return mean(v[0], {-1}, true); }, {cube}},
      {"max", [](const V& v) { return max(v[0], {-1}); }, {cube}},
      {"var", [](const V& v) { return var(v[0], {-1}); }, {cube}},
      {"logsumexp", [](const V& v) { return logsumexp(v[0], {1}); }, {cube}},
      {"index_select (repeated rows)", [ids](const V& v) { return index_select(v[0], 0, ids); }, {random({3, 4}, 16)}},
      {"gather", [](const V& v) { return gather(v[0], 1, tensor({1, 1, 0, 2}, {2, 2}, DType::Int64)); }, {x}},
      {"softmax", [](const V& v) { return softmax(v[0]); }, {cube}},
      {"log_softmax", [](const V& v) { return log_softmax(v[0], 1); }, {cube}},
      {"layer_norm", [](const V& v) { return layer_norm(v[0], v[1], v[2]); }, {cube, random({4}, 17), random({4}, 18)}},
      {"cross_entropy (smoothing, ignore index)",
       [targets](const V& v) { return cross_entropy(v[0], targets, {.ignore_index = 0, .label_smoothing = 0.1}); },
       {random({4, 3}, 19, -2, 2)}},
  };
}

}  // namespace gradformer
