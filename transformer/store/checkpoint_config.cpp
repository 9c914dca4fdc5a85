// The configuration as metadata entries and back, for the three architectures (checkpoint.h).
#include "tensor/support/saved_state.h"
#include "transformer/store/checkpoint.h"

namespace gradformer {
namespace {

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

// An entry added after the first checkpoints were written: absent means the value those had.
const std::string& optional_entry(const std::map<std::string, std::string>& m, const std::string& key,
                                  const std::string& absent) {
  const auto it = m.find(key);
  return it == m.end() ? absent : it->second;
}

// The entries every architecture's configuration has, meaning the same in each.
template <class Config>
std::map<std::string, std::string> shared_config_metadata(const Config& c) {
  return {{"config.d_model", std::to_string(c.d_model)},
          {"config.d_ff", std::to_string(c.d_ff)},
          {"config.heads", std::to_string(c.heads)},
          {"config.layers", std::to_string(c.layers)},
          {"config.dropout", exact_text(c.dropout)},
          {"config.norm", c.norm == NormPlacement::Pre ? "pre" : "post"},
          {"config.max_len", std::to_string(c.max_len)},
          {"config.tie_embeddings", c.tie_embeddings ? "true" : "false"},
          {"config.dtype", std::string(name(c.dtype))},
          {"config.activation", activation_name(c.activation)},
          {"config.positions", c.positions == Positions::Learned ? "learned" : "sinusoidal"}};
}

}  // namespace

std::map<std::string, std::string> config_to_metadata(const TransformerConfig& c) {
  std::map<std::string, std::string> m = shared_config_metadata(c);
  m["config.src_vocab"] = std::to_string(c.src_vocab), m["config.tgt_vocab"] = std::to_string(c.tgt_vocab);
  m["config.arch"] = architecture_name(c.arch);
  // Entries added for GPT-2, written only when they differ from what every earlier model had, so
  // that those models' checkpoints stay byte for byte what they were.
  if (!c.scale_embedding) m["config.scale_embedding"] = "false";
  if (c.norm_eps != TransformerConfig{}.norm_eps) m["config.norm_eps"] = exact_text(c.norm_eps);
  return m;
}

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
  bool known = false;
  for (Activation a : {Activation::ReLU, Activation::GELU, Activation::GELUTanh})
    if (activation == activation_name(a)) c.activation = a, known = true;
  if (!known)
    throw CheckpointError(
        message(source, ": config.activation must be relu, gelu or gelu-tanh, got '", activation, "'"));
  const std::string& positions = optional_entry(m, "config.positions", sinusoidal);
  if (positions != "sinusoidal" && positions != "learned")
    throw CheckpointError(message(source, ": config.positions must be sinusoidal or learned, got '", positions, "'"));
  c.positions = positions == "learned" ? Positions::Learned : Positions::Sinusoidal;
  static const std::string yes = "true";
  const std::string& scale = optional_entry(m, "config.scale_embedding", yes);
  if (scale != "true" && scale != "false")
    throw CheckpointError(message(source, ": config.scale_embedding must be true or false, got '", scale, "'"));
  c.scale_embedding = scale == "true";
  if (m.count("config.norm_eps")) c.norm_eps = to_double(m.at("config.norm_eps"), "config.norm_eps", source);
  try {
    c.validate();
  } catch (const Error& e) {
    throw CheckpointError(message(source, ": the stored configuration is invalid: ", e.what()));
  }
  return c;
}

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

}  // namespace gradformer
