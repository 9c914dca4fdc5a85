#include "transformer/train/encoder_only_checkpoint.h"

#include <sstream>

#include "tensor/saved_state.h"

namespace gradformer {
namespace {

constexpr const char* kFormat = "gradformer-checkpoint-1";
constexpr const char* kOptimizerPrefix = "optimizer.";

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

}  // namespace

std::string checkpoint_arch(const std::map<std::string, std::string>& m) {
  const auto it = m.find("config.arch");
  return it == m.end() ? "encoder-decoder" : it->second;
}

std::map<std::string, std::string> encoder_only_config_to_metadata(const EncoderOnlyConfig& c) {
  return {{"config.arch", kEncoderOnlyArch},
          {"config.vocab", std::to_string(c.vocab)},
          {"config.d_model", std::to_string(c.d_model)},
          {"config.d_ff", std::to_string(c.d_ff)},
          {"config.heads", std::to_string(c.heads)},
          {"config.layers", std::to_string(c.layers)},
          {"config.dropout", exact_text(c.dropout)},
          {"config.norm", c.norm == NormPlacement::Pre ? "pre" : "post"},
          {"config.max_len", std::to_string(c.max_len)},
          {"config.positions", c.positions == Positions::Learned ? "learned" : "sinusoidal"},
          {"config.activation", c.activation == Activation::GELU ? "gelu" : "relu"},
          {"config.types", std::to_string(c.types)},
          {"config.embed_norm", c.embed_norm ? "true" : "false"},
          {"config.tie_embeddings", c.tie_embeddings ? "true" : "false"},
          {"config.classes", std::to_string(c.classes)},
          {"config.dtype", std::string(name(c.dtype))}};
}

EncoderOnlyConfig encoder_only_config_from_metadata(const std::map<std::string, std::string>& m,
                                                    const std::string& source) {
  const SavedState saved(m, source);
  auto one_of = [&](const char* key, const char* a, const char* b) {
    const std::string& v = saved.text(key);
    if (v != a && v != b)
      throw CheckpointError(message(source, ": ", key, " must be ", a, " or ", b, ", got '", v, "'"));
    return v == a;
  };
  EncoderOnlyConfig c;
  c.vocab = saved.integer("config.vocab"), c.d_model = saved.integer("config.d_model"),
  c.d_ff = saved.integer("config.d_ff");
  c.heads = saved.integer("config.heads"), c.layers = saved.integer("config.layers"),
  c.max_len = saved.integer("config.max_len");
  c.types = saved.integer("config.types"), c.classes = saved.integer("config.classes");
  c.dropout = saved.number("config.dropout");
  c.norm = one_of("config.norm", "pre", "post") ? NormPlacement::Pre : NormPlacement::Post;
  c.positions = one_of("config.positions", "learned", "sinusoidal") ? Positions::Learned : Positions::Sinusoidal;
  c.activation = one_of("config.activation", "gelu", "relu") ? Activation::GELU : Activation::ReLU;
  c.embed_norm = one_of("config.embed_norm", "true", "false");
  c.tie_embeddings = one_of("config.tie_embeddings", "true", "false");
  c.dtype = one_of("config.dtype", "float64", "float32") ? DType::Float64 : DType::Float32;
  try {
    c.validate();
  } catch (const Error& e) {
    throw CheckpointError(message(source, ": the stored configuration is invalid: ", e.what()));
  }
  return c;
}

void save_encoder_only_checkpoint(const std::string& path, const EncoderOnly& model, const StateDict& optimizer_state,
                                  const EncoderOnlyCheckpointInfo& info) {
  StateDict tensors = model.state_dict();
  for (const auto& [name, t] : optimizer_state) tensors.emplace(kOptimizerPrefix + name, t);
  std::map<std::string, std::string> metadata = encoder_only_config_to_metadata(model.config());
  metadata["format"] = kFormat;
  metadata["vocab.source"] = info.vocab.to_text();
  std::string labels;
  for (const auto& label : info.labels) labels += label + "\n";
  metadata["labels"] = labels;
  for (const auto& [key, value] : info.state) metadata["state." + key] = value;
  save_safetensors(path, tensors, metadata);
}

LoadedEncoderOnly load_encoder_only_checkpoint(const std::string& path, const std::string& what) {
  SafetensorsFile file = load_safetensors(path);
  const auto& m = file.metadata;
  const SavedState saved(m, path);
  if (saved.text("format") != kFormat)
    throw CheckpointError(
        message(path, ": unknown checkpoint format '", saved.text("format"), "' (expected ", kFormat, ")"));
  if (const std::string arch = checkpoint_arch(m); arch != kEncoderOnlyArch)
    throw CheckpointError(
        message(path, ": an ", arch, " checkpoint (config.arch), but ", what, " needs an encoder-only one"));
  LoadedEncoderOnly out;
  out.info.config = encoder_only_config_from_metadata(m, path);
  try {
    out.info.vocab = Vocab::from_text(saved.text("vocab.source"), path + " (vocab.source)");
  } catch (const DataError& e) {
    throw CheckpointError(e.what());
  }
  if (out.info.vocab.size() != out.info.config.vocab)
    throw CheckpointError(message(path, ": a vocabulary of ", out.info.vocab.size(),
                                  " tokens does not match config.vocab ", out.info.config.vocab));
  out.info.labels = lines(saved.text("labels"));
  if (static_cast<int64_t>(out.info.labels.size()) != out.info.config.classes)
    throw CheckpointError(
        message(path, ": ", out.info.labels.size(), " labels for config.classes ", out.info.config.classes));
  StateDict params;
  for (auto& [name, t] : file.tensors) {
    if (name.rfind(kOptimizerPrefix, 0) == 0)
      out.optimizer_state.emplace(name.substr(std::string(kOptimizerPrefix).size()), t);
    else
      params.emplace(name, t);
  }
  for (const auto& [key, value] : m)
    if (key.rfind("state.", 0) == 0) out.info.state[key.substr(6)] = value;
  out.model = std::make_unique<EncoderOnly>(out.info.config, 0, skip_init);
  try {
    out.model->load_state_dict(params);
  } catch (const Error& e) {
    throw CheckpointError(message(path, ": the tensors do not fit the stored configuration: ", e.what()));
  }
  return out;
}

}  // namespace gradformer
