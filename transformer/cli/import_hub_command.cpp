// gradformer import --hf: a Hugging Face hub folder of the Llama family (Llama, Qwen2, Mistral) into
// a decoder-only gradformer checkpoint (transformer/store/import_hub.h) with its tokenizer inside;
// a folder of GPT-2 goes to import --gpt2.
#include <filesystem>
#include <iostream>

#include "transformer/cli/commands.h"
#include "transformer/cli/flags.h"
#include "transformer/store/import_gpt2.h"
#include "transformer/store/import_hub.h"

namespace gradformer {

namespace {

constexpr const char* kSummary =
    "Turn a model folder from the Hugging Face hub into a gradformer checkpoint of a decoder-only model,\n"
    "with its tokenizer inside, that generate, score --text, trace and params take.\n"
    "\n"
    "The folder, as the hub holds it (download every file of the repository into one directory):\n"
    "config.json, model.safetensors or model.safetensors.index.json and the shards it names, and\n"
    "tokenizer.json. config.json's model_type says what the model is: llama, qwen2 or mistral (without a\n"
    "sliding window) are read here; gpt2 is GPT-2's, read as import --gpt2 reads it.\n"
    "\n"
    "The block is Llama's: pre-LN with RMSNorm (rms_norm_eps), rotary positions (rope_theta, and\n"
    "rope_scaling of type llama3 or none), the SwiGLU feed-forward network (intermediate_size), grouped-query\n"
    "attention (num_key_value_heads, head_dim), biases as the config says (Qwen2: on q, k and v), the output\n"
    "tied to the embedding when tie_word_embeddings is true. A setting gradformer does not compute (another\n"
    "rope_scaling, a sliding window, experts, an activation other than silu) is refused in one line naming\n"
    "the key and its value. float32, float16 and bfloat16 tensors are read, as float32.\n"
    "\n"
    "A small model to try: HuggingFaceTB/SmolLM2-135M (135M parameters, 270 MB in bfloat16, 540 MB as\n"
    "the float32 checkpoint): gradformer import --hf SmolLM2-135M/ --out smollm2.safetensors, then\n"
    "gradformer generate --checkpoint smollm2.safetensors --prompt \"The capital of France is\".";

void print_import(const HubImport& h, const HubConfig& config, const std::string& dir, const std::string& out) {
  const TransformerConfig& c = h.info.config;
  std::cout << "imported " << dir << ": " << hub_model_type_name(config.model_type) << " with a vocabulary of "
            << c.tgt_vocab << " tokens, context " << c.max_len << ", d_model " << c.d_model << ", " << c.layers
            << " layers, " << c.heads << " heads, " << c.layer().kv_heads() << " key/value heads of "
            << c.layer().head_dim() << ", d_ff " << c.d_ff << "\n"
            << "  RMSNorm eps " << c.norm_eps << ", rope theta " << c.block.rope_theta
            << (c.block.rope_scaling.factor > 0 ? " (llama3 scaling)" : "") << ", "
            << (c.block.bias == Bias::None        ? "no biases"
                : c.block.bias == Bias::QKV       ? "biases on q, k and v"
                : c.block.bias == Bias::Attention ? "biases on the attention's projections"
                                                  : "biases on every projection")
            << ", output " << (c.tie_embeddings ? "tied to the embedding" : "lm_head.weight (untied)") << "\n";
  if (!h.check.ignored.empty()) std::cout << "  left out: " << h.check.ignored.size() << " rotary_emb buffers\n";
  std::cout << "  parameters: " << h.model->parameter_count() << "\n"
            << "  tokenizer: " << h.info.target_tokenizer.size() << " tokens from " << dir << "/tokenizer.json\n"
            << "wrote " << out << " (gradformer generate --checkpoint " << out
            << " --prompt \"...\"; gradformer params --checkpoint " << out << ")\n";
}

}  // namespace

int import_hub_command(int argc, char** argv) {
  Flags f("import --hf", kSummary);
  f.add("--hf", "",
        "the hub model's folder: config.json, model.safetensors (or its shards), tokenizer.json (required)");
  f.add("--out", "", "the gradformer checkpoint to write (required)");
  f.add_switch("--force", "replace --out if it exists");
  if (!f.parse(argc, argv)) {
    std::cout << f.help();
    return 0;
  }
  if (!f.has("--hf") || !f.has("--out"))
    throw UsageError("import --hf: --hf DIR and --out FILE are required (gradformer import --hf --help)");
  const std::string dir = f.text("--hf"), out = f.text("--out");
  const HubConfig config = read_hub_config((std::filesystem::path(dir) / "config.json").string());
  if (config.model_type == HubModelType::Gpt2) {
    std::cout << dir << " holds GPT-2 (model_type gpt2): importing it as import --gpt2 does\n";
    Gpt2Files files;
    files.model = dir;
    refuse_output_over_input("import --hf", "--out", out, gpt2_input_paths(files), "one of the files to import",
                             "the checkpoint");
    check_output_flag("import --hf", "--out", out, f.on("--force"));
    const Gpt2Import imported = import_gpt2_files(files);
    save_checkpoint(out, *imported.model, imported.info.config, /*optimizer_state=*/{}, imported.info);
    std::cout << "wrote " << out << "\n";
    return 0;
  }
  refuse_output_over_input("import --hf", "--out", out, hub_folder_paths(dir), "one of the files to import",
                           "the checkpoint");
  check_output_flag("import --hf", "--out", out, f.on("--force"));
  const HubTensors tensors = open_hub_tensors(dir);
  const Tokenizer tokenizer = Tokenizer::read_hub_file((std::filesystem::path(dir) / "tokenizer.json").string());
  const HubImport imported = import_hub(config, tensors, tokenizer);
  save_checkpoint(out, *imported.model, imported.info.config, /*optimizer_state=*/{}, imported.info);
  print_import(imported, config, dir, out);
  return 0;
}

}  // namespace gradformer
