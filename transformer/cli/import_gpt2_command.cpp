// gradformer import --gpt2: GPT-2's released weights into a decoder-only gradformer checkpoint
// (transformer/store/import_gpt2.h) that generate and trace take.
#include <filesystem>
#include <iostream>

#include "transformer/cli/commands.h"
#include "transformer/cli/flags.h"
#include "transformer/store/import_gpt2.h"

namespace gradformer {

namespace {

constexpr const char* kSummary =
    "Turn GPT-2's released weights into a gradformer checkpoint of a decoder-only model, with GPT-2's\n"
    "tokenizer inside, that generate, score --text and trace take.\n"
    "\n"
    "Where to get them: the Hugging Face hub's \"gpt2\" repository (https://huggingface.co/gpt2, GPT-2 small)\n"
    "holds model.safetensors, config.json, vocab.json and merges.txt: download the four into one directory.\n"
    "gpt2-medium, gpt2-large and gpt2-xl hold the same four files for the larger models. The original\n"
    "release's encoder.json and vocab.bpe (the same tokenizer under other names) are read too.\n"
    "\n"
    "The tensors, with or without the prefix \"transformer.\": wte.weight [V, d], wpe.weight [n_ctx, d],\n"
    "h.{i}.ln_1.*, h.{i}.attn.c_attn.weight [d, 3d] .bias, h.{i}.attn.c_proj.*, h.{i}.ln_2.*,\n"
    "h.{i}.mlp.c_fc.weight [d, d_ff] .bias, h.{i}.mlp.c_proj.*, ln_f.*; the causal-mask buffers\n"
    "h.{i}.attn.bias and h.{i}.attn.masked_bias are left out; lm_head.weight, when there, must be wte's copy\n"
    "(GPT-2 ties them) or becomes an untied output. GPT-2's Conv1D layers store their weight [in, out], the\n"
    "transpose of a Linear's [out, in], so c_attn, attn.c_proj, c_fc and mlp.c_proj are transposed (c_attn's\n"
    "3d outputs are q | k | v, which become the rows W^Q; W^K; W^V of self_attn.in_proj_weight).\n"
    "\n"
    "The shapes tell V, n_ctx, d, the layers and d_ff. config.json (beside the model, or --config FILE)\n"
    "tells the heads (n_head), the activation (gelu_new: GELU's tanh form) and LayerNorm's epsilon, and its\n"
    "sizes are checked against the shapes. Without a config, --heads is needed (GPT-2 small: 12, medium:\n"
    "16, large: 20, xl: 25). The model: pre-LN, learned positions, the embedding not scaled by sqrt(d),\n"
    "the output tied to wte, float32 (float64 for a float64 file).";

void print_import(const Gpt2Import& g, const std::string& path, const std::string& heads_from, const std::string& out) {
  const TransformerConfig& c = g.info.config;
  std::cout << "imported " << path << ": GPT-2 with a vocabulary of " << c.tgt_vocab << " tokens, context " << c.max_len
            << ", d_model " << c.d_model << ", " << c.layers << " layers, " << c.heads << " heads (" << heads_from
            << "), d_ff " << c.d_ff << ", " << c.dtype << "\n"
            << "  " << activation_name(c.activation) << " activation, LayerNorm eps " << c.norm_eps
            << ", embedding not scaled by sqrt(d), output "
            << (c.tie_embeddings ? "tied to wte" : "lm_head.weight (untied)") << "\n";
  if (g.prefixed) std::cout << "  names: the prefix \"transformer.\" removed\n";
  if (!g.ignored.empty())
    std::cout << "  left out: " << g.ignored.size()
              << " causal-mask buffers (h.{i}.attn.bias, h.{i}.attn.masked_bias)\n";
  std::cout << "  transposed in each layer (Conv1D [in, out] -> Linear [out, in]):\n";
  for (const std::string& t : g.transposed) std::cout << "    " << t << "\n";
  std::cout << "  parameters: " << g.model->parameter_count() << "\n"
            << "  tokenizer: " << g.info.target_tokenizer.size() << " tokens from " << g.tokenizer_source << "\n"
            << "wrote " << out << " (gradformer generate --checkpoint " << out
            << " --prompt \"...\"; gradformer params --checkpoint " << out << ")\n";
}

}  // namespace

int import_gpt2_command(int argc, char** argv) {
  Flags f("import --gpt2", kSummary);
  f.add("--gpt2", "", "GPT-2's model.safetensors, or the directory holding it (required)");
  f.add("--tokenizer", "",
        "the directory of vocab.json + merges.txt, or encoder.json + vocab.bpe (default: the model's directory)");
  f.add("--config", "", "GPT-2's config.json (default: config.json beside the model, if there is one)");
  f.add("--heads", "", "attention heads; required without a config (its n_head must then agree)");
  f.add("--out", "", "the gradformer checkpoint to write (required)");
  f.add_switch("--force", "replace --out if it exists");
  if (!f.parse(argc, argv)) {
    std::cout << f.help();
    return 0;
  }
  if (!f.has("--gpt2") || !f.has("--out"))
    throw UsageError("import --gpt2: --gpt2 MODEL and --out FILE are required (gradformer import --gpt2 --help)");
  Gpt2Files files;
  files.model = f.text("--gpt2"), files.tokenizer_dir = f.text("--tokenizer"), files.config = f.text("--config");
  if (f.has("--heads")) files.heads = f.integer_in("--heads", 1, TransformerConfig::max_heads);
  refuse_output_over_input("import --gpt2", "--out", f.text("--out"), gpt2_input_paths(files),
                           "one of the files to import", "the checkpoint");
  check_output_flag("import --gpt2", "--out", f.text("--out"), f.on("--force"));
  const Gpt2Import imported = import_gpt2_files(files);
  save_checkpoint(f.text("--out"), *imported.model, imported.info.config, /*optimizer_state=*/{}, imported.info);
  print_import(imported, files.model, files.heads ? "--heads" : "n_head in " + imported.config_source, f.text("--out"));
  return 0;
}

}  // namespace gradformer
