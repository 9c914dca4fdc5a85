// config.json texts of a tiny Llama for the hub tests (hub_folder_files.h) and the program that writes
// a hub folder (cli/write_llama.cpp): the test's own keys and values, from transformers' names.
#pragma once

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

namespace hub_test {

// ---- config.json ------------------------------------------------------------------------------

using Members = std::vector<std::pair<std::string, std::string>>;  // key, JSON text of its value

// A tiny Llama: V 8, d 4, 2 heads and 1 key/value head of 2, ff 6, 2 layers, untied.
inline const Members kLlama = {{"architectures", "[\"LlamaForCausalLM\"]"},
                               {"model_type", "\"llama\""},
                               {"vocab_size", "8"},
                               {"hidden_size", "4"},
                               {"intermediate_size", "6"},
                               {"num_hidden_layers", "2"},
                               {"num_attention_heads", "2"},
                               {"num_key_value_heads", "1"},
                               {"max_position_embeddings", "16"},
                               {"rms_norm_eps", "1e-05"},
                               {"rope_theta", "500000.0"},
                               {"tie_word_embeddings", "false"},
                               {"hidden_act", "\"silu\""},
                               {"bos_token_id", "1"},
                               {"eos_token_id", "[2, 7]"},
                               {"torch_dtype", "\"bfloat16\""},
                               {"transformers_version", "\"4.44.0\""},
                               {"initializer_range", "0.02"},
                               {"use_cache", "true"},
                               {"pretraining_tp", "1"},
                               {"attention_dropout", "0.0"},
                               {"pad_token_id", "null"},
                               {"attention_bias", "false"},
                               {"mlp_bias", "false"}};

// `base` with each change made (a key replaced, or added at the end) and the `removed` keys left out.
inline std::string config(const Members& changes = {}, const std::vector<std::string>& removed = {},
                          const Members& base = kLlama) {
  Members members = base;
  for (const auto& [key, value] : changes) {
    bool replaced = false;
    for (auto& member : members)
      if (member.first == key) member.second = value, replaced = true;
    if (!replaced) members.emplace_back(key, value);
  }
  std::string text = "{";
  for (const auto& [key, value] : members)
    if (std::find(removed.begin(), removed.end(), key) == removed.end())
      text += (text.size() > 1 ? ", \"" : "\"") + key + "\": " + value;
  return text + "}";
}

}  // namespace hub_test
