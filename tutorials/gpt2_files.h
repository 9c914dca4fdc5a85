// GPT-2's files as the hub distributes them, written from a gradformer model: model.safetensors under
// GPT-2's names (its Conv1D weights transposed), config.json, and a tokenizer's vocab.json and
// merges.txt. Chapter 19 writes a small random GPT-2 with them, to import it as the real one is.
#pragma once

#include <algorithm>
#include <array>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "nn/module.h"
#include "transformer/data/bpe.h"
#include "transformer/model/decoder_only.h"
#include "transformer/store/import_gpt2.h"

namespace tutorial {

using namespace gradformer;

// The tensors of a GPT-2 model file, by GPT-2's names: the importer's name table (gpt2_names),
// read the other way. GPT-2's Conv1D stores its weight [in, out] and computes x W + b; a Linear
// stores [out, in] and computes x W^T + b: each matrix is transposed.
inline StateDict gpt2_layout(const DecoderOnly& model) {
  const TransformerConfig& c = model.config();
  const StateDict mine = model.state_dict();
  StateDict file;
  for (const Gpt2Name& name : gpt2_names({c.tgt_vocab, c.d_model, c.max_len, c.layers, c.d_ff})) {
    const Tensor& parameter = mine.at(name.gradformer);  // wte.weight is also the output (tied)
    file[name.gpt2] = name.conv1d ? parameter.transpose(0, 1).contiguous() : parameter;
  }
  return file;
}

// GPT-2's bytes_to_unicode() order, which its encoder.json (the hub's vocab.json) gives the first 256
// ids: the printable bytes, which stand for themselves, then the others, which take U+0100, U+0101, ...
// in byte order; that is, the bytes sorted by the character each stands for (gpt2_byte_characters).
inline std::vector<int> gpt2_byte_order() {
  std::vector<int> order(256);
  for (int b = 0; b < 256; ++b) order[b] = b;
  const std::array<char32_t, 256>& character = gpt2_byte_characters();
  std::sort(order.begin(), order.end(), [&](int a, int b) { return character[a] < character[b]; });
  return order;
}

inline std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out + "\"";
}

// vocab.json and merges.txt as the hub has them, for 256 bytes, a few merges and <|endoftext|>.
inline void write_toy_tokenizer(const std::filesystem::path& dir,
                                const std::vector<std::pair<std::string, std::string>>& merges) {
  std::vector<std::string> tokens;
  for (int b : gpt2_byte_order()) tokens.push_back(gpt2_bytes_to_text(std::string(1, static_cast<char>(b))));
  std::ofstream merges_txt(dir / "merges.txt", std::ios::binary);
  merges_txt << "#version: 0.2\n";
  for (const auto& [left, right] : merges) {
    merges_txt << gpt2_bytes_to_text(left) << " " << gpt2_bytes_to_text(right) << "\n";
    tokens.push_back(gpt2_bytes_to_text(left + right));
  }
  tokens.push_back("<|endoftext|>");
  std::ofstream vocab_json(dir / "vocab.json", std::ios::binary);
  vocab_json << "{";
  for (size_t i = 0; i < tokens.size(); ++i) vocab_json << (i ? ", " : "") << json_string(tokens[i]) << ": " << i;
  vocab_json << "}";
}

// config.json as the hub has it beside model.safetensors: the import reads the heads from it (the
// shapes tell everything else) and checks its other fields against the shapes.
inline void write_config_json(const std::filesystem::path& path, const TransformerConfig& c) {
  std::ofstream out(path);
  out << "{\"model_type\": \"gpt2\", \"n_head\": " << c.heads << ", \"n_embd\": " << c.d_model
      << ", \"n_layer\": " << c.layers << ", \"n_positions\": " << c.max_len << ", \"n_ctx\": " << c.max_len
      << ", \"vocab_size\": " << c.tgt_vocab
      << ", \"layer_norm_epsilon\": 1e-05, \"activation_function\": \"gelu_new\"}\n";
}

}  // namespace tutorial
