#include "transformer/store/import_weights.h"

#include <algorithm>
#include <charconv>
#include <string_view>

#include "transformer/model/parameter_specs.h"

namespace gradformer {
namespace {

bool has(const StateDict& tensors, const std::string& name) { return tensors.count(name) > 0; }

// Bit for bit the same tensor: a tied matrix that a state dict lists under each of its names.
bool same_tensor(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && a.to_vector<double>() == b.to_vector<double>();
}

// A few of the file's names, to show a user what the file holds.
std::string some_names(const StateDict& tensors) {
  constexpr size_t kShown = 4;
  std::string out;
  size_t shown = 0;
  for (const auto& [name, t] : tensors) {
    if (shown++ == kShown) return out + ", ...";
    out += (out.empty() ? "" : ", ") + name;
  }
  return out.empty() ? "no tensors at all" : out;
}

// The tensor `name`, which must be a float32 or float64 matrix because its shape tells `what`.
const Tensor& float_matrix(const StateDict& tensors, const std::string& name, const char* what,
                           const std::string& source) {
  const auto it = tensors.find(name);
  if (it == tensors.end()) throw CheckpointError(message(source, ": no tensor ", name, ", whose shape tells ", what));
  const Tensor& t = it->second;
  if (t.dim() != 2 || !is_floating(t.dtype()))
    throw CheckpointError(message(source, ": ", name, " is ", t.shape(), " ", t.dtype(),
                                  ", but it should be a float32 or float64 matrix (its shape tells ", what, ")"));
  return t;
}

// How many layers a stack holds: one more than the largest i among the names "<prefix><i>.*".
// An index no model may have (TransformerConfig::max_layers or more, or beyond 64 bits) is a
// CheckpointError naming the tensor: one more than it would not fit in an int64, or would ask for
// billions of layers.
int64_t depth(const StateDict& tensors, const std::string& prefix, const std::string& source) {
  int64_t layers = 0;
  for (const auto& [name, t] : tensors) {
    if (name.rfind(prefix, 0) != 0) continue;
    uint64_t i = 0;  // unsigned: "-1" is not an index
    const char *begin = name.data() + prefix.size(), *name_end = name.data() + name.size();
    const auto [end, error] = std::from_chars(begin, name_end, i);
    if (end == begin || end == name_end || *end != '.') continue;  // not "<prefix><i>.": load lists it
    if (error != std::errc() || i >= static_cast<uint64_t>(TransformerConfig::max_layers))
      throw CheckpointError(message(source, ": tensor ", name, " has layer index ",
                                    std::string_view(begin, end - begin), ", but a model has at most ",
                                    TransformerConfig::max_layers, " layers"));
    layers = std::max(layers, static_cast<int64_t>(i) + 1);
  }
  return layers;
}

}  // namespace

WeightShapes infer_shapes(const StateDict& tensors, const std::string& source) {
  if (!has(tensors, "src_embed.weight")) {
    const char* kind = has(tensors, "embed.weight")       ? "a decoder-only model's (embed.weight)"
                       : has(tensors, "tok_embed.weight") ? "an encoder-only model's (tok_embed.weight)"
                                                          : nullptr;
    if (kind)
      throw CheckpointError(message(source, ": these are ", kind,
                                    " weights; import takes an encoder-decoder's (src_embed.weight, encoder.layers.*, "
                                    "decoder.layers.*)"));
    throw CheckpointError(message(
        source, ": no src_embed.weight: these are not the names of gradformer's encoder-decoder (the file holds ",
        some_names(tensors),
        "); import needs src_embed.weight, encoder.layers.0.self_attn.in_proj_weight, ... as gradformer's "
        "checkpoints name them (gradformer import --help)"));
  }
  WeightShapes s;
  const Tensor& src_embed = float_matrix(tensors, "src_embed.weight", "the source vocabulary and d_model", source);
  s.src_vocab = src_embed.size(0);
  s.d_model = src_embed.size(1);
  s.dtype = src_embed.dtype();

  const bool tgt_embed = has(tensors, "tgt_embed.weight"), generator = has(tensors, "generator.weight");
  s.tie_embeddings =
      (!tgt_embed && !generator) || (tgt_embed && generator && same_tensor(tensors.at("tgt_embed.weight"), src_embed) &&
                                     same_tensor(tensors.at("generator.weight"), src_embed));
  s.tgt_vocab = s.tie_embeddings ? s.src_vocab
                : tgt_embed      ? float_matrix(tensors, "tgt_embed.weight", "the target vocabulary", source).size(0)
                                 : float_matrix(tensors, "generator.weight", "the target vocabulary", source).size(0);

  s.layers = depth(tensors, "encoder.layers.", source);
  const int64_t decoder_layers = depth(tensors, "decoder.layers.", source);
  if (s.layers == 0 || decoder_layers == 0)
    throw CheckpointError(message(source, ": ", s.layers, " encoder and ", decoder_layers,
                                  " decoder layers (encoder.layers.{i}.*, decoder.layers.{i}.*): an encoder-decoder "
                                  "needs both"));
  if (s.layers != decoder_layers)
    throw CheckpointError(message(source, ": ", s.layers, " encoder layers but ", decoder_layers,
                                  " decoder layers; gradformer's encoder-decoder has as many on both sides"));
  s.d_ff = float_matrix(tensors, "encoder.layers.0.linear1.weight", "d_ff", source).size(0);
  s.norm = has(tensors, "encoder.norm.weight") ? NormPlacement::Pre : NormPlacement::Post;
  if (has(tensors, "positional_encoding.weight")) {
    s.positions = Positions::Learned;
    s.max_len = float_matrix(tensors, "positional_encoding.weight", "max_len", source).size(0);
  }
  return s;
}

SafetensorsFile read_weights(const std::string& path) {
  SafetensorsFile file = load_safetensors(path);
  const auto format = file.metadata.find("format");
  if (format != file.metadata.end() && format->second.rfind("gradformer-", 0) == 0)
    throw CheckpointError(message(path, ": already a gradformer checkpoint (metadata format '", format->second,
                                  "'): use it as it is, no import needed"));
  return file;
}

LoadedCheckpoint import_weights(const StateDict& tensors, const CheckpointInfo& info, const std::string& source) {
  const TransformerConfig& c = info.config;
  try {
    c.validate();
  } catch (const Error& e) {
    throw CheckpointError(message(source, ": the configuration is invalid: ", e.what()));
  }
  if (info.source_tokenizer.vocab().size() != c.src_vocab)
    throw CheckpointError(message(source, ": the source vocabulary has ", info.source_tokenizer.vocab().size(),
                                  " tokens, but src_embed.weight has ", c.src_vocab, " rows (one per token)"));
  if (info.target_tokenizer.vocab().size() != c.tgt_vocab)
    throw CheckpointError(message(source, ": the target vocabulary has ", info.target_tokenizer.vocab().size(),
                                  " tokens, but ", c.tie_embeddings ? "src_embed.weight (tied)" : "tgt_embed.weight",
                                  " has ", c.tgt_vocab, " rows (one per token)"));
  if (c.tie_embeddings && !(info.source_tokenizer.vocab() == info.target_tokenizer.vocab()))
    throw CheckpointError(message(source,
                                  ": tied embeddings (one matrix for both sides) need one vocabulary, but the source "
                                  "and target vocabularies differ"));
  StateDict state = tensors;
  if (c.tie_embeddings && has(state, "src_embed.weight"))
    for (const char* copy : {"tgt_embed.weight", "generator.weight"})
      if (has(state, copy) && same_tensor(state.at(copy), state.at("src_embed.weight"))) state.erase(copy);
  // Every tensor against the model the shapes describe, before that model is built: the layers
  // come from the names alone, so a small file naming encoder.layers.1000 would otherwise build a
  // thousand layers first.
  const std::string problems = state_mismatches(parameter_specs(c), state, "by the configuration", "in the file");
  if (!problems.empty())
    throw CheckpointError(message(source, ": the tensors are not those of an encoder-decoder with d_model ", c.d_model,
                                  ", d_ff ", c.d_ff, ", ", c.layers, " layers, ",
                                  c.norm == NormPlacement::Pre ? "pre-LN" : "post-LN",
                                  c.tie_embeddings ? ", tied embeddings" : "", ":", problems));
  LoadedCheckpoint out{info, std::make_unique<EncoderDecoder>(c, 0, skip_init), {}};
  out.model->load_state_dict(state);
  return out;
}

}  // namespace gradformer
