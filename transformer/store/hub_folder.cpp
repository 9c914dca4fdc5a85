// A hub folder's files (hub_folder.h): model.safetensors or the shards its index names, each tensor
// mapped to the reader of its file; the files an import reads; the tensors a config implies.
#include "transformer/store/hub_folder.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>

#include "tensor/support/json.h"
#include "transformer/data/line_reader.h"
#include "transformer/store/import_gpt2.h"

namespace gradformer {
namespace fs = std::filesystem;
namespace {

constexpr const char* kSingleFile = "model.safetensors";
constexpr const char* kIndexFile = "model.safetensors.index.json";
constexpr const char* kConfigFile = "config.json";
constexpr const char* kTokenizerFile = "tokenizer.json";
// An index lists every tensor's name once: Llama 3.1 405B's is 100 KB. 16 MiB bounds what a JSON
// reader builds in memory from a hostile one.
constexpr int64_t kMaxIndexBytes = int64_t{16} << 20;

// model.safetensors.index.json: each tensor's shard, as the file names them.
struct ShardIndex {
  std::string path;
  std::vector<std::string> shards;                          // each once, in the order first named
  std::vector<std::pair<std::string, std::string>> places;  // tensor name -> shard, in file order
};

// A shard name of the index as a path inside `dir`: relative, no "..", no root. Lexical, as the
// index is read: "sub/../x" stays inside but is refused too, the hub never writes such names.
std::string shard_path(const fs::path& dir, const std::string& shard, const std::string& tensor,
                       const std::string& index) {
  const fs::path name(shard);
  bool escapes = shard.empty() || name.has_root_path();
  for (const fs::path& part : name) escapes = escapes || part == "..";
  if (escapes)
    throw CheckpointError(message(index, ": weight_map places ", tensor, " in '", shard,
                                  "', which is not a file name inside the folder ", dir.string()));
  return (dir / name.lexically_normal()).string();
}

Json parse_index(const std::string& path) {
  require_regular_input(path, "a model's index");
  try {
    return Json::parse_config(read_whole_file(path, kMaxIndexBytes, "a model's index"));
  } catch (const JsonError& e) {
    throw CheckpointError(message(path, ": not a JSON index: ", e.what()));
  } catch (const DataError& e) {  // ReadError too
    throw CheckpointError(e.what());
  }
}

ShardIndex read_index(const fs::path& dir) {
  ShardIndex index;
  index.path = (dir / kIndexFile).string();
  const Json json = parse_index(index.path);
  const Json* weight_map = nullptr;
  if (json.is_object())
    for (const auto& [key, value] : json.members())
      if (key == "weight_map") weight_map = &value;
  if (!weight_map || !weight_map->is_object())
    throw CheckpointError(message(index.path, ": no weight_map object ({\"weight_map\": {tensor: shard file}})"));
  std::set<std::string> tensors, shards;
  for (const auto& [tensor, shard] : weight_map->members()) {
    if (!shard.is_string())
      throw CheckpointError(
          message(index.path, ": weight_map places ", tensor, " in ", shard.dump(), ", which is not a file name"));
    if (!tensors.insert(tensor).second)
      throw CheckpointError(message(index.path, ": weight_map names ", tensor, " twice"));
    const std::string path = shard_path(dir, shard.text(), tensor, index.path);
    if (shards.insert(path).second) index.shards.push_back(path);
    index.places.emplace_back(tensor, path);
  }
  return index;
}

// The files of a folder that look like weights or configuration, for the message saying that
// neither model.safetensors nor its index is there.
std::string relevant_files(const fs::path& dir) {
  static const std::set<std::string> kinds = {".safetensors", ".json", ".bin", ".pt",      ".pth",
                                              ".ckpt",        ".gguf", ".h5",  ".msgpack", ".model"};
  std::set<std::string> names;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir, error))
    if (kinds.count(entry.path().extension().string())) names.insert(entry.path().filename().string());
  if (names.empty()) return "it holds no weights or configuration files";
  std::string list;
  for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
  return "it holds " + list;
}

void require_directory(const fs::path& dir) {
  std::error_code error;
  if (!fs::is_directory(dir, error))
    throw CheckpointError(message(dir.string(), fs::exists(dir, error) ? ": not a directory" : ": no such directory",
                                  " (a hub model folder: config.json, model.safetensors, tokenizer.json)"));
}

// The folder's safetensors files: model.safetensors when it is there (transformers reads it first),
// else the index's shards. The index is read only in the second case; "" for no index.
std::vector<std::string> weight_files(const fs::path& dir, ShardIndex& index) {
  std::error_code error;
  if (fs::exists(dir / kSingleFile, error)) return {(dir / kSingleFile).string()};
  if (!fs::exists(dir / kIndexFile, error))
    throw CheckpointError(message(dir.string(), ": neither ", kSingleFile, " nor ", kIndexFile,
                                  " (gradformer reads a model's weights as safetensors only); ", relevant_files(dir)));
  index = read_index(dir);
  return index.shards;
}

// A shard the index names must be there: the message names it and the tensors placed in it.
void require_shard(const std::string& path, const ShardIndex& index) {
  std::error_code error;
  if (fs::exists(path, error)) return require_regular_input(path, "a safetensors file");
  std::string first;
  int64_t count = 0;
  for (const auto& [tensor, shard] : index.places)
    if (shard == path && count++ == 0) first = tensor;
  throw CheckpointError(message(index.path, ": places ", first, count > 1 ? message(" and ", count - 1, " more") : "",
                                " in ", path, ", which is not there"));
}

// Each tensor's shard, by what the shards hold: a tensor in two shards refused, naming both.
std::map<std::string, size_t> place_tensors(const std::vector<std::string>& paths,
                                            const std::vector<std::vector<ParameterSpec>>& held) {
  std::map<std::string, size_t> shard_of;
  for (size_t i = 0; i < paths.size(); ++i)
    for (const ParameterSpec& spec : held[i]) {
      const auto [it, added] = shard_of.emplace(spec.name, i);
      if (!added)
        throw CheckpointError(message(spec.name, " is in two shards: ", paths[it->second], " and ", paths[i]));
    }
  return shard_of;
}

// The index and the shards agree: every tensor it names is in the shard it names, and every tensor
// of a shard is named.
void check_index(const ShardIndex& index, const std::vector<std::string>& paths,
                 const std::map<std::string, size_t>& shard_of) {
  std::set<std::string> named;
  for (const auto& [tensor, shard] : index.places) {
    named.insert(tensor);
    const auto it = shard_of.find(tensor);
    if (it == shard_of.end() || paths[it->second] != shard)
      throw CheckpointError(message(shard, ": no tensor ", tensor, ", which ", index.path, " places there",
                                    it == shard_of.end() ? "" : message(" (it is in ", paths[it->second], ")")));
  }
  for (const auto& [tensor, i] : shard_of)
    if (!named.count(tensor))
      throw CheckpointError(message(paths[i], ": holds ", tensor, ", which ", index.path, " does not name"));
}

}  // namespace

HubTensors open_hub_tensors(const std::string& dir) {
  const fs::path folder(dir);
  require_directory(folder);
  ShardIndex index;
  HubTensors out;
  out.folder_ = dir;
  std::vector<std::string> paths = weight_files(folder, index);
  std::vector<std::vector<ParameterSpec>> held;
  for (const std::string& path : paths) {
    if (!index.path.empty()) require_shard(path, index);
    require_regular_input(path, "a safetensors file");
    out.shards_.push_back({path, SafetensorsReader(path)});
    held.push_back(out.shards_.back().reader.tensor_specs());
  }
  out.shard_of_ = place_tensors(paths, held);
  if (!index.path.empty()) check_index(index, paths, out.shard_of_);
  out.index_file_ = index.path;
  for (std::vector<ParameterSpec>& specs : held)
    for (ParameterSpec& spec : specs) out.specs_.push_back(std::move(spec));
  std::sort(out.specs_.begin(), out.specs_.end(),
            [](const ParameterSpec& a, const ParameterSpec& b) { return a.name < b.name; });
  return out;
}

std::vector<std::string> hub_folder_paths(const std::string& dir) {
  const fs::path folder(dir);
  std::vector<std::string> paths = {(folder / kConfigFile).string()};
  std::error_code error;
  if (fs::exists(folder / kSingleFile, error) || !fs::exists(folder / kIndexFile, error)) {
    paths.push_back((folder / kSingleFile).string());
  } else {
    const ShardIndex index = read_index(folder);
    paths.push_back(index.path);
    paths.insert(paths.end(), index.shards.begin(), index.shards.end());
  }
  paths.push_back((folder / kTokenizerFile).string());
  return paths;
}

std::vector<std::string> HubTensors::files() const {
  std::vector<std::string> paths;
  for (const Shard& shard : shards_) paths.push_back(shard.path);
  return paths;
}

const std::string& HubTensors::file_of(const std::string& name) const {
  const auto it = shard_of_.find(name);
  if (it == shard_of_.end()) throw CheckpointError(message(folder_, ": no file of the folder holds the tensor ", name));
  return shards_[it->second].path;
}

const SafetensorsReader& HubTensors::reader_of(const std::string& name) const {
  file_of(name);  // refuses a name no file holds
  return shards_[shard_of_.at(name)].reader;
}

void HubTensors::read_into(const std::string& name, const Tensor& destination) const {
  reader_of(name).read_into(name, destination);
}

Tensor HubTensors::read(const std::string& name) const { return reader_of(name).read(name); }

std::vector<ParameterSpec> hub_tensor_specs(const HubConfig& c, DType dtype, bool with_lm_head) {
  const int64_t d = c.hidden_size, ff = c.intermediate_size, q = c.num_attention_heads * c.head_dim,
                kv = c.num_key_value_heads * c.head_dim;
  std::vector<ParameterSpec> specs;
  const auto add = [&](const std::string& name, Shape shape) { specs.push_back({name, std::move(shape), dtype}); };
  // A Linear [out, in] and, when it has one, its bias [out].
  const auto linear = [&](const std::string& name, int64_t out, int64_t in, bool bias) {
    add(name + ".weight", {out, in});
    if (bias) add(name + ".bias", {out});
  };
  add("model.embed_tokens.weight", {c.vocab_size, d});
  for (int64_t i = 0; i < c.num_hidden_layers; ++i) {
    const std::string layer = "model.layers." + std::to_string(i) + ".";
    add(layer + "input_layernorm.weight", {d});
    linear(layer + "self_attn.q_proj", q, d, c.qkv_bias);
    linear(layer + "self_attn.k_proj", kv, d, c.qkv_bias);
    linear(layer + "self_attn.v_proj", kv, d, c.qkv_bias);
    linear(layer + "self_attn.o_proj", d, q, c.o_bias);
    add(layer + "post_attention_layernorm.weight", {d});
    linear(layer + "mlp.gate_proj", ff, d, c.mlp_bias);
    linear(layer + "mlp.up_proj", ff, d, c.mlp_bias);
    linear(layer + "mlp.down_proj", d, ff, c.mlp_bias);
  }
  add("model.norm.weight", {d});
  if (with_lm_head) add("lm_head.weight", {c.vocab_size, d});
  return specs;
}

namespace {

constexpr std::string_view kRotaryBuffer = ".rotary_emb.inv_freq";

// Older files hold each layer's rotary frequencies (or the model's) as a buffer: not a weight.
bool is_rotary_buffer(const std::string& name) {
  return name.size() >= kRotaryBuffer.size() &&
         name.compare(name.size() - kRotaryBuffer.size(), kRotaryBuffer.size(), kRotaryBuffer) == 0;
}

// The folder's sizes as the config gives them, for the message listing what does not fit.
std::string described(const HubConfig& c) {
  return message(hub_model_type_name(c.model_type), " with V ", c.vocab_size, ", d ", c.hidden_size, ", ",
                 counted(c.num_hidden_layers, "layer"), ", ", c.num_attention_heads, " heads and ",
                 c.num_key_value_heads, " key/value heads of ", c.head_dim, ", ff ", c.intermediate_size,
                 c.tie_word_embeddings ? ", tied" : ", untied");
}

}  // namespace

HubTensorCheck check_hub_tensors(const HubConfig& c, const HubTensors& tensors) {
  if (c.model_type == HubModelType::Gpt2)
    throw CheckpointError(message(c.source, ": model_type gpt2: GPT-2's tensors are import_gpt2's to read"));
  HubTensorCheck out;
  std::vector<ParameterSpec> weights;
  for (const ParameterSpec& spec : tensors.specs()) {
    if (is_rotary_buffer(spec.name)) {
      out.ignored.push_back(spec.name);
      continue;
    }
    if (!is_floating(spec.dtype))
      throw CheckpointError(message(tensors.file_of(spec.name), ": ", spec.name, " is ", spec.shape, " ", spec.dtype,
                                    ", but a model's weights are floating point"));
    weights.push_back(spec);
    if (spec.name == "model.embed_tokens.weight") out.dtype = spec.dtype;  // every weight's, expected
  }
  out.lm_head_in_folder = tensors.contains("lm_head.weight");
  const std::vector<ParameterSpec> expected =
      hub_tensor_specs(c, out.dtype, !c.tie_word_embeddings || out.lm_head_in_folder);
  const std::string problems = state_mismatches(expected, weights, "by the config", "in the folder");
  if (!problems.empty())
    throw CheckpointError(message(tensors.folder(), ": the tensors are not those of the model ", c.source,
                                  " describes (", described(c), "):", problems));
  return out;
}

void require_lm_head_is_embedding(const HubTensors& tensors, const Tensor& embedding) {
  const std::string& file = tensors.file_of("lm_head.weight");
  const Tensor lm_head = tensors.read("lm_head.weight").contiguous(), embed = embedding.contiguous();
  if (lm_head.shape() != embed.shape() || lm_head.dtype() != embed.dtype())
    throw CheckpointError(message(file, ": lm_head.weight is ", lm_head.shape(), " ", lm_head.dtype(),
                                  ", but the tied embedding is ", embed.shape(), " ", embed.dtype()));
  const size_t size = itemsize(embed.dtype());
  const std::byte* a = lm_head.storage()->data() + lm_head.offset() * size;
  const std::byte* b = embed.storage()->data() + embed.offset() * size;
  for (int64_t i = 0; i < embed.numel(); ++i)
    if (std::memcmp(a + i * size, b + i * size, size) != 0) {
      const int64_t columns = embed.dim() == 2 ? embed.size(1) : 1;
      throw CheckpointError(message(file, ": tie_word_embeddings is true, but lm_head.weight is not ",
                                    "model.embed_tokens.weight: they differ first at [", i / columns, ", ", i % columns,
                                    "]"));
    }
}

}  // namespace gradformer
