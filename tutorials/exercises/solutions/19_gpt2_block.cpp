// The reference solution of tutorials/exercises/19_gpt2_block.cpp (what the GPT-2 import does to each
// block: the names mapped, each Conv1D weight transposed into a Linear's).
#include <string>

#include "exercises.h"

namespace exercises {

using namespace gradformer;

StateDict gpt2_block(const StateDict& gpt2, int64_t i) {
  const std::string from = "h." + std::to_string(i) + ".", to = "decoder.layers." + std::to_string(i) + ".";
  const auto weight = [&](const std::string& name) { return gpt2.at(from + name).transpose(0, 1).contiguous(); };
  const auto as_is = [&](const std::string& name) { return gpt2.at(from + name); };
  return {{to + "norm1.weight", as_is("ln_1.weight")},
          {to + "norm1.bias", as_is("ln_1.bias")},
          {to + "self_attn.in_proj_weight", weight("attn.c_attn.weight")},  // [d, 3d] -> [3d, d]
          {to + "self_attn.in_proj_bias", as_is("attn.c_attn.bias")},
          {to + "self_attn.out_proj.weight", weight("attn.c_proj.weight")},
          {to + "self_attn.out_proj.bias", as_is("attn.c_proj.bias")},
          {to + "norm2.weight", as_is("ln_2.weight")},
          {to + "norm2.bias", as_is("ln_2.bias")},
          {to + "linear1.weight", weight("mlp.c_fc.weight")},  // [d, d_ff] -> [d_ff, d]
          {to + "linear1.bias", as_is("mlp.c_fc.bias")},
          {to + "linear2.weight", weight("mlp.c_proj.weight")},  // [d_ff, d] -> [d, d_ff]
          {to + "linear2.bias", as_is("mlp.c_proj.bias")}};
}

}  // namespace exercises
