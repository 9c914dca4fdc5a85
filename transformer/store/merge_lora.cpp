#include "transformer/store/merge_lora.h"

#include "tensor/elementwise.h"
#include "tensor/matmul.h"
#include "tensor/support/files.h"

namespace gradformer {
namespace {

// Where an adapter's update goes: the weight's name and its first row (a Linear's: all its rows).
struct Target {
  std::string weight;
  int64_t first_row = 0;
};

// "P.lora." -> P.weight; "P.lora_q." / "P.lora_k." / "P.lora_v." -> P.in_proj_weight from row 0,
// H d_k, or H d_k + N d_k.
Target target_of(const std::string& adapter, const LayerConfig& c) {
  const int64_t q_rows = c.heads * c.head_dim(), kv_rows = c.kv_heads() * c.head_dim();
  const std::pair<const char*, int64_t> attention[] = {
      {"lora_q.", 0}, {"lora_k.", q_rows}, {"lora_v.", q_rows + kv_rows}};
  for (const auto& [name, first] : attention)
    if (adapter.ends_with(std::string(".") + name))
      return {adapter.substr(0, adapter.size() - std::string(name).size()) + "in_proj_weight", first};
  if (adapter.ends_with(".lora.")) return {adapter.substr(0, adapter.size() - 5) + "weight", 0};
  throw CheckpointError(message("merge_lora: ", adapter, "A is no adapter of a Linear or an attention"));
}

}  // namespace

StateDict merge_lora(const StateDict& parameters, const LayerConfig& layer) {
  const LoraOptions& lora = layer.block.lora;
  const double scale = lora.alpha / static_cast<double>(lora.rank);
  StateDict merged;
  for (const auto& [name, t] : parameters)
    if (!is_lora_parameter(name)) merged.emplace(name, t);
  for (const auto& [name, A] : parameters) {
    if (!is_lora_parameter(name) || !name.ends_with(".A")) continue;
    const std::string adapter = name.substr(0, name.size() - 1);  // "...lora_q."
    const Target target = target_of(adapter, layer);
    const Tensor& B = parameters.at(adapter + "B");
    Tensor& W = merged.at(target.weight);
    // W[rows] += (alpha / r) B A     B [out, r], A [r, in]: [out, in]
    Tensor W64 = W.to(DType::Float64).clone();  // a copy even of a float64 W: the caller's stays
    const Tensor delta = matmul(B.to(DType::Float64), A.to(DType::Float64)) * scale;
    Tensor rows = W64.narrow(0, target.first_row, delta.size(0));
    rows.copy_(rows + delta);
    W = W64.to(W.dtype());
  }
  return merged;
}

void merge_lora_checkpoint(const std::string& path, const std::string& out_path) {
  if (same_file(path, out_path))
    throw ValueError(message("merge-lora: the output ", out_path, " is the checkpoint ", path,
                             "; the merged model (no optimizer or training state) would replace it"));
  const CheckpointFile file = read_checkpoint_file(path);
  const LayerConfig layer =
      file.arch == Architecture::EncoderOnly ? file.encoder_only.config.layer() : file.info.config.layer();
  if (layer.block.lora.rank == 0)
    throw CheckpointError(message("merge-lora: ", path, " has no LoRA adapters to merge (no config.lora.rank)"));
  std::map<std::string, std::string> metadata, state;
  for (const auto& [key, value] : file.metadata) {
    if (key.rfind("config.lora.", 0) == 0) continue;
    if (key.rfind("state.", 0) != 0)
      metadata.emplace(key, value);
    else if (key.rfind("state.chat.", 0) == 0)  // how the fine-tuned model's conversations are written
      state.emplace(key.substr(6), value);
  }
  save_checkpoint_parameters(out_path, merge_lora(file.parameters, layer), /*optimizer_state=*/{}, std::move(metadata),
                             state);
}

}  // namespace gradformer
