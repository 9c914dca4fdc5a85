// gradformer import: an encoder-decoder's weights saved elsewhere (a PyTorch state dict as
// .safetensors) into a gradformer checkpoint that translate, score and trace take; with --gpt2,
// GPT-2's released weights (import_gpt2_command.cpp).
#include <iostream>
#include <string_view>

#include "transformer/cli/commands.h"
#include "transformer/cli/flags.h"
#include "transformer/store/import_weights.h"

namespace gradformer {
namespace {

constexpr const char* kSummary =
    "Turn an encoder-decoder's weights saved elsewhere into a gradformer checkpoint: a .safetensors file of\n"
    "tensors only (e.g. a PyTorch state dict saved with safetensors' save_file) under the names gradformer's\n"
    "checkpoints use: src_embed.weight [V_src, d], tgt_embed.weight [V_tgt, d], generator.weight [V_tgt, d],\n"
    "generator.bias [V_tgt], encoder.layers.{i}.self_attn.{in_proj_weight [3d, d], in_proj_bias [3d],\n"
    "out_proj.weight, out_proj.bias}, .linear1.weight [d_ff, d] .bias, .linear2.weight [d, d_ff] .bias,\n"
    ".norm1.* .norm2.*, decoder.layers.{i}.{self_attn, multihead_attn, linear1, linear2, norm1, norm2, norm3}.*,\n"
    "encoder.norm.* and decoder.norm.* with pre-LN, positional_encoding.weight [max_len, d] with learned\n"
    "positions: PyTorch's nn.TransformerEncoderLayer / TransformerDecoderLayer names, as chapter 14 shows.\n"
    "\n"
    "The shapes tell d_model, d_ff, the layers, both vocabulary sizes, whether the embeddings are tied (no\n"
    "tgt_embed.weight and generator.weight, or both identical to src_embed.weight), pre- or post-LN\n"
    "(encoder.norm.weight present or not), learned positions and the dtype. What they cannot tell is given\n"
    "by flags: --heads, --source-eos, the vocabularies. --d-model, --d-ff, --layers, --norm and --tied are\n"
    "optional checks: one that contradicts the shapes is an error naming both. Missing, unexpected and\n"
    "mis-shaped tensors are listed in one error.\n"
    "\n"
    "A vocabulary file has one token per line, the line number minus one being the token's id: <pad> <s>\n"
    "</s> <unk> on lines 1 to 4 (ids 0 to 3, what gradformer's batches use), then the other tokens; as many\n"
    "lines as the embedding has rows. A checkpoint's vocab.source and vocab.target metadata have this form.\n"
    "\n"
    "GPT-2's released weights: gradformer import --gpt2 model.safetensors --out gpt2.safetensors (see\n"
    "gradformer import --gpt2 --help). A hub folder of Llama, Qwen2 or Mistral: gradformer import --hf DIR\n"
    "--out F.safetensors (see gradformer import --hf --help).";

// "--flag V contradicts the weights: <evidence>" when the flag was given and is not `inferred`.
void check_flag(const Flags& f, const char* flag, const std::string& given, const std::string& inferred,
                const std::string& evidence) {
  if (f.given(flag) && given != inferred)
    throw UsageError(message("import: ", flag, " ", f.text(flag), " contradicts the weights: ", evidence));
}

std::string shape_of(const StateDict& tensors, const std::string& name) {
  return message(name, " is ", tensors.at(name).shape());
}

}  // namespace

int import_command(int argc, char** argv) {
  for (int i = 2; i < argc; ++i)
    if (std::string_view(argv[i]) == "--gpt2" || std::string_view(argv[i]).rfind("--gpt2=", 0) == 0)
      return import_gpt2_command(argc, argv);
  for (int i = 2; i < argc; ++i)
    if (std::string_view(argv[i]) == "--hf" || std::string_view(argv[i]).rfind("--hf=", 0) == 0)
      return import_hub_command(argc, argv);
  Flags f("import", kSummary);
  f.add("--weights", "", "the .safetensors file of tensors to import (required)");
  f.add("--src-vocab", "", "the source vocabulary file, one token per line (required)");
  f.add("--tgt-vocab", "", "the target vocabulary file (required; the same file when the embeddings are tied)");
  f.add("--heads", "", "attention heads h, which must divide d_model (required: no shape tells it)");
  f.add("--source-eos", "",
        "yes: the model was trained with </s> after every source sentence (as gradformer trains); no: with the "
        "words only. Required: no shape tells it, and the wrong one quietly gives worse translations. Stored as "
        "data.source_eos; translate, score and trace follow it");
  f.add("--out", "", "the gradformer checkpoint to write (required)");
  f.add_switch("--force", "replace --out if it exists");
  f.add("--max-len", "512",
        "the longest sequence the model takes (sinusoidal positions; learned ones: positional_encoding.weight's rows)");
  f.add("--activation", "relu", "the feed-forward activation: relu or gelu (no shape tells it)");
  f.add("--dropout", "0.1", "dropout, stored for further training (translating and scoring use none)");
  f.add("--d-model", "", "check: d_model, the columns of src_embed.weight");
  f.add("--d-ff", "", "check: d_ff, the rows of encoder.layers.0.linear1.weight");
  f.add("--layers", "", "check: the layers on each side, encoder.layers.{i}");
  f.add("--norm", "", "check: pre or post (pre-LN has encoder.norm.weight)");
  f.add("--tied", "", "check: yes or no, whether the embeddings are tied");
  f.add("--gpt2", "", "GPT-2's model.safetensors instead: a decoder-only model (gradformer import --gpt2 --help)");
  f.add("--hf", "",
        "a Hugging Face hub folder of a Llama-family model instead (llama, qwen2, mistral): a decoder-only model "
        "(gradformer import --hf --help)");
  if (!f.parse(argc, argv)) {
    std::cout << f.help();
    return 0;
  }
  for (const char* required : {"--weights", "--src-vocab", "--tgt-vocab", "--heads", "--source-eos", "--out"})
    if (!f.has(required))
      throw UsageError(
          message("import: ", required,
                  " is required (--weights, --src-vocab, --tgt-vocab, --heads, --source-eos and --out are)"));
  const bool source_eos = f.choice("--source-eos", {"yes", "no"}) == "yes";
  const std::string activation = f.choice("--activation", {"relu", "gelu"});
  const std::string path = f.text("--weights");
  refuse_output_over_input("import", "--out", f.text("--out"), {path, f.text("--src-vocab"), f.text("--tgt-vocab")},
                           "one of the files to import", "the checkpoint");
  check_output_flag("import", "--out", f.text("--out"), f.on("--force"));

  const SafetensorsFile file = read_weights(path);
  const WeightShapes s = infer_shapes(file.tensors, path);
  check_flag(f, "--d-model", f.has("--d-model") ? std::to_string(f.integer("--d-model")) : "",
             std::to_string(s.d_model), message(shape_of(file.tensors, "src_embed.weight"), ": d_model ", s.d_model));
  check_flag(f, "--d-ff", f.has("--d-ff") ? std::to_string(f.integer("--d-ff")) : "", std::to_string(s.d_ff),
             message(shape_of(file.tensors, "encoder.layers.0.linear1.weight"), ": d_ff ", s.d_ff));
  check_flag(f, "--layers", f.has("--layers") ? std::to_string(f.integer("--layers")) : "", std::to_string(s.layers),
             message("encoder.layers.0 to encoder.layers.", s.layers - 1, ": ", s.layers, " layers"));
  const std::string norm = s.norm == NormPlacement::Pre ? "pre" : "post";
  check_flag(f, "--norm", f.has("--norm") ? f.choice("--norm", {"pre", "post"}) : "", norm,
             s.norm == NormPlacement::Pre ? "encoder.norm.weight is present: pre-LN"
                                          : "no encoder.norm.weight (pre-LN's final LayerNorm): post-LN");
  check_flag(f, "--tied", f.has("--tied") ? f.choice("--tied", {"yes", "no"}) : "", s.tie_embeddings ? "yes" : "no",
             s.tie_embeddings ? "tgt_embed.weight and generator.weight are absent or equal to src_embed.weight: tied"
                              : "tgt_embed.weight or generator.weight is there and differs from src_embed.weight");
  if (s.positions == Positions::Learned)
    check_flag(f, "--max-len", std::to_string(f.integer("--max-len")), std::to_string(s.max_len),
               message(shape_of(file.tensors, "positional_encoding.weight"), ": max_len ", s.max_len));

  CheckpointInfo info;
  TransformerConfig& c = info.config;
  c.src_vocab = s.src_vocab, c.tgt_vocab = s.tgt_vocab, c.d_model = s.d_model, c.d_ff = s.d_ff, c.layers = s.layers;
  c.norm = s.norm, c.tie_embeddings = s.tie_embeddings, c.positions = s.positions, c.dtype = s.dtype;
  c.heads = f.integer("--heads");
  c.max_len = s.positions == Positions::Learned ? s.max_len : f.integer("--max-len");
  c.activation = activation == "gelu" ? Activation::GELU : Activation::ReLU;
  c.dropout = f.number("--dropout");
  try {
    c.validate();
  } catch (const ValueError& e) {
    throw UsageError(message("import: the weights with --heads ", f.text("--heads"), ", --max-len ", c.max_len,
                             " and --dropout ", f.text("--dropout"), " make a model the library refuses: ", e.what()));
  }
  info.source_tokenizer = Vocab::read_file(f.text("--src-vocab"));
  info.target_tokenizer = Vocab::read_file(f.text("--tgt-vocab"));
  info.source_eos = source_eos;

  const LoadedCheckpoint imported = import_weights(file.tensors, info, path);
  save_checkpoint(f.text("--out"), *imported.model, /*optimizer_state=*/{}, imported.info);
  std::cout << "imported " << path << ": an encoder-decoder with d_model " << c.d_model << ", d_ff " << c.d_ff << ", "
            << c.layers << (c.layers == 1 ? " layer" : " layers") << " a side, " << c.heads
            << (c.heads == 1 ? " head" : " heads") << ", " << norm << "-LN, " << (c.tie_embeddings ? "tied" : "untied")
            << " embeddings, vocabularies of " << c.src_vocab << " and " << c.tgt_vocab << " tokens, sources "
            << (source_eos ? "ending in </s>" : "without </s>") << "\n"
            << "wrote " << f.text("--out") << " (gradformer translate --checkpoint " << f.text("--out") << ")\n";
  return 0;
}

}  // namespace gradformer
