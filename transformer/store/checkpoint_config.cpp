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

// The block's settings (config.h's BlockOptions), each written only when it is not the paper's, so
// that the checkpoints of every model before them stay byte for byte what they were.
void block_to_metadata(const BlockOptions& b, std::map<std::string, std::string>& m) {
  const BlockOptions paper;
  if (b.normalization != paper.normalization) m["config.normalization"] = normalization_name(b.normalization);
  if (b.kv_heads != paper.kv_heads) m["config.kv_heads"] = std::to_string(b.kv_heads);
  if (b.head_dim != paper.head_dim) m["config.head_dim"] = std::to_string(b.head_dim);
  if (b.bias != paper.bias) m["config.bias"] = bias_name(b.bias);
  if (b.rope_theta != paper.rope_theta) m["config.rope_theta"] = exact_text(b.rope_theta);
  if (b.rope_scaling.factor != 0) {
    m["config.rope_scaling.factor"] = exact_text(b.rope_scaling.factor);
    m["config.rope_scaling.low_freq_factor"] = exact_text(b.rope_scaling.low_freq_factor);
    m["config.rope_scaling.high_freq_factor"] = exact_text(b.rope_scaling.high_freq_factor);
    m["config.rope_scaling.original_max_len"] = std::to_string(b.rope_scaling.original_max_len);
  }
  if (b.lora.rank > 0) {  // a fine-tuning's adapters, kept beside the weights (merge-lora folds them in)
    m["config.lora.rank"] = std::to_string(b.lora.rank);
    m["config.lora.alpha"] = exact_text(b.lora.alpha);
    m["config.lora.targets"] = lora_targets_name(b.lora);
  }
}

// The value of `key` among `names` (absent: `absent`), or CheckpointError listing them.
template <class E, size_t N>
E one_of_names(const std::map<std::string, std::string>& m, const std::string& key, const std::string& source, E absent,
               const E (&values)[N], const char* (*name)(E)) {
  const auto it = m.find(key);
  if (it == m.end()) return absent;
  std::string known;
  for (E v : values) {
    if (it->second == name(v)) return v;
    known += (known.empty() ? "" : ", ") + std::string(name(v));
  }
  throw CheckpointError(message(source, ": ", key, " must be one of ", known, ", got '", it->second, "'"));
}

}  // namespace

BlockOptions block_options_from_metadata(const std::map<std::string, std::string>& m, const std::string& source) {
  BlockOptions b;
  b.normalization = one_of_names(m, "config.normalization", source, b.normalization,
                                 {Normalization::LayerNorm, Normalization::RMSNorm}, normalization_name);
  b.bias =
      one_of_names(m, "config.bias", source, b.bias, {Bias::All, Bias::None, Bias::Attention, Bias::QKV}, bias_name);
  auto integer = [&](const char* key, int64_t absent) {
    return m.count(key) ? to_int(m.at(key), key, source) : absent;
  };
  auto number = [&](const char* key, double absent) {
    return m.count(key) ? to_double(m.at(key), key, source) : absent;
  };
  b.kv_heads = integer("config.kv_heads", 0), b.head_dim = integer("config.head_dim", 0);
  b.rope_theta = number("config.rope_theta", b.rope_theta);
  if (m.count("config.rope_scaling.factor")) {
    RopeScaling& r = b.rope_scaling;
    r.factor = number("config.rope_scaling.factor", 0);
    r.low_freq_factor = number("config.rope_scaling.low_freq_factor", r.low_freq_factor);
    r.high_freq_factor = number("config.rope_scaling.high_freq_factor", r.high_freq_factor);
    r.original_max_len = integer("config.rope_scaling.original_max_len", r.original_max_len);
  }
  if (m.count("config.lora.rank")) {
    b.lora.rank = integer("config.lora.rank", 0), b.lora.alpha = number("config.lora.alpha", 0);
    const std::string& targets = require(m, "config.lora.targets", source);
    try {
      b.lora = parse_lora_targets(targets, b.lora);
    } catch (const ValueError& e) {
      throw CheckpointError(message(source, ": config.lora.targets: ", e.what()));
    }
  }
  return b;
}

namespace {

constexpr Activation kActivations[] = {Activation::ReLU, Activation::GELU, Activation::GELUTanh, Activation::SwiGLU};
constexpr Positions kPositions[] = {Positions::Sinusoidal, Positions::Learned, Positions::Rotary};

// The entries every architecture's configuration has, meaning the same in each.
template <class Config>
std::map<std::string, std::string> shared_config_metadata(const Config& c) {
  return {
      {"config.d_model", std::to_string(c.d_model)},    {"config.d_ff", std::to_string(c.d_ff)},
      {"config.heads", std::to_string(c.heads)},        {"config.layers", std::to_string(c.layers)},
      {"config.dropout", exact_text(c.dropout)},        {"config.norm", c.norm == NormPlacement::Pre ? "pre" : "post"},
      {"config.max_len", std::to_string(c.max_len)},    {"config.tie_embeddings", c.tie_embeddings ? "true" : "false"},
      {"config.dtype", std::string(name(c.dtype))},     {"config.activation", activation_name(c.activation)},
      {"config.positions", positions_name(c.positions)}};
}

}  // namespace

std::map<std::string, std::string> config_to_metadata(const TransformerConfig& c) {
  std::map<std::string, std::string> m = shared_config_metadata(c);
  block_to_metadata(c.block, m);
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
  static const std::string encoder_decoder = "encoder-decoder";
  const std::string& arch = optional_entry(m, "config.arch", encoder_decoder);
  try {
    c.arch = parse_architecture(arch);
  } catch (const ValueError&) {
    throw CheckpointError(
        message(source, ": config.arch must be encoder-decoder, decoder-only or encoder-only, got '", arch, "'"));
  }
  c.activation = one_of_names(m, "config.activation", source, Activation::ReLU, kActivations, activation_name);
  c.positions = one_of_names(m, "config.positions", source, Positions::Sinusoidal, kPositions, positions_name);
  c.block = block_options_from_metadata(m, source);
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
  block_to_metadata(c.block, m);
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
  saved.text("config.positions"), saved.text("config.activation");  // required here (absent: CheckpointError)
  c.positions = one_of_names(m, "config.positions", source, Positions::Sinusoidal, kPositions, positions_name);
  c.activation = one_of_names(m, "config.activation", source, Activation::GELU, kActivations, activation_name);
  c.block = block_options_from_metadata(m, source);
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
