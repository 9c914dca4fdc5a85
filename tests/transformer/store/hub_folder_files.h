// The files the hub folder tests write (test_hub_config.cpp, test_hub_folder.cpp): a tiny Llama's
// config.json, its tensors, model.safetensors or two shards and their index, one shard written by
// hand in BF16 and F16. Every name, shape and value here is the test's own, from transformers' names.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "../train/training_helpers.h"
#include "hub_config_text.h"
#include "nn/safetensors.h"

namespace hub_test {

using namespace gradformer;
using test::TempDir;

// ---- safetensors files ------------------------------------------------------------------------

// Values a BF16 and an F16 hold exactly, with their bits in each.
struct Exact {
  float value;
  uint16_t bf16, f16;
};
inline constexpr Exact kExact[] = {{1.5f, 0x3FC0, 0x3E00},
                                   {-2.0f, 0xC000, 0xC000},
                                   {0.25f, 0x3E80, 0x3400},
                                   {3.0f, 0x4040, 0x4200},
                                   {0.0f, 0x0000, 0x0000}};
inline constexpr size_t kExactCount = sizeof(kExact) / sizeof(kExact[0]);

// The k-th element of a tensor whose elements start at kExact[start].
inline const Exact& element(size_t start, int64_t k) { return kExact[(start + static_cast<size_t>(k)) % kExactCount]; }

inline Tensor filled(const Shape& shape, size_t start) {
  Tensor t = Tensor::empty(shape);
  for (int64_t k = 0; k < t.numel(); ++k) t.data<float>()[k] = element(start, k).value;
  return t;
}

// One tensor of a file written by hand: its dtype's name as the format writes it, its bytes.
struct RawTensor {
  std::string name, dtype;
  std::vector<int64_t> shape;
  std::string bytes;
};

// The elements of filled(shape, start) in BF16 or F16, little-endian.
inline RawTensor half_tensor(const std::string& name, const std::string& dtype, std::vector<int64_t> shape,
                             size_t start) {
  int64_t count = 1;
  for (int64_t n : shape) count *= n;
  std::string bytes;
  for (int64_t k = 0; k < count; ++k) {
    const uint16_t bits = dtype == "BF16" ? element(start, k).bf16 : element(start, k).f16;
    bytes += static_cast<char>(bits & 0xFF), bytes += static_cast<char>(bits >> 8);
  }
  return {name, dtype, std::move(shape), bytes};
}

// The safetensors format written out: the 8-byte length, the header padded to 8 bytes, the data.
inline void write_raw_safetensors(const std::string& path, const std::vector<RawTensor>& tensors) {
  std::string header = "{", data;
  for (const RawTensor& t : tensors) {
    std::string shape;
    for (int64_t n : t.shape) shape += (shape.empty() ? "" : ",") + std::to_string(n);
    header += (header.size() > 1 ? ",\"" : "\"") + t.name + "\":{\"dtype\":\"" + t.dtype + "\",\"shape\":[" + shape +
              "],\"data_offsets\":[" + std::to_string(data.size()) + "," +
              std::to_string(data.size() + t.bytes.size()) + "]}";
    data += t.bytes;
  }
  header += "}";
  header.append((8 - header.size() % 8) % 8, ' ');
  std::string length(8, '\0');
  for (int i = 0; i < 8; ++i) length[i] = static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  test::write_text(path, length + header + data);
}

// The tiny Llama's tensors by name and shape, written out here from transformers' names.
inline std::vector<std::pair<std::string, Shape>> tiny_llama_tensors(bool lm_head, bool qkv_bias = false) {
  std::vector<std::pair<std::string, Shape>> out = {{"model.embed_tokens.weight", {8, 4}}};
  for (int i = 0; i < 2; ++i) {
    const std::string l = "model.layers." + std::to_string(i) + ".";
    out.push_back({l + "input_layernorm.weight", {4}});
    out.push_back({l + "self_attn.q_proj.weight", {4, 4}});
    out.push_back({l + "self_attn.k_proj.weight", {2, 4}});
    out.push_back({l + "self_attn.v_proj.weight", {2, 4}});
    if (qkv_bias) {
      out.push_back({l + "self_attn.q_proj.bias", {4}});
      out.push_back({l + "self_attn.k_proj.bias", {2}});
      out.push_back({l + "self_attn.v_proj.bias", {2}});
    }
    out.push_back({l + "self_attn.o_proj.weight", {4, 4}});
    out.push_back({l + "post_attention_layernorm.weight", {4}});
    out.push_back({l + "mlp.gate_proj.weight", {6, 4}});
    out.push_back({l + "mlp.up_proj.weight", {6, 4}});
    out.push_back({l + "mlp.down_proj.weight", {4, 6}});
  }
  out.push_back({"model.norm.weight", {4}});
  if (lm_head) out.push_back({"lm_head.weight", {8, 4}});
  return out;
}

inline StateDict tiny_llama_state(bool lm_head, bool qkv_bias = false) {
  StateDict state;
  size_t start = 0;
  for (const auto& [name, shape] : tiny_llama_tensors(lm_head, qkv_bias)) state[name] = filled(shape, start++);
  return state;
}

// A folder of config.json (the tiny Llama unless given) and model.safetensors of `state`.
inline void write_single_file_folder(const TempDir& dir, const StateDict& state,
                                     const std::string& config_text = config()) {
  test::write_text(dir / "config.json", config_text);
  save_safetensors(dir / "model.safetensors", state);
}

inline std::string index_json(const std::vector<std::pair<std::string, std::string>>& places) {
  std::string map;
  for (const auto& [tensor, shard] : places) map += (map.empty() ? "\"" : ", \"") + tensor + "\": \"" + shard + "\"";
  return "{\"metadata\": {\"total_size\": 1234}, \"weight_map\": {" + map + "}}";
}

inline constexpr const char* kShard1 = "model-00001-of-00002.safetensors";
inline constexpr const char* kShard2 = "model-00002-of-00002.safetensors";

// The tiny Llama in two shards: the embedding and layer 0 in float32 (the project's writer), layer
// 1, the final norm and lm_head by hand in BF16, the final norm in F16. Returns each tensor's shard.
inline std::vector<std::pair<std::string, std::string>> write_sharded_folder(const TempDir& dir) {
  test::write_text(dir / "config.json", config());
  StateDict first;
  std::vector<RawTensor> second;
  std::vector<std::pair<std::string, std::string>> places;
  size_t start = 0;
  for (const auto& [name, shape] : tiny_llama_tensors(true)) {
    const bool in_first = name.rfind("model.embed_tokens", 0) == 0 || name.rfind("model.layers.0.", 0) == 0;
    if (in_first) first[name] = filled(shape, start);
    if (!in_first)
      second.push_back(half_tensor(name, name == "model.norm.weight" ? "F16" : "BF16", shape.to_vector(), start));
    places.emplace_back(name, in_first ? kShard1 : kShard2);
    ++start;
  }
  save_safetensors(dir / kShard1, first);
  write_raw_safetensors(dir / kShard2, second);
  test::write_text(dir / "model.safetensors.index.json", index_json(places));
  return places;
}

}  // namespace hub_test
