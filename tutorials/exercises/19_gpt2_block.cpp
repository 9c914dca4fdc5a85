// Exercise (chapter 19): read one block of GPT-2's file into gradformer's names and layout.
//
// GPT-2's block i is twelve tensors, h.{i}.* (d the width, d_ff = 4 d):
//   ln_1.weight [d], ln_1.bias [d]                      -> norm1.weight, norm1.bias
//   attn.c_attn.weight [d, 3d], attn.c_attn.bias [3d]   -> self_attn.in_proj_weight [3d, d], in_proj_bias
//   attn.c_proj.weight [d, d], attn.c_proj.bias [d]     -> self_attn.out_proj.weight [d, d], .bias
//   ln_2.weight, ln_2.bias                              -> norm2.weight, norm2.bias
//   mlp.c_fc.weight [d, d_ff], mlp.c_fc.bias [d_ff]     -> linear1.weight [d_ff, d], linear1.bias
//   mlp.c_proj.weight [d_ff, d], mlp.c_proj.bias [d]    -> linear2.weight [d, d_ff], linear2.bias
// each gradformer name prefixed with decoder.layers.{i}. GPT-2's Conv1D computes x W + b with W
// [in, out]; a Linear computes x W^T + b with W [out, in]: a weight becomes its transpose (made
// contiguous: t.transpose(0, 1).contiguous()), a bias stays as it is. The rows of in_proj_weight are
// W^Q, W^K, W^V stacked; the columns of c_attn are q | k | v side by side: one transpose does it.
//   cmake --build build --target check-exercise-19_gpt2_block
// Delete the `throw` line when you write the body: it is how the checker knows that the file is
// untouched, and says so.
#include "exercises.h"

namespace exercises {

using namespace gradformer;

StateDict gpt2_block(const StateDict& gpt2, int64_t i) {
  // Your code here. gpt2.at("h." + std::to_string(i) + ".ln_1.weight") is a tensor of the file.
  (void)gpt2, (void)i;
  throw NotWrittenYet();
}

}  // namespace exercises
