// GPT-2's config.json and tokenizer files (import_gpt2.h).
#include <cstdlib>
#include <filesystem>

#include "tensor/support/json.h"
#include "transformer/data/line_reader.h"
#include "transformer/store/import_gpt2.h"

namespace gradformer {
namespace {

std::string quoted_json(const Json& value) {
  try {
    return value.dump();
  } catch (const JsonError&) {
    return "?";
  }
}

// An integer field; null counts as absent (GPT-2's n_inner null means 4 d).
std::optional<int64_t> integer_field(const Json& value, const std::string& key, const std::string& source) {
  if (value.is_literal() && value.text() == "null") return std::nullopt;
  if (!value.is_integer())
    throw CheckpointError(message(source, ": ", key, " is ", quoted_json(value), ", but it should be an integer"));
  return value.value();
}

// A number field (1e-05, 0.1 or 0).
std::optional<double> number_field(const Json& value, const std::string& key, const std::string& source) {
  if (value.is_integer()) return static_cast<double>(value.value());
  if (value.is_literal() && value.text() != "true" && value.text() != "false" && value.text() != "null")
    return std::strtod(value.text().c_str(), nullptr);  // JSON's grammar, checked by the parser
  if (value.is_literal() && value.text() == "null") return std::nullopt;
  throw CheckpointError(message(source, ": ", key, " is ", quoted_json(value), ", but it should be a number"));
}

bool is_true(const Json& value) { return value.is_literal() && value.text() == "true"; }

// GPT-2's activation functions by the names transformers gives them (ACT2FN).
Activation activation_named(const Json& value, const std::string& source) {
  if (!value.is_string())
    throw CheckpointError(
        message(source, ": activation_function is ", quoted_json(value), ", but it should be a name"));
  const std::string& name = value.text();
  if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") return Activation::GELUTanh;
  if (name == "gelu") return Activation::GELU;
  if (name == "relu") return Activation::ReLU;
  throw CheckpointError(message(source, ": activation_function \"", name,
                                "\" is not one gradformer computes (gelu_new, gelu_pytorch_tanh and gelu_fast: GELU's "
                                "tanh form; gelu: the erf form; relu)"));
}

// What GPT-2's variants change in attention, which gradformer's attention does not do.
void refuse_unsupported(const std::string& key, const Json& value, const std::string& source) {
  if ((key == "scale_attn_by_inverse_layer_idx" || key == "reorder_and_upcast_attn") && is_true(value))
    throw CheckpointError(message(source, ": ", key, " is true, which gradformer's attention does not support"));
  if (key == "scale_attn_weights" && value.is_literal() && value.text() == "false")
    throw CheckpointError(message(source,
                                  ": scale_attn_weights is false (no division by sqrt(d_head)), which gradformer's "
                                  "attention does not support"));
}

std::string read_text(const std::string& path) {
  try {
    return read_whole_file(path, kMaxConfigBytes, "a configuration file");
  } catch (const DataError& e) {  // ReadError too
    throw CheckpointError(e.what());
  }
}

}  // namespace

Gpt2Config parse_gpt2_config(std::string_view text, const std::string& source) {
  Json json;
  try {
    json = Json::parse_config(text);
  } catch (const JsonError& e) {
    throw CheckpointError(message(source, ": not a JSON configuration: ", e.what()));
  }
  if (!json.is_object()) throw CheckpointError(message(source, ": expected a JSON object such as GPT-2's config.json"));
  Gpt2Config c;
  c.source = source;
  for (const auto& [key, value] : json.members()) {
    refuse_unsupported(key, value, source);
    if (key == "n_head") c.n_head = integer_field(value, key, source);
    if (key == "n_embd") c.n_embd = integer_field(value, key, source);
    if (key == "n_layer") c.n_layer = integer_field(value, key, source);
    if (key == "n_positions") c.n_positions = integer_field(value, key, source);
    if (key == "n_ctx") c.n_ctx = integer_field(value, key, source);
    if (key == "vocab_size" || key == "n_vocab") c.vocab_size = integer_field(value, key, source);
    if (key == "n_inner") c.n_inner = integer_field(value, key, source);
    if (key == "layer_norm_epsilon") c.layer_norm_epsilon = number_field(value, key, source);
    if (key == "resid_pdrop") c.resid_pdrop = number_field(value, key, source);
    if (key == "activation_function")
      c.activation = activation_named(value, source), c.activation_function = value.text();
  }
  return c;
}

Gpt2Config read_gpt2_config(const std::string& path) { return parse_gpt2_config(read_text(path), path); }

Gpt2Tokenizer read_gpt2_tokenizer(const std::string& dir, const std::string& dir_flag) {
  namespace fs = std::filesystem;
  const fs::path d = dir.empty() ? fs::path(".") : fs::path(dir);
  for (const auto& [tokens, merges] : kGpt2TokenizerFiles) {
    const fs::path tokens_path = d / tokens, merges_path = d / merges;
    const bool has_tokens = fs::exists(tokens_path), has_merges = fs::exists(merges_path);
    if (has_tokens && has_merges) {
      for (const fs::path& path : {tokens_path, merges_path}) require_regular_input(path.string(), "a tokenizer file");
      const std::string names = message(tokens_path.string(), " and ", merges_path.string());
      try {  // the checks every reader of the checkpoint makes, made here: no import a reader refuses
        return {Tokenizer::gpt2(BytePairEncoding::read_gpt2(tokens_path.string(), merges_path.string())), names};
      } catch (const ValueError& e) {
        throw CheckpointError(message(names, ": ", e.what()));
      }
    }
    if (has_tokens || has_merges)
      throw CheckpointError(message(d.string(), ": ", has_tokens ? tokens : merges, " is there but not ",
                                    has_tokens ? merges : tokens, "; GPT-2's tokenizer is the two files together"));
  }
  throw CheckpointError(message(d.string(),
                                ": no GPT-2 tokenizer: neither vocab.json + merges.txt (the hub's names) nor "
                                "encoder.json + vocab.bpe (the original release's); give their directory with ",
                                dir_flag, " DIR"));
}

}  // namespace gradformer
