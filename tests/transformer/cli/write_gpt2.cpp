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
    add("wte.weight", {V, d}, 0, 0.5), add("wpe.weight", {n_ctx, d}, 0, 0.3);
    for (int64_t i = 0; i < layers; ++i) {
      const std::string h = "h." + std::to_string(i) + ".";
      add(h + "ln_1.weight", {d}, 1, 0.2), add(h + "ln_1.bias", {d}, 0, 0.1);
      add(h + "attn.c_attn.weight", {d, 3 * d}, 0, 0.4), add(h + "attn.c_attn.bias", {3 * d}, 0, 0.1);
      add(h + "attn.c_proj.weight", {d, d}, 0, 0.3), add(h + "attn.c_proj.bias", {d}, 0, 0.1);
      add(h + "ln_2.weight", {d}, 1, 0.2), add(h + "ln_2.bias", {d}, 0, 0.1);
      add(h + "mlp.c_fc.weight", {d, d_ff}, 0, 0.3), add(h + "mlp.c_fc.bias", {d_ff}, 0, 0.1);
      add(h + "mlp.c_proj.weight", {d_ff, d}, 0, 0.15), add(h + "mlp.c_proj.bias", {d}, 0, 0.1);
      t["transformer." + h + "attn.bias"] = causal_mask(n_ctx).to(DType::Float32).reshape({1, 1, n_ctx, n_ctx});
      t["transformer." + h + "attn.masked_bias"] = full({}, -1e4);
    }
    add("ln_f.weight", {d}, 1, 0.2), add("ln_f.bias", {d}, 0, 0.1);
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
