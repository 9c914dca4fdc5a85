#include "transformer/model/op_checks.h"

#include "autograd/views.h"
#include "transformer/model/attention.h"
#include "transformer/model/masks.h"

namespace gradformer {

namespace {

using V = std::vector<Variable>;

Tensor random(const Shape& shape, uint64_t seed) {
  Generator gen(seed);
  return uniform(shape, -1, 1, gen, DType::Float64);
}

// attention(q, k, v) with a fixed mask, as a function of q, k and v
GradcheckFunction attention_with(const Tensor& mask) {
  return [mask](const V& x) { return scaled_dot_product_attention(x[0], x[1], x[2], mask).output; };
}

}  // namespace

std::vector<OpCheck> model_op_checks() {
  // [B, 1, 1, S]: the second sentence's last two keys are padding
  const Tensor padding =
      padding_mask(from_vector(std::vector<int64_t>{1, 2, 3, 4, 1, 2, 0, 0}, {2, 4}), 0).unsqueeze(1);
  std::vector<OpCheck> checks;
  // q [B, H, Tq, d_k], k [B, H, Tk, d_k], v [B, H, Tk, d_v]
  checks.push_back({"scaled_dot_product_attention (padding mask)",
                    attention_with(padding),
                    {random({2, 2, 3, 4}, 1), random({2, 2, 4, 4}, 2), random({2, 2, 4, 3}, 3)}});
  checks.push_back({"scaled_dot_product_attention (causal mask)",
                    attention_with(causal_mask(4)),
                    {random({2, 2, 4, 4}, 4), random({2, 2, 4, 4}, 5), random({2, 2, 4, 3}, 6)}});
  checks.push_back({"scaled_dot_product_attention (no mask, rank 3)",
                    attention_with(Tensor()),
                    {random({3, 2, 4}, 7), random({3, 5, 4}, 8), random({3, 5, 2}, 9)}});
  // The heads of a projection are strided views: [B, T, H, d_k] seen as [B, H, T, d_k].
  checks.push_back({"scaled_dot_product_attention (heads as strided views)",
                    [padding](const V& x) {
                      return scaled_dot_product_attention(transpose(x[0], 1, 2), transpose(x[1], 1, 2),
                                                          transpose(x[2], 1, 2), padding)
                          .output;
                    },
                    {random({2, 3, 2, 4}, 10), random({2, 4, 2, 4}, 11), random({2, 4, 2, 4}, 12)}});
  // Each call starts the generator from the same state, so every call drops the same weights.
  checks.push_back(
      {"scaled_dot_product_attention (dropout)",
       [padding](const V& x) {
         Generator gen(3);
         return scaled_dot_product_attention(x[0], x[1], x[2], padding, {.dropout_p = 0.3, .dropout_gen = &gen}).output;
       },
       {random({2, 2, 3, 4}, 13), random({2, 2, 4, 4}, 14), random({2, 2, 4, 3}, 15)}});
  return checks;
}

}  // namespace gradformer
