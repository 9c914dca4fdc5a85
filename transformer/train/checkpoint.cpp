#include "transformer/train/checkpoint.h"

#include <sstream>

#include "autograd/anomaly.h"
#include "tensor/saved_state.h"

namespace gradformer {
namespace {

constexpr const char* kFormat = "gradformer-checkpoint-1";
constexpr const char* kOptimizerPrefix = "optimizer.";
constexpr const char* kSourceEos = "data.source_eos";

// What a user holding a file of tensors only (a PyTorch state dict) should do with it.
std::string import_hint(const std::string& path) {
  return message(
      "; a file of tensors only (a PyTorch state dict) has no configuration or vocabularies: bring an "
      "encoder-decoder's weights in with gradformer import --weights ",
      path,
      " --src-vocab FILE --tgt-vocab FILE --heads H --source-eos yes|no --out FILE (see gradformer "
      "import --help)");
}

const std::string& require(const std::map<std::string, std::string>& metadata, const std::string& key,
                           const std::string& source) {
  const auto it = metadata.find(key);
  if (it == metadata.end())
    throw CheckpointError(message(source, ": not a gradformer checkpoint: no metadata '", key, "'"));
  return it->second;
}

int64_t to_int(const std::string& text, const std::string& key, const std::string& source) {
  return parse_integer(text, message(source, ": metadata '", key, "'"));
}

double to_double(const std::string& text, const std::string& key, const std::string& source) {
  return parse_number(text, message(source, ": metadata '", key, "'"));
}

}  // namespace

// The entries every architecture's configuration has, meaning the same in each.
template <class Config>
static std::map<std::string, std::string> shared_config_metadata(const Config& c) {
  return {{"config.d_model", std::to_string(c.d_model)},
          {"config.d_ff", std::to_string(c.d_ff)},
          {"config.heads", std::to_string(c.heads)},
          {"config.layers", std::to_string(c.layers)},
          {"config.dropout", exact_text(c.dropout)},
          {"config.norm", c.norm == NormPlacement::Pre ? "pre" : "post"},
          {"config.max_len", std::to_string(c.max_len)},
          {"config.tie_embeddings", c.tie_embeddings ? "true" : "false"},
          {"config.dtype", std::string(name(c.dtype))},
          {"config.activation", c.activation == Activation::GELU ? "gelu" : "relu"},
          {"config.positions", c.positions == Positions::Learned ? "learned" : "sinusoidal"}};
}

std::map<std::string, std::string> config_to_metadata(const TransformerConfig& c) {
  std::map<std::string, std::string> m = shared_config_metadata(c);
  m["config.src_vocab"] = std::to_string(c.src_vocab), m["config.tgt_vocab"] = std::to_string(c.tgt_vocab);
  m["config.arch"] = architecture_name(c.arch);
  return m;
}

namespace {

// An entry added after the first checkpoints were written: absent means the value those had.
const std::string& optional_entry(const std::map<std::string, std::string>& m, const std::string& key,
                                  const std::string& absent) {
  const auto it = m.find(key);
  return it == m.end() ? absent : it->second;
}

}  // namespace

TransformerConfig config_from_metadata(const std::map<std::string, std::string>& m, const std::string& source) {
  TransformerConfig c;
  auto integer = [&](const char* key) { return to_int(require(m, key, source), key, source); };
  c.src_vocab = integer("config.src_vocab");
  c.tgt_vocab = integer("config.tgt_vocab");
  c.d_model = integer("config.d_model");
  c.d_ff = integer("config.d_ff");
  c.heads = integer("config.heads");
  c.layers = integer("config.layers");
  c.max_len = integer("config.max_len");
  c.dropout = to_double(require(m, "config.dropout", source), "config.dropout", source);
  const std::string& norm = require(m, "config.norm", source);
  if (norm != "pre" && norm != "post")
    throw CheckpointError(message(source, ": config.norm must be pre or post, got '", norm, "'"));
  c.norm = norm == "pre" ? NormPlacement::Pre : NormPlacement::Post;
  const std::string& tie = require(m, "config.tie_embeddings", source);
  if (tie != "true" && tie != "false")
    throw CheckpointError(message(source, ": config.tie_embeddings must be true or false, got '", tie, "'"));
  c.tie_embeddings = tie == "true";
  const std::string& dtype = require(m, "config.dtype", source);
  if (dtype != "float32" && dtype != "float64")
    throw CheckpointError(message(source, ": config.dtype must be float32 or float64, got '", dtype, "'"));
  c.dtype = dtype == "float64" ? DType::Float64 : DType::Float32;
  // Checkpoints from before the Transformer family: the paper's encoder-decoder, ReLU, sinusoids.
  static const std::string encoder_decoder = "encoder-decoder", relu = "relu", sinusoidal = "sinusoidal";
  const std::string& arch = optional_entry(m, "config.arch", encoder_decoder);
  try {
    c.arch = parse_architecture(arch);
  } catch (const ValueError&) {
    throw CheckpointError(
        message(source, ": config.arch must be encoder-decoder, decoder-only or encoder-only, got '", arch, "'"));
  }
  const std::string& activation = optional_entry(m, "config.activation", relu);
  if (activation != "relu" && activation != "gelu")
    throw CheckpointError(message(source, ": config.activation must be relu or gelu, got '", activation, "'"));
  c.activation = activation == "gelu" ? Activation::GELU : Activation::ReLU;
  const std::string& positions = optional_entry(m, "config.positions", sinusoidal);
  if (positions != "sinusoidal" && positions != "learned")
    throw CheckpointError(message(source, ": config.positions must be sinusoidal or learned, got '", positions, "'"));
  c.positions = positions == "learned" ? Positions::Learned : Positions::Sinusoidal;
  try {
    c.validate();
  } catch (const Error& e) {
    throw CheckpointError(message(source, ": the stored configuration is invalid: ", e.what()));
  }
  return c;
}

// The first parameter holding a NaN or an infinity, as "name holds value", or "" if none does.
// A model like that predicts nothing (every translation empty), so it is neither written nor read.
static std::string non_finite_parameter(const StateDict& parameters) {
  for (const auto& [name, t] : parameters) {
    double value = 0;
    if (is_floating(t.dtype()) && first_non_finite(t, &value)) return message(name, " holds ", value);
  }
  return "";
}

// The one writer: the parameters, the optimizer's state as optimizer.*, `metadata` (the
// configuration and vocabularies), the format and the state as state.*.
static void write_checkpoint(const std::string& path, const Module& model, const StateDict& optimizer_state,
                             std::map<std::string, std::string> metadata,
                             const std::map<std::string, std::string>& state) {
  StateDict tensors = model.state_dict();
  if (const std::string bad = non_finite_parameter(tensors); !bad.empty())
    throw CheckpointError(message(path, ": not saving a model with a non-finite parameter (", bad, ")"));
  // Nor a state that would resume into one: Adam's moments are the next steps' arithmetic.
  if (const std::string bad = non_finite_parameter(optimizer_state); !bad.empty())
    throw CheckpointError(message(path, ": not saving a non-finite optimizer state (", kOptimizerPrefix, bad, ")"));
  for (const auto& [name, t] : optimizer_state) tensors.emplace(kOptimizerPrefix + name, t);
  metadata["format"] = kFormat;
  for (const auto& [key, value] : state) metadata["state." + key] = value;
  save_safetensors(path, tensors, metadata);
}

void save_checkpoint(const std::string& path, const Module& model, const TransformerConfig& config,
                     const StateDict& optimizer_state, const CheckpointInfo& info) {
  std::map<std::string, std::string> metadata = config_to_metadata(config);
  metadata["vocab.source"] = info.source_vocab.to_text();
  metadata["vocab.target"] = info.target_vocab.to_text();
  if (config.arch == Architecture::EncoderDecoder) metadata[kSourceEos] = info.source_eos ? "true" : "false";
  write_checkpoint(path, model, optimizer_state, std::move(metadata), info.state);
}

void save_checkpoint(const std::string& path, const EncoderDecoder& model, const StateDict& optimizer_state,
                     const CheckpointInfo& info) {
  save_checkpoint(path, model, model.config(), optimizer_state, info);
}

void save_encoder_only_checkpoint(const std::string& path, const EncoderOnly& model, const StateDict& optimizer_state,
                                  const EncoderOnlyCheckpointInfo& info) {
  std::map<std::string, std::string> metadata = encoder_only_config_to_metadata(model.config());
  metadata["vocab.source"] = info.vocab.to_text();
  std::string labels;
  for (const auto& label : info.labels) labels += label + "\n";
  metadata["labels"] = labels;
  write_checkpoint(path, model, optimizer_state, std::move(metadata), info.state);
}

std::string checkpoint_arch(const std::map<std::string, std::string>& m) {
  const auto it = m.find("config.arch");
  return it == m.end() ? "encoder-decoder" : it->second;
}

// The one reader: the format, the architecture, the tensors split into parameters and optimizer
// state, the state entries; a non-finite parameter refused.
CheckpointFile read_checkpoint_file(const std::string& path) {
  SafetensorsFile file = load_safetensors(path);
  CheckpointFile out{path, Architecture::EncoderDecoder, std::move(file.metadata), {}, {}, {}};
  const auto& m = out.metadata;
  if (!m.count("format"))
    throw CheckpointError(message(path, ": not a gradformer checkpoint: no metadata 'format'", import_hint(path)));
  if (m.at("format") != kFormat)
    throw CheckpointError(message(path, ": unknown checkpoint format '", m.at("format"), "' (expected ", kFormat, ")",
                                  import_hint(path)));
  const std::string arch = checkpoint_arch(m);
  try {
    out.arch = parse_architecture(arch);
  } catch (const ValueError&) {
    throw CheckpointError(
        message(path, ": config.arch must be encoder-decoder, decoder-only or encoder-only, got '", arch, "'"));
  }
  for (const auto& [key, value] : m)
    if (key.rfind("state.", 0) == 0) out.state[key.substr(6)] = value;
  for (auto& [name, t] : file.tensors) {
    if (name.rfind(kOptimizerPrefix, 0) == 0)
      out.optimizer_state.emplace(name.substr(std::string(kOptimizerPrefix).size()), t);
    else
      out.parameters.emplace(name, t);
  }
  if (const std::string bad = non_finite_parameter(out.parameters); !bad.empty())
    throw CheckpointError(message(path, ": a non-finite parameter (", bad, "): the model is unusable"));
  return out;
}

CheckpointContents read_checkpoint(const std::string& path) { return read_checkpoint(read_checkpoint_file(path)); }

CheckpointContents read_checkpoint(const CheckpointFile& file) {
  const std::string& path = file.path;
  const auto& m = file.metadata;
  // An encoder-only checkpoint's configuration is its own: refused here by name.
  if (file.arch == Architecture::EncoderOnly)
    throw CheckpointError(message(
        path, ": an encoder-only checkpoint (config.arch), but this needs an encoder-decoder or decoder-only one"));
  CheckpointContents out{{}, file.parameters, file.optimizer_state};
  out.info.config = config_from_metadata(m, path);
  try {
    out.info.source_vocab = Vocab::from_text(require(m, "vocab.source", path), path + " (vocab.source)");
    out.info.target_vocab = Vocab::from_text(require(m, "vocab.target", path), path + " (vocab.target)");
  } catch (const DataError& e) {
    throw CheckpointError(e.what());
  }
  if (out.info.source_vocab.size() != out.info.config.src_vocab ||
      out.info.target_vocab.size() != out.info.config.tgt_vocab)
    throw CheckpointError(message(path, ": vocabularies of ", out.info.source_vocab.size(), " and ",
                                  out.info.target_vocab.size(), " tokens do not match the model's ",
                                  out.info.config.src_vocab, " and ", out.info.config.tgt_vocab));
  // Checkpoints from before the entry: gradformer has always ended every source in </s>.
  static const std::string yes = "true";
  const std::string& source_eos = optional_entry(m, kSourceEos, yes);
  if (source_eos != "true" && source_eos != "false")
    throw CheckpointError(message(path, ": ", kSourceEos, " must be true or false, got '", source_eos, "'"));
  out.info.source_eos = source_eos == "true";
  out.info.state = file.state;
  return out;
}

void require_architecture(const CheckpointInfo& info, Architecture needed, const std::string& path) {
  if (info.config.arch != needed)
    throw CheckpointError(message(path, ": a ", architecture_name(info.config.arch),
                                  " checkpoint (config.arch), but this needs an ", architecture_name(needed), " one"));
}

void load_parameters(Module& model, const StateDict& parameters, const std::string& path) {
  try {
    model.load_state_dict(parameters);
  } catch (const Error& e) {
    throw CheckpointError(message(path, ": the tensors do not fit the stored configuration: ", e.what()));
  }
}

LoadedCheckpoint load_checkpoint(const std::string& path) {
  CheckpointContents contents = read_checkpoint(path);
  require_architecture(contents.info, Architecture::EncoderDecoder, path);
  LoadedCheckpoint out{std::move(contents.info), nullptr, std::move(contents.optimizer_state)};
  // Built without initialising: every parameter is about to be overwritten by the stored tensors.
  out.model = std::make_unique<EncoderDecoder>(out.info.config, 0, skip_init);
  load_parameters(*out.model, contents.parameters, path);
  return out;
}

LoadedDecoderOnly load_decoder_only_checkpoint(const CheckpointFile& file) {
  CheckpointContents contents = read_checkpoint(file);
  require_architecture(contents.info, Architecture::DecoderOnly, file.path);
  LoadedDecoderOnly out{std::move(contents.info), nullptr, std::move(contents.optimizer_state)};
  out.model = std::make_unique<DecoderOnly>(out.info.config, 0, skip_init);
  load_parameters(*out.model, contents.parameters, file.path);
  return out;
}

LoadedDecoderOnly load_decoder_only_checkpoint(const std::string& path) {
  return load_decoder_only_checkpoint(read_checkpoint_file(path));
}

// ---- the encoder-only model's own configuration ----------------------------------------------------

std::map<std::string, std::string> encoder_only_config_to_metadata(const EncoderOnlyConfig& c) {
  std::map<std::string, std::string> m = shared_config_metadata(c);
  m["config.arch"] = kEncoderOnlyArch, m["config.vocab"] = std::to_string(c.vocab);
  m["config.types"] = std::to_string(c.types), m["config.classes"] = std::to_string(c.classes);
  m["config.embed_norm"] = c.embed_norm ? "true" : "false";
  return m;
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

LoadedEncoderOnly load_encoder_only_checkpoint(const CheckpointFile& file, const std::string& what) {
  const std::string& path = file.path;
  if (file.arch != Architecture::EncoderOnly)
    throw CheckpointError(message(path, ": an ", architecture_name(file.arch), " checkpoint (config.arch), but ", what,
                                  " needs an encoder-only one"));
  const SavedState saved(file.metadata, path);
  LoadedEncoderOnly out{
      {encoder_only_config_from_metadata(file.metadata, path), {}, {}, file.state}, nullptr, file.optimizer_state};
  try {
    out.info.vocab = Vocab::from_text(saved.text("vocab.source"), path + " (vocab.source)");
  } catch (const DataError& e) {
    throw CheckpointError(e.what());
  }
  if (out.info.vocab.size() != out.info.config.vocab)
    throw CheckpointError(message(path, ": a vocabulary of ", out.info.vocab.size(),
                                  " tokens does not match config.vocab ", out.info.config.vocab));
  std::istringstream labels(saved.text("labels"));
  for (std::string line; std::getline(labels, line);) out.info.labels.push_back(line);
  if (static_cast<int64_t>(out.info.labels.size()) != out.info.config.classes)
    throw CheckpointError(
        message(path, ": ", out.info.labels.size(), " labels for config.classes ", out.info.config.classes));
  out.model = std::make_unique<EncoderOnly>(out.info.config, 0, skip_init);
  load_parameters(*out.model, file.parameters, path);
  return out;
}

LoadedEncoderOnly load_encoder_only_checkpoint(const std::string& path, const std::string& what) {
  return load_encoder_only_checkpoint(read_checkpoint_file(path), what);
}

}  // namespace gradformer
