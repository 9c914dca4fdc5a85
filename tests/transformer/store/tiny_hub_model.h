// A small random model of the Llama family in the hub's layout, for the import tests
// (test_import_hub.cpp) and the program's (cli/write_llama.cpp): its sizes (llama_reference::Sizes),
// its tensors from the test's own random numbers, and its config.json.
#pragma once

#include <cstdint>
#include <string>

#include "hub_config_text.h"
#include "llama_reference.h"
#include "nn/safetensors.h"
#include "tensor/all.h"

namespace hub_test {

using namespace gradformer;

struct Case {
  std::string name, model_type;
  llama_reference::Sizes sizes;
  bool qkv_bias = false;
};

// Uniform in [lo, hi) from a 64-bit linear congruential generator: the test's own numbers.
struct Numbers {
  uint64_t state;
  double next(double lo, double hi) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (hi - lo) * static_cast<double>(state >> 11) / 9007199254740992.0;
  }
};

inline StateDict random_state(const Case& c, int64_t kVocab, uint64_t seed) {
  const llama_reference::Sizes& s = c.sizes;
  Numbers r{seed};
  StateDict out;
  auto add = [&](const std::string& name, Shape shape, double lo, double hi) {
    Tensor t = Tensor::empty(shape);
    for (int64_t k = 0; k < t.numel(); ++k) t.data<float>()[k] = static_cast<float>(r.next(lo, hi));
    out[name] = t;
  };
  const int64_t q = s.heads * s.head_dim, kv = s.kv_heads * s.head_dim;
  add("model.embed_tokens.weight", {kVocab, s.d}, -1, 1);
  for (int64_t i = 0; i < s.layers; ++i) {
    const std::string l = "model.layers." + std::to_string(i) + ".";
    add(l + "input_layernorm.weight", {s.d}, 0.8, 1.2);
    add(l + "self_attn.q_proj.weight", {q, s.d}, -0.5, 0.5);
    add(l + "self_attn.k_proj.weight", {kv, s.d}, -0.5, 0.5);
    add(l + "self_attn.v_proj.weight", {kv, s.d}, -0.5, 0.5);
    if (c.qkv_bias) {
      add(l + "self_attn.q_proj.bias", {q}, -0.3, 0.3);
      add(l + "self_attn.k_proj.bias", {kv}, -0.3, 0.3);
      add(l + "self_attn.v_proj.bias", {kv}, -0.3, 0.3);
    }
    add(l + "self_attn.o_proj.weight", {s.d, q}, -0.5, 0.5);
    add(l + "post_attention_layernorm.weight", {s.d}, 0.8, 1.2);
    add(l + "mlp.gate_proj.weight", {s.ff, s.d}, -0.5, 0.5);
    add(l + "mlp.up_proj.weight", {s.ff, s.d}, -0.5, 0.5);
    add(l + "mlp.down_proj.weight", {s.d, s.ff}, -0.5, 0.5);
  }
  add("model.norm.weight", {s.d}, 0.8, 1.2);
  if (!s.tied) add("lm_head.weight", {kVocab, s.d}, -1, 1);
  return out;
}

/// config.json of the case, its vocabulary kVocab; eos_token_id when given (>= 0).
inline std::string config_text(const Case& c, int64_t kVocab, int64_t eos = -1) {
  const llama_reference::Sizes& s = c.sizes;
  Members m = {{"model_type", "\"" + c.model_type + "\""},
               {"vocab_size", std::to_string(kVocab)},
               {"hidden_size", std::to_string(s.d)},
               {"intermediate_size", std::to_string(s.ff)},
               {"num_hidden_layers", std::to_string(s.layers)},
               {"num_attention_heads", std::to_string(s.heads)},
               {"num_key_value_heads", std::to_string(s.kv_heads)},
               {"head_dim", std::to_string(s.head_dim)},
               {"max_position_embeddings", "64"},
               {"rms_norm_eps", gradformer::message(s.eps)},
               {"rope_theta", gradformer::message(s.theta)},
               {"tie_word_embeddings", s.tied ? "true" : "false"},
               {"hidden_act", "\"silu\""}};
  if (eos >= 0) m.push_back({"eos_token_id", std::to_string(eos)});
  if (s.scale_factor > 0)
    m.push_back(
        {"rope_scaling", gradformer::message("{\"rope_type\": \"llama3\", \"factor\": ", s.scale_factor,
                                             ", \"low_freq_factor\": ", s.low, ", \"high_freq_factor\": ", s.high,
                                             ", \"original_max_position_embeddings\": ", s.original, "}")});
  return config({}, {}, m);
}

}  // namespace hub_test
