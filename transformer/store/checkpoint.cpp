#include "transformer/store/checkpoint.h"

#include <atomic>
#include <sstream>

#include "autograd/anomaly.h"
#include "tensor/support/saved_state.h"
#include "transformer/data/chat_template.h"
#include "transformer/model/parameter_specs.h"

namespace gradformer {
namespace {

constexpr const char* kFormat = "gradformer-checkpoint-1";
constexpr const char* kOptimizerPrefix = "optimizer.";
constexpr const char* kSourceEos = "data.source_eos";
constexpr const char* kEndOfText = "data.end_of_text";

// "2,7" -> {2, 7}, each an id of the model's vocabulary.
std::vector<int64_t> end_of_text_ids(const std::string& text, int64_t vocab, const std::string& path) {
  std::vector<int64_t> ids;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const int64_t id = parse_integer(item, message(path, ": ", kEndOfText));
    if (id < 0 || id >= vocab)
      throw CheckpointError(message(path, ": ", kEndOfText, " names id ", id, ", outside the vocabulary's ", vocab));
    ids.push_back(id);
  }
  return ids;
}

// Every tokenizer (or encoder-only vocabulary) built from a checkpoint's metadata: what
// checkpoint_tokenizers_built() reports.
std::atomic<int64_t> tokenizers_built{0};

bool is_optimizer_tensor(const std::string& name) { return name.rfind(kOptimizerPrefix, 0) == 0; }

// What a user holding a file of tensors only (a PyTorch state dict) should do with it.
std::string import_hint(const std::string& path) {
  return message(
      "; a file of tensors only (a PyTorch state dict) has no configuration or vocabularies: bring an "
      "encoder-decoder's weights in with gradformer import --weights ",
      path,
      " --src-vocab FILE --tgt-vocab FILE --heads H --source-eos yes|no --out FILE (see gradformer "
      "import --help)");
}

// The vocabulary stored as `key`, one token a line.
Vocab vocab_entry(const CheckpointFile& file, const std::string& key) {
  const auto entry = file.metadata.find(key);
  if (entry == file.metadata.end())
    throw CheckpointError(message(file.path, ": not a gradformer checkpoint: no metadata '", key, "'"));
  try {
    return Vocab::from_text(entry->second, file.path + " (" + key + ")");
  } catch (const DataError& e) {
    throw CheckpointError(e.what());
  }
}

// A side's tokenizer: its vocabulary (vocab.<side>) and, for bytes and byte-pair encoding, the
// tokenizer.<side>.* entries (none in a checkpoint of a model of words); GPT-2's and a hub
// tokenizer's: those entries only.
Tokenizer tokenizer_entry(const CheckpointFile& file, const std::string& side) {
  const auto kind = file.metadata.find("tokenizer." + side + ".kind");
  // GPT-2's ids and a hub tokenizer's: no vocab.<side>
  const bool own_ids = kind != file.metadata.end() && (kind->second == "gpt2" || kind->second == "hub");
  const Vocab vocab = own_ids ? Vocab() : vocab_entry(file, "vocab." + side);
  ++tokenizers_built;
  try {
    return Tokenizer::from_metadata(vocab, file.metadata, "tokenizer." + side, file.path);
  } catch (const DataError& e) {
    throw CheckpointError(e.what());
  }
}

// An encoder-decoder's or decoder-only model's checkpoint, all but its tensors: the configuration,
// the tokenizer of each side the model has (sizes the configuration's), data.source_eos. A
// decoder-only model has the target side alone; the source twin older checkpoints hold is not read.
CheckpointInfo transformer_info(const CheckpointFile& file) {
  const std::string& path = file.path;
  CheckpointInfo info;
  info.config = config_from_metadata(file.metadata, path);
  if (info.config.arch == Architecture::DecoderOnly) {
    info.target_tokenizer = tokenizer_entry(file, "target");
    // A hub tokenizer may have fewer ids than the model has rows (import_hub.h says why).
    const bool hub = info.target_tokenizer.kind() == Tokenizer::Kind::Hub;
    const int64_t ids = info.target_tokenizer.size(), rows = info.config.tgt_vocab;
    if (hub ? ids > rows : ids != rows)
      throw CheckpointError(message(path, ": a vocabulary of ", ids, " tokens does not match the model's ", rows));
  } else {
    info.source_tokenizer = tokenizer_entry(file, "source");
    info.target_tokenizer = tokenizer_entry(file, "target");
    if (info.source_tokenizer.size() != info.config.src_vocab || info.target_tokenizer.size() != info.config.tgt_vocab)
      throw CheckpointError(message(path, ": vocabularies of ", info.source_tokenizer.size(), " and ",
                                    info.target_tokenizer.size(), " tokens do not match the model's ",
                                    info.config.src_vocab, " and ", info.config.tgt_vocab));
  }
  // Checkpoints from before the entry: gradformer has always ended every source in </s>.
  const auto entry = file.metadata.find(kSourceEos);
  const std::string source_eos = entry == file.metadata.end() ? "true" : entry->second;
  if (source_eos != "true" && source_eos != "false")
    throw CheckpointError(message(path, ": ", kSourceEos, " must be true or false, got '", source_eos, "'"));
  info.source_eos = source_eos == "true";
  if (const auto ends = file.metadata.find(kEndOfText); ends != file.metadata.end())
    info.end_of_text = end_of_text_ids(ends->second, info.config.tgt_vocab, path);
  info.state = file.state;
  // a fine-tuned model's chat template (train --task sft), checked here for every reader
  if (const auto chat = info.state.find("chat.template"); chat != info.state.end()) {
    try {
      chat_template_named(chat->second);
    } catch (const ValueError& e) {
      throw CheckpointError(message(path, ": state.chat.template: ", e.what()));
    }
  }
  return info;
}

// An encoder-only checkpoint, all but its tensors: the configuration, the vocabulary (its size the
// configuration's), the class names (config.classes of them).
EncoderOnlyCheckpointInfo encoder_only_info(const CheckpointFile& file) {
  const std::string& path = file.path;
  EncoderOnlyCheckpointInfo info{encoder_only_config_from_metadata(file.metadata, path), {}, {}, file.state};
  info.vocab = vocab_entry(file, "vocab.source");
  ++tokenizers_built;
  if (info.vocab.size() != info.config.vocab)
    throw CheckpointError(message(path, ": a vocabulary of ", info.vocab.size(), " tokens does not match config.vocab ",
                                  info.config.vocab));
  std::istringstream labels(SavedState(file.metadata, path).text("labels"));
  for (std::string line; std::getline(labels, line);) info.labels.push_back(line);
  if (static_cast<int64_t>(info.labels.size()) != info.config.classes)
    throw CheckpointError(message(path, ": ", info.labels.size(), " labels for config.classes ", info.config.classes));
  return info;
}

// Every tensor's name, shape and dtype against the parameters the configuration implies, before any
// model is built: metadata asking for a model far larger than the file's tensors (config.d_model
// 8192 over tensors of width 4) is refused here at the cost of the header, not of building it.
void require_tensors_fit(const std::string& path, const std::vector<ParameterSpec>& expected,
                         const std::vector<ParameterSpec>& in_file) {
  const std::string problems = state_mismatches(expected, in_file, "by the configuration", "in the file");
  if (!problems.empty())
    throw CheckpointError(message(path, ": the tensors do not fit the stored configuration:", problems));
}

}  // namespace

// A model with a NaN or an infinity predicts nothing (every translation empty), so it is neither
// written nor read.
std::string first_non_finite_tensor(const StateDict& tensors) {
  for (const auto& [name, t] : tensors) {
    double value = 0;
    if (is_floating(t.dtype()) && first_non_finite(t, &value)) return message(name, " holds ", value);
  }
  return "";
}

// The one writer: the parameters, the optimizer's state as optimizer.*, `metadata` (the
// configuration and vocabularies), the format and the state as state.*.
void save_checkpoint_parameters(const std::string& path, const StateDict& parameters, const StateDict& optimizer_state,
                                std::map<std::string, std::string> metadata,
                                const std::map<std::string, std::string>& state) {
  if (const std::string bad = first_non_finite_tensor(parameters); !bad.empty())
    throw CheckpointError(message(path, ": not saving a model with a non-finite parameter (", bad, ")"));
  // Nor a state that would resume into one: Adam's moments are the next steps' arithmetic.
  if (const std::string bad = first_non_finite_tensor(optimizer_state); !bad.empty())
    throw CheckpointError(message(path, ": not saving a non-finite optimizer state (", kOptimizerPrefix, bad, ")"));
  StateDict tensors = parameters;
  for (const auto& [name, t] : optimizer_state) tensors.emplace(kOptimizerPrefix + name, t);
  metadata["format"] = kFormat;
  for (const auto& [key, value] : state) metadata["state." + key] = value;
  save_safetensors(path, tensors, metadata);
}

void save_checkpoint(const std::string& path, const Module& model, const TransformerConfig& config,
                     const StateDict& optimizer_state, const CheckpointInfo& info) {
  std::map<std::string, std::string> metadata = config_to_metadata(config);
  // One tokenizer per side the model has: a decoder-only model's is the target's alone.
  if (config.arch == Architecture::EncoderDecoder) {
    if (info.source_tokenizer.has_vocab()) metadata["vocab.source"] = info.source_tokenizer.vocab().to_text();
    metadata.merge(info.source_tokenizer.metadata("tokenizer.source"));
  }
  if (info.target_tokenizer.has_vocab()) metadata["vocab.target"] = info.target_tokenizer.vocab().to_text();
  metadata.merge(info.target_tokenizer.metadata("tokenizer.target"));
  if (config.arch == Architecture::EncoderDecoder) metadata[kSourceEos] = info.source_eos ? "true" : "false";
  if (!info.end_of_text.empty()) {
    std::string ids;
    for (int64_t id : info.end_of_text) ids += (ids.empty() ? "" : ",") + std::to_string(id);
    metadata[kEndOfText] = ids;
  }
  save_checkpoint_parameters(path, model.state_dict(), optimizer_state, std::move(metadata), info.state);
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
  save_checkpoint_parameters(path, model.state_dict(), optimizer_state, std::move(metadata), info.state);
}

int64_t checkpoint_tokenizers_built() { return tokenizers_built.load(); }

bool absent_side_entry(Architecture arch, const std::string& key) {
  return arch == Architecture::DecoderOnly && (key == "vocab.source" || key.rfind("tokenizer.source.", 0) == 0);
}

std::string checkpoint_arch(const std::map<std::string, std::string>& m) {
  const auto it = m.find("config.arch");
  return it == m.end() ? "encoder-decoder" : it->second;
}

namespace {

// What the header alone tells about a checkpoint, checked: the format, the architecture, the state
// entries; then everything a loader relies on: the configuration, the vocabularies, every tensor
// (`tensors`, as the header describes them) against the configuration, before anything is built.
CheckpointFile checked_header(const std::string& path, std::map<std::string, std::string> metadata,
                              const std::vector<ParameterSpec>& tensors) {
  CheckpointFile out{path, Architecture::EncoderDecoder, std::move(metadata), {}, {}, {}, {}, {}, std::nullopt};
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
  std::vector<ParameterSpec> parameters;
  for (const ParameterSpec& t : tensors)
    if (!is_optimizer_tensor(t.name)) parameters.push_back(t);
  // The metadata read once, its tokenizers built once: every loader takes them from here.
  if (out.arch == Architecture::EncoderOnly)
    out.encoder_only = encoder_only_info(out);
  else
    out.info = transformer_info(out);
  require_tensors_fit(path,
                      out.arch == Architecture::EncoderOnly ? parameter_specs(out.encoder_only.config)
                                                            : parameter_specs(out.info.config),
                      parameters);
  return out;
}

void require_finite_parameters(const std::string& path, const StateDict& parameters) {
  if (const std::string bad = first_non_finite_tensor(parameters); !bad.empty())
    throw CheckpointError(message(path, ": a non-finite parameter (", bad, "): the model is unusable"));
}

}  // namespace

// The one reader: the header checked (checked_header), then every tensor read, split into
// parameters and optimizer state, and no non-finite parameter, so that what this returns builds and loads.
CheckpointFile read_checkpoint_file(const std::string& path) {
  SafetensorsFile file = load_safetensors(path);
  std::vector<ParameterSpec> tensors;
  for (const auto& [name, t] : file.tensors) tensors.push_back({name, t.shape(), t.dtype()});
  CheckpointFile out = checked_header(path, std::move(file.metadata), tensors);
  for (auto& [name, t] : file.tensors) {
    if (is_optimizer_tensor(name))
      out.optimizer_state.emplace(name.substr(std::string(kOptimizerPrefix).size()), t);
    else
      out.parameters.emplace(name, t);
  }
  require_finite_parameters(path, out.parameters);
  return out;
}

// The same checks, the parameters left in the file for a loader to read into its model (the
// optimizer's state, if any, read now).
CheckpointFile read_checkpoint_header(const std::string& path) {
  const SafetensorsReader reader(path);
  const std::vector<ParameterSpec> tensors = reader.tensor_specs();
  CheckpointFile out = checked_header(path, reader.metadata(), tensors);
  for (const ParameterSpec& t : tensors)
    if (is_optimizer_tensor(t.name))
      out.optimizer_state.emplace(t.name.substr(std::string(kOptimizerPrefix).size()), reader.read(t.name));
  out.unread_parameters = reader;
  return out;
}

CheckpointContents read_checkpoint(const std::string& path) { return read_checkpoint(read_checkpoint_file(path)); }

namespace {

// An encoder-only checkpoint's configuration is its own: refused by name where `info` is read.
void refuse_encoder_only(const CheckpointFile& file) {
  if (file.arch == Architecture::EncoderOnly)
    throw CheckpointError(
        message(file.path,
                ": an encoder-only checkpoint (config.arch), but this needs an encoder-decoder or decoder-only one"));
}

}  // namespace

CheckpointContents read_checkpoint(const CheckpointFile& file) {
  refuse_encoder_only(file);
  return {file.info, file.parameters, file.optimizer_state};
}

void require_architecture(const CheckpointInfo& info, Architecture needed, const std::string& path) {
  if (info.config.arch != needed)
    throw CheckpointError(message(path, ": ", a_architecture(info.config.arch),
                                  " checkpoint (config.arch), but this needs ", a_architecture(needed), " one"));
}

void load_parameters(Module& model, const StateDict& parameters, const std::string& path) {
  try {
    model.load_state_dict(parameters);
  } catch (const Error& e) {
    throw CheckpointError(message(path, ": the tensors do not fit the stored configuration: ", e.what()));
  }
}

namespace {

// The model's parameters from the file, when the file still holds them (read_checkpoint_header):
// each parameter becomes a view of the file's bytes, mapped into memory (no copy, no memory of its
// own until training writes to it; the model was built with skip_init, whose zeros were never
// touched), or, where a view cannot be made, is read straight into the model's own storage. Else
// copied from the tensors read_checkpoint_file read (the caller keeps them).
void fill_parameters(Module& model, const CheckpointFile& file) {
  if (!file.unread_parameters) return load_parameters(model, file.parameters, file.path);
  for (auto& [name, parameter] : model.named_parameters()) {
    const Tensor stored = file.unread_parameters->view(name);
    if (stored.defined() && stored.shape() == parameter.shape() && stored.dtype() == parameter.dtype())
      parameter.set_value(stored);
    else
      file.unread_parameters->read_into(name, parameter.value());
  }
  require_finite_parameters(file.path, model.state_dict());
}

}  // namespace

LoadedCheckpoint load_checkpoint(CheckpointFile file) {
  refuse_encoder_only(file);
  require_architecture(file.info, Architecture::EncoderDecoder, file.path);
  // moved, not copied: GPT-2's tokenizer alone is 50,000 merges
  LoadedCheckpoint out{std::move(file.info), nullptr, std::move(file.optimizer_state)};
  // Built without initialising: every parameter is about to be overwritten by the stored tensors.
  out.model = std::make_unique<EncoderDecoder>(out.info.config, 0, skip_init);
  fill_parameters(*out.model, file);
  return out;
}

LoadedCheckpoint load_checkpoint(const std::string& path) { return load_checkpoint(read_checkpoint_header(path)); }

LoadedDecoderOnly load_decoder_only_checkpoint(CheckpointFile file) {
  refuse_encoder_only(file);
  require_architecture(file.info, Architecture::DecoderOnly, file.path);
  LoadedDecoderOnly out{std::move(file.info), nullptr, std::move(file.optimizer_state)};
  out.model = std::make_unique<DecoderOnly>(out.info.config, 0, skip_init);
  fill_parameters(*out.model, file);
  return out;
}

LoadedDecoderOnly load_decoder_only_checkpoint(const std::string& path) {
  return load_decoder_only_checkpoint(read_checkpoint_header(path));
}

LoadedEncoderOnly load_encoder_only_checkpoint(CheckpointFile file, const std::string& what) {
  if (file.arch != Architecture::EncoderOnly)
    throw CheckpointError(message(file.path, ": ", a_architecture(file.arch), " checkpoint (config.arch), but ", what,
                                  " needs an encoder-only one"));
  LoadedEncoderOnly out{std::move(file.encoder_only), nullptr, std::move(file.optimizer_state)};
  out.model = std::make_unique<EncoderOnly>(out.info.config, 0, skip_init);
  fill_parameters(*out.model, file);
  return out;
}

LoadedEncoderOnly load_encoder_only_checkpoint(const std::string& path, const std::string& what) {
  return load_encoder_only_checkpoint(read_checkpoint_header(path), what);
}

}  // namespace gradformer
