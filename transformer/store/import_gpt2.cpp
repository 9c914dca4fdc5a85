#include "transformer/store/import_gpt2.h"

#include <charconv>
#include <cstring>
#include <filesystem>
#include <set>

#include "transformer/model/parameter_specs.h"
#include "transformer/store/import_weights.h"

namespace gradformer {
namespace {

constexpr std::string_view kPrefix = "transformer.";

// What the shapes say (import_gpt2.h).
struct Gpt2Shapes : Gpt2Sizes {
  DType dtype = DType::Float32;
  bool tied = true;
};

bool has(const StateDict& tensors, const std::string& name) { return tensors.count(name) > 0; }

// The layer index of "h.{i}.<rest>", or -1 for a name of another form.
int64_t layer_of(const std::string& name, std::string_view* rest = nullptr) {
  if (name.rfind("h.", 0) != 0) return -1;
  uint64_t i = 0;
  const char *begin = name.data() + 2, *name_end = name.data() + name.size();
  const auto [end, error] = std::from_chars(begin, name_end, i);
  if (end == begin || end == name_end || *end != '.' || error != std::errc()) return -1;
  if (i >= static_cast<uint64_t>(TransformerConfig::max_layers)) return TransformerConfig::max_layers;
  if (rest) *rest = std::string_view(end + 1, name_end - end - 1);
  return static_cast<int64_t>(i);
}

// The causal mask GPT2Attention registers as buffers: not parameters.
bool is_mask_buffer(const std::string& name) {
  std::string_view rest;
  return layer_of(name, &rest) >= 0 && (rest == "attn.bias" || rest == "attn.masked_bias");
}

// The file's tensors under GPT-2's names without "transformer.", the mask buffers left out; every
// one must be float.
StateDict gpt2_parameters(StateDict tensors, const std::string& source, Gpt2Import& report) {
  StateDict out;
  for (auto& [file_name, t] : tensors) {
    std::string name = file_name;
    if (name.rfind(kPrefix, 0) == 0) name = name.substr(kPrefix.size()), report.prefixed = true;
    if (is_mask_buffer(name)) {
      report.ignored.push_back(file_name);
      continue;
    }
    if (!is_floating(t.dtype()))
      throw CheckpointError(message(source, ": ", file_name, " is ", t.shape(), " ", t.dtype(),
                                    ", but GPT-2's weights are float32 or float64"));
    if (has(out, name))
      throw CheckpointError(message(source, ": ", name, " is there both with and without the prefix ", kPrefix));
    out.emplace(name, std::move(t));
  }
  return out;
}

// How many blocks h.{i} there are: every index from 0 to the largest, no gap.
int64_t layer_count(const StateDict& tensors, const std::string& source) {
  std::set<int64_t> indices;
  for (const auto& [name, t] : tensors) {
    const int64_t i = layer_of(name);
    if (i == TransformerConfig::max_layers)
      throw CheckpointError(message(source, ": tensor ", name, " has a layer index beyond the ",
                                    TransformerConfig::max_layers, " layers a model may have"));
    if (i >= 0) indices.insert(i);
  }
  if (indices.empty())
    throw CheckpointError(message(source, ": no blocks h.{i}.* (h.0.attn.c_attn.weight, ...): not GPT-2's weights"));
  const int64_t layers = *indices.rbegin() + 1;
  for (int64_t i = 0; i < layers; ++i)
    if (!indices.count(i))
      throw CheckpointError(
          message(source, ": a gap in the layer indices: h.", *indices.rbegin(), ".* is there but no h.", i, ".*"));
  return layers;
}

// Bit for bit the same matrix: GPT-2's lm_head is its wte. Compared byte for byte, in place when
// contiguous (GPT-2 xl's are 80 million numbers each). Both are float (gpt2_parameters checked).
bool same_tensor(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape() || a.dtype() != b.dtype()) return false;
  const Tensor x = a.contiguous(), y = b.contiguous();
  const size_t bytes = static_cast<size_t>(x.numel()) * itemsize(x.dtype());
  return x.dtype() == DType::Float32 ? std::memcmp(x.data<float>(), y.data<float>(), bytes) == 0
                                     : std::memcmp(x.data<double>(), y.data<double>(), bytes) == 0;
}

Gpt2Shapes infer(const StateDict& tensors, const std::string& source) {
  const auto wte = tensors.find("wte.weight");
  if (wte == tensors.end())
    throw CheckpointError(message(source, ": no wte.weight (GPT-2's token embedding, whose shape tells V and d)",
                                  " with or without the prefix ", kPrefix, ": not GPT-2's weights"));
  if (wte->second.dim() != 2)
    throw CheckpointError(message(source, ": wte.weight is ", wte->second.shape(), ", but it should be [V, d]"));
  Gpt2Shapes s;
  s.vocab = wte->second.size(0), s.d = wte->second.size(1), s.dtype = wte->second.dtype();
  s.layers = layer_count(tensors, source);
  const auto wpe = tensors.find("wpe.weight");
  s.n_ctx = wpe != tensors.end() && wpe->second.dim() == 2 ? wpe->second.size(0) : 1024;  // else listed as missing
  const auto c_fc = tensors.find("h.0.mlp.c_fc.weight");
  s.d_ff = c_fc != tensors.end() && c_fc->second.dim() == 2 ? c_fc->second.size(1) : 4 * s.d;
  const auto lm_head = tensors.find("lm_head.weight");
  s.tied = lm_head == tensors.end() || same_tensor(lm_head->second, wte->second);
  return s;
}

// Every tensor GPT-2 of these sizes has, under its names, in its layout (Conv1D: [in, out]).
std::vector<ParameterSpec> gpt2_specs(const Gpt2Shapes& s, bool with_lm_head) {
  std::vector<ParameterSpec> specs;
  for (Gpt2Name& name : gpt2_names(s)) specs.push_back({std::move(name.gpt2), std::move(name.shape), s.dtype});
  if (with_lm_head) specs.push_back({"lm_head.weight", {s.vocab, s.d}, s.dtype});
  return specs;
}

// CheckpointError unless the config's `key` (when given) is what the shapes say.
void agree(const std::optional<int64_t>& given, int64_t inferred, const char* key, const std::string& evidence,
           const Gpt2Config& config, const std::string& source) {
  if (given && *given != inferred)
    throw CheckpointError(
        message(config.source, ": ", key, " ", *given, " disagrees with the weights: ", source, ": ", evidence));
}

void check_config(const Gpt2Config& c, const Gpt2Shapes& s, const StateDict& tensors, const std::string& source) {
  const auto shape = [&](const char* name) { return message(name, " is ", tensors.at(name).shape()); };
  agree(c.n_embd, s.d, "n_embd", message(shape("wte.weight"), ": d ", s.d), c, source);
  agree(c.vocab_size, s.vocab, "vocab_size", message(shape("wte.weight"), ": V ", s.vocab), c, source);
  agree(c.n_layer, s.layers, "n_layer", message("h.0 to h.", s.layers - 1, ": ", s.layers, " layers"), c, source);
  agree(c.n_positions, s.n_ctx, "n_positions", message(shape("wpe.weight"), ": n_ctx ", s.n_ctx), c, source);
  agree(c.n_ctx, s.n_ctx, "n_ctx", message(shape("wpe.weight"), ": n_ctx ", s.n_ctx), c, source);
  agree(c.n_inner, s.d_ff, "n_inner", message(shape("h.0.mlp.c_fc.weight"), ": d_ff ", s.d_ff), c, source);
}

// The heads: --heads, or the config's n_head; both given, they must agree.
int64_t heads_of(const Gpt2Options& o, const Gpt2Shapes& s, const std::string& source) {
  const std::optional<int64_t> n_head = o.config ? o.config->n_head : std::nullopt;
  if (o.heads && n_head && *o.heads != *n_head)
    throw CheckpointError(message("--heads ", *o.heads, " disagrees with ", o.config->source, "'s n_head ", *n_head));
  if (!o.heads && !n_head)
    throw CheckpointError(message(source, ": no tensor's shape tells the number of heads: --heads H is needed (or ",
                                  o.config ? o.config->source + " with n_head" : "a config.json with n_head", ")"));
  const int64_t heads = o.heads ? *o.heads : *n_head;
  const std::string from = o.heads ? "--heads" : o.config->source + "'s n_head";
  if (heads <= 0 || s.d % heads != 0)
    throw CheckpointError(message(source, ": ", heads, " heads (", from, ") do not divide d ", s.d, " (wte.weight [",
                                  s.vocab, ", ", s.d, "])"));
  return heads;
}

TransformerConfig make_config(const Gpt2Shapes& s, const Gpt2Options& o, const std::string& source) {
  TransformerConfig c = decoder_only_config(s.vocab);
  c.d_model = s.d, c.d_ff = s.d_ff, c.layers = s.layers, c.heads = heads_of(o, s, source), c.max_len = s.n_ctx;
  c.positions = Positions::Learned, c.norm = NormPlacement::Pre, c.scale_embedding = false;
  c.tie_embeddings = s.tied, c.dtype = s.dtype;
  c.activation = o.config && o.config->activation ? *o.config->activation : Activation::GELUTanh;
  c.norm_eps = o.config && o.config->layer_norm_epsilon ? *o.config->layer_norm_epsilon : 1e-5;
  c.dropout = o.config && o.config->resid_pdrop ? *o.config->resid_pdrop : 0.1;
  try {
    c.validate();
  } catch (const Error& e) {
    throw CheckpointError(message(source, ": GPT-2's weights make a model the library refuses: ", e.what()));
  }
  if (!(c.norm_eps > 0))
    throw CheckpointError(message(o.config->source, ": layer_norm_epsilon ", c.norm_eps, " should be positive"));
  return c;
}

// GPT-2's tensors under gradformer's names, each Conv1D weight transposed to a Linear's [out, in].
StateDict to_gradformer(StateDict gpt2, const Gpt2Shapes& s, Gpt2Import& report) {
  StateDict out;
  for (const Gpt2Name& name : gpt2_names(s)) {
    Tensor& to = out[name.gradformer];
    if (!name.conv1d) {
      to = std::move(gpt2.at(name.gpt2));
      continue;
    }
    to = gpt2.at(name.gpt2).transpose(0, 1).contiguous();  // [in, out] -> [out, in]
    gpt2.erase(name.gpt2);                // the file's copy freed as soon as it is transposed: GPT-2 xl is 6 GB
    if (name.gpt2.rfind("h.0.", 0) == 0)  // "attn.c_attn.weight [d, 3d] -> self_attn.in_proj_weight [3d, d]"
      report.transposed.push_back(message(name.gpt2.substr(4), " ", name.shape, " -> ",
                                          name.gradformer.substr(std::string("decoder.layers.0.").size()), " ",
                                          to.shape()));
  }
  if (!s.tied) out["generator.weight"] = std::move(gpt2.at("lm_head.weight"));  // a Linear already: [V, d]
  return out;
}

}  // namespace

std::vector<Gpt2Name> gpt2_names(const Gpt2Sizes& s) {
  std::vector<Gpt2Name> names;
  const auto add = [&](std::string gpt2, std::string gradformer, Shape shape, bool conv1d = false) {
    names.push_back({std::move(gpt2), std::move(gradformer), std::move(shape), conv1d});
  };
  add("wte.weight", "embed.weight", {s.vocab, s.d});
  add("wpe.weight", "positional_encoding.weight", {s.n_ctx, s.d});
  for (int64_t i = 0; i < s.layers; ++i) {
    const std::string h = "h." + std::to_string(i) + ".", g = "decoder.layers." + std::to_string(i) + ".";
    add(h + "ln_1.weight", g + "norm1.weight", {s.d}), add(h + "ln_1.bias", g + "norm1.bias", {s.d});
    // c_attn's 3d outputs are q | k | v: transposed, the rows W^Q; W^K; W^V of in_proj_weight [3d, d]
    add(h + "attn.c_attn.weight", g + "self_attn.in_proj_weight", {s.d, 3 * s.d}, true);
    add(h + "attn.c_attn.bias", g + "self_attn.in_proj_bias", {3 * s.d});
    add(h + "attn.c_proj.weight", g + "self_attn.out_proj.weight", {s.d, s.d}, true);
    add(h + "attn.c_proj.bias", g + "self_attn.out_proj.bias", {s.d});
    add(h + "ln_2.weight", g + "norm2.weight", {s.d}), add(h + "ln_2.bias", g + "norm2.bias", {s.d});
    add(h + "mlp.c_fc.weight", g + "linear1.weight", {s.d, s.d_ff}, true);  // -> [d_ff, d]
    add(h + "mlp.c_fc.bias", g + "linear1.bias", {s.d_ff});
    add(h + "mlp.c_proj.weight", g + "linear2.weight", {s.d_ff, s.d}, true);  // -> [d, d_ff]
    add(h + "mlp.c_proj.bias", g + "linear2.bias", {s.d});
  }
  add("ln_f.weight", "decoder.norm.weight", {s.d}), add("ln_f.bias", "decoder.norm.bias", {s.d});
  return names;
}

Gpt2Import import_gpt2(StateDict tensors, const std::string& source, const Tokenizer& tokenizer,
                       const Gpt2Options& options) {
  Gpt2Import out;
  StateDict gpt2 = gpt2_parameters(std::move(tensors), source, out);
  const Gpt2Shapes s = infer(gpt2, source);
  const std::string problems =
      state_mismatches(gpt2_specs(s, has(gpt2, "lm_head.weight")), gpt2, "in GPT-2's layout", "in the file");
  if (!problems.empty())
    throw CheckpointError(message(source, ": the tensors are not those of GPT-2 with V ", s.vocab, ", d ", s.d,
                                  ", n_ctx ", s.n_ctx, ", ", s.layers, " layers, d_ff ", s.d_ff, ":", problems));
  if (options.config) check_config(*options.config, s, gpt2, source);
  const TransformerConfig c = make_config(s, options, source);
  if (tokenizer.size() != s.vocab)
    throw CheckpointError(message(source, ": wte.weight has ", s.vocab, " rows (one per token), but ",
                                  options.tokenizer_source, " has ", tokenizer.size(), " tokens"));
  if (s.tied) gpt2.erase("lm_head.weight");
  const StateDict state = to_gradformer(std::move(gpt2), s, out);
  out.info.config = c;
  out.info.target_tokenizer = tokenizer;  // a decoder-only model's one side
  out.model = std::make_unique<DecoderOnly>(c, 0, skip_init);
  load_parameters(*out.model, state, source);
  return out;
}

namespace {

// The model --gpt2 names: the file, or model.safetensors in the directory given.
std::string model_file(const Gpt2Files& files) {
  namespace fs = std::filesystem;
  std::error_code error;
  return fs::is_directory(files.model, error) ? (fs::path(files.model) / "model.safetensors").string() : files.model;
}

// --config, or config.json beside the model (which may not exist).
std::string config_file(const Gpt2Files& files, const std::string& model) {
  namespace fs = std::filesystem;
  return files.config.empty() ? (fs::path(model).parent_path() / "config.json").string() : files.config;
}

// --tokenizer, or the model's directory.
std::string tokenizer_directory(const Gpt2Files& files, const std::string& model) {
  return files.tokenizer_dir.empty() ? std::filesystem::path(model).parent_path().string() : files.tokenizer_dir;
}

}  // namespace

void require_regular_input(const std::string& path, const std::string& what) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (fs::exists(path, error) && !fs::is_regular_file(path, error))
    throw CheckpointError(
        message(path, ": not a regular file (a FIFO, a device or a directory); ", what, " is read whole"));
}

std::vector<std::string> gpt2_input_paths(const Gpt2Files& files) {
  const std::string model = model_file(files), tokenizers = tokenizer_directory(files, model);
  std::vector<std::string> paths = {model, config_file(files, model)};
  for (const auto& [tokens, merges] : kGpt2TokenizerFiles)
    for (const char* name : {tokens, merges}) paths.push_back((std::filesystem::path(tokenizers) / name).string());
  return paths;
}

Gpt2Import import_gpt2_files(Gpt2Files files) {
  namespace fs = std::filesystem;
  files.model = model_file(files);
  std::error_code error;
  if (!fs::is_regular_file(files.model, error))  // named first, before what is missing because it is
    throw CheckpointError(message(files.model,
                                  fs::exists(files.model, error) ? ": not a regular file" : ": no such file",
                                  " (--gpt2 takes GPT-2's model.safetensors or the directory holding it)"));
  Gpt2Options options;
  options.heads = files.heads;
  const std::string config = !files.config.empty() || fs::exists(config_file(files, files.model), error)
                                 ? config_file(files, files.model)
                                 : "";
  if (!config.empty()) {
    require_regular_input(config, "GPT-2's config.json");
    options.config = read_gpt2_config(config);
  }
  if (!options.heads && !(options.config && options.config->n_head))
    throw CheckpointError(message(files.model, ": no tensor's shape tells the number of heads: --heads H is needed",
                                  config.empty() ? " (or a config.json with n_head beside the model, or --config FILE)"
                                                 : message(" (", config, " has no n_head)")));
  const Gpt2Tokenizer tokenizer = read_gpt2_tokenizer(tokenizer_directory(files, files.model));
  options.tokenizer_source = "the tokenizer (" + tokenizer.source + ")";
  SafetensorsFile file = read_weights(files.model);
  Gpt2Import out = import_gpt2(std::move(file.tensors), files.model, tokenizer.tokenizer, options);
  out.config_source = config, out.tokenizer_source = tokenizer.source;
  return out;
}

}  // namespace gradformer
