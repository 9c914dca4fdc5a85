// write_gpt2 DIR VOCAB [HEADS]: a small random GPT-2 in the hub's layout, as `gradformer import --gpt2`
// reads it: DIR/model.safetensors (names prefixed "transformer.", the causal-mask buffers of each
// block, lm_head.weight equal to wte; float32; 2 layers, d 16, n_ctx 32, d_ff 64, VOCAB tokens) and,
// when HEADS is given, DIR/config.json as the hub writes it (n_head HEADS).
#include <filesystem>
#include <fstream>
#include <iostream>

#include "nn/safetensors.h"
#include "tensor/elementwise.h"
#include "tensor/random.h"
#include "transformer/model/masks.h"
#include "transformer/store/import_gpt2.h"

namespace {

// Each tensor's random values, mean and scale: LayerNorm gains about 1, biases small, matrices larger.
std::pair<double, double> mean_and_scale(const std::string& name) {
  const auto ends = [&](const char* tail) { return name.ends_with(tail); };
  if (name == "wte.weight") return {0, 0.5};
  if (ends("ln_1.weight") || ends("ln_2.weight") || name == "ln_f.weight") return {1, 0.2};
  if (ends(".bias")) return {0, 0.1};
  if (ends("attn.c_attn.weight")) return {0, 0.4};
  if (ends("mlp.c_proj.weight")) return {0, 0.15};
  return {0, 0.3};  // wpe, attn.c_proj, mlp.c_fc
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gradformer;
  if (argc != 3 && argc != 4) {
    std::cerr << "usage: write_gpt2 DIR VOCAB [HEADS]\n";
    return 2;
  }
  try {
    const std::filesystem::path dir = argv[1];
    std::filesystem::create_directories(dir);
    const int64_t V = std::stoll(argv[2]), d = 16, n_ctx = 32, d_ff = 64, layers = 2;
    Generator gen(7, 0);
    StateDict t;
    const auto add = [&](const std::string& name, const Shape& shape, double mean, double scale) {
      t["transformer." + name] = randn(shape, gen) * scale + mean;
    };
    for (const Gpt2Name& name : gpt2_names({V, d, n_ctx, layers, d_ff})) {  // drawn in the table's order
      const auto [mean, scale] = mean_and_scale(name.gpt2);
      add(name.gpt2, name.shape, mean, scale);
    }
    for (int64_t i = 0; i < layers; ++i) {
      const std::string h = "h." + std::to_string(i) + ".";
      t["transformer." + h + "attn.bias"] = causal_mask(n_ctx).to(DType::Float32).reshape({1, 1, n_ctx, n_ctx});
      t["transformer." + h + "attn.masked_bias"] = full({}, -1e4);
    }
    t["lm_head.weight"] = t.at("transformer.wte.weight");
    save_safetensors(dir / "model.safetensors", t, {{"format", "pt"}});
    if (argc == 4) {
      std::ofstream config(dir / "config.json");
      config << "{\n  \"activation_function\": \"gelu_new\",\n  \"architectures\": [\"GPT2LMHeadModel\"],\n"
             << "  \"layer_norm_epsilon\": 1e-05,\n  \"n_ctx\": " << n_ctx << ",\n  \"n_embd\": " << d
             << ",\n  \"n_head\": " << argv[3] << ",\n  \"n_inner\": null,\n  \"n_layer\": " << layers
             << ",\n  \"n_positions\": " << n_ctx << ",\n  \"resid_pdrop\": 0.1,\n  \"scale_attn_weights\": true,\n"
             << "  \"summary_activation\": null,\n  \"vocab_size\": " << V << "\n}\n";
      if (!config) throw std::runtime_error("cannot write config.json");
    }
  } catch (const std::exception& e) {
    std::cerr << "write_gpt2: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
