// A gradformer checkpoint: one .safetensors file holding
//   tensors:  the model's parameters under PyTorch's names (src_embed.weight, encoder.layers.0...),
//             and, for resuming, the optimizer's moments as "optimizer.<name>" (adam.m.0, ...)
//   metadata: the model configuration (config.d_model, ...), a vocabulary and tokenizer for each
//             side the model has (vocab.<side>, one token per line, and tokenizer.<side>.*: source
//             and target for the encoder-decoder, target alone for the decoder-only model, source
//             alone for the encoder-only one), how sources are fed (data.source_eos: "true" when each source sentence
//             ends in </s>, gradformer's convention and the meaning of a file without the entry), and the training
//             state (train.*: step, generators, where the data stood).
// Everything needed to rebuild the model for translating and scoring, and for train() to resume a
// run exactly where it stopped. One module for the three architectures (config.arch decides): the
// decoder-only model's configuration is a TransformerConfig too; the encoder-only one's is its own
//   config.arch = encoder-only, config.vocab, config.d_model, config.d_ff, config.heads,
//   config.layers, config.dropout, config.norm, config.max_len, config.positions, config.activation,
//   config.types, config.embed_norm, config.tie_embeddings, config.classes, config.dtype,
//   vocab.source (one token per line; <mask> at id 4), labels (one class name per line), state.*
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "nn/safetensors.h"
#include "transformer/data/tokenizer.h"
#include "transformer/data/vocab.h"
#include "transformer/model/decoder_only.h"
#include "transformer/model/encoder_decoder.h"
#include "transformer/model/encoder_only.h"

namespace gradformer {

/// What a checkpoint holds besides the tensors.
struct CheckpointInfo {
  TransformerConfig config;
  /// How text becomes ids, one tokenizer per side the model has: words (the vocabulary alone, as in
  /// the first checkpoints), bytes or byte-pair encoding (the vocabulary and the tokenizer.<side>.*
  /// entries). An encoder-decoder reads source_tokenizer's ids and writes target_tokenizer's. A
  /// decoder-only model has one side, the decoder's: its tokenizer is target_tokenizer (stored as
  /// vocab.target and tokenizer.target.*), and source_tokenizer is left empty, neither read nor written.
  Tokenizer source_tokenizer, target_tokenizer;
  /// Free-form string state: "train.step", "train.task", generator states, ... (kept as text so a
  /// person can read them with any safetensors tool).
  std::map<std::string, std::string> state;
  /// Whether each source sentence ends in </s> (metadata data.source_eos, encoder-decoder only):
  /// always so for models gradformer trains; a model imported from elsewhere may have been trained
  /// without it, and translate, score and trace feed its sources as it was trained.
  bool source_eos = true;
  /// The ids that end a text (metadata data.end_of_text, "2,7"): an imported hub model's
  /// eos_token_id, which generate stops at. Empty, and not written, for every other model.
  std::vector<int64_t> end_of_text = {};
};

struct EncoderOnlyCheckpointInfo {
  EncoderOnlyConfig config;
  Vocab vocab;
  std::vector<std::string> labels;           // the classifier's class names, config.classes of them
  std::map<std::string, std::string> state;  // "train.step", "options.task", ... (without "state.")
};
/// Any checkpoint as read and checked, before a model is built: what every command that reads a
/// checkpoint (the loaders below, train --resume and --init, average) is given. CheckpointError
/// naming the path for a file that is not a gradformer checkpoint (a file of tensors only, such as a
/// PyTorch state dict, is told to go through `gradformer import`), an unknown config.arch, a
/// configuration that does not validate, vocabularies (or labels) of other sizes than the
/// configuration's, a tensor whose name, shape or dtype is not what the configuration implies
/// (checked against the header before anything is built or allocated: "PATH: the tensors do not fit
/// the stored configuration:\n  mismatched: src_embed.weight is [6, 8192] float32 by the
/// configuration, [6, 4] float32 in the file", missing and unexpected ones listed alike), or a
/// non-finite parameter (a model like that predicts nothing). What it returns builds and loads.
struct CheckpointFile {
  std::string path;
  Architecture arch = Architecture::EncoderDecoder;  // config.arch; absent in the first checkpoints
  std::map<std::string, std::string> metadata;       // every entry
  std::map<std::string, std::string> state;          // the state.* entries, without "state."
  StateDict parameters, optimizer_state;             // optimizer.* without the prefix
  /// What the metadata says, its tokenizers built once, here (GPT-2's 50,000 merges are the costly
  /// part of a read): `info` for an encoder-decoder or decoder-only checkpoint, `encoder_only` for
  /// an encoder-only one; the other stays default.
  CheckpointInfo info;
  EncoderOnlyCheckpointInfo encoder_only;
  /// read_checkpoint_header's: the file, its parameters not yet read (`parameters` is empty); a
  /// loader makes them views of the mapped file (SafetensorsReader::view) or reads them straight
  /// into its model's own parameters.
  std::optional<SafetensorsReader> unread_parameters;
};
CheckpointFile read_checkpoint_file(const std::string& path);
/// How many tokenizers (an encoder-only model's vocabulary counts as one) the checkpoint readers
/// have built from metadata in this process: a read builds each side the model has exactly once,
/// and the tests count it.
int64_t checkpoint_tokenizers_built();
/// Whether `key` is a tokenizer entry of a side an `arch` model does not have: vocab.source and
/// tokenizer.source.* in a decoder-only checkpoint (written, the target's twin, before each model
/// stored only its own sides). Readers ignore them; average does not copy them.
bool absent_side_entry(Architecture arch, const std::string& key);
/// The same checks from the header alone, the parameters left in the file (unread_parameters) and
/// checked for non-finite values as a loader reads them: for a caller that only builds a model
/// from the file (generate, score --text, the loaders given a path), which then holds every
/// parameter once, where read_checkpoint_file and a copy would hold it twice.
CheckpointFile read_checkpoint_header(const std::string& path);

/// Writes model parameters, optimizer state (may be empty) and info to `path`, atomically; the
/// metadata's configuration is `config` (config.arch says which model the tensors belong to).
void save_checkpoint(const std::string& path, const Module& model, const TransformerConfig& config,
                     const StateDict& optimizer_state, const CheckpointInfo& info);
/// The same for the encoder-decoder, with its own configuration.
void save_checkpoint(const std::string& path, const EncoderDecoder& model, const StateDict& optimizer_state,
                     const CheckpointInfo& info);
/// The first floating-point tensor holding a NaN or an infinity, as "name holds value", or "" if
/// none does: what the writer and the reader refuse.
std::string first_non_finite_tensor(const StateDict& tensors);
/// The writer under both: `parameters` (a model's state_dict(), or average's means), the optimizer
/// state as optimizer.*, `metadata` (the configuration and vocabularies, as config_to_metadata and
/// the vocab.* entries give them) with the format added, and `state` as state.*; atomically (a
/// temporary file renamed into place). CheckpointError for a non-finite parameter or optimizer state.
void save_checkpoint_parameters(const std::string& path, const StateDict& parameters, const StateDict& optimizer_state,
                                std::map<std::string, std::string> metadata,
                                const std::map<std::string, std::string>& state);

struct LoadedCheckpoint {
  CheckpointInfo info;
  std::unique_ptr<EncoderDecoder> model;  // built from info.config, parameters loaded
  StateDict optimizer_state;              // names without the "optimizer." prefix
};

/// An encoder-decoder or decoder-only checkpoint, before a model is built: what it says and its
/// tensors, as read_checkpoint_file checked them. info.config.arch tells which model to build (a
/// program dispatches on it); an encoder-only checkpoint is a CheckpointError naming the path.
/// Entries newer than the first checkpoints default to what those were: config.arch
/// encoder-decoder, config.activation relu, config.positions sinusoidal, data.source_eos true.
struct CheckpointContents {
  CheckpointInfo info;
  StateDict parameters;       // the model's tensors
  StateDict optimizer_state;  // names without the "optimizer." prefix
};
CheckpointContents read_checkpoint(const std::string& path);
CheckpointContents read_checkpoint(const CheckpointFile& file);

/// CheckpointError "PATH: a decoder-only checkpoint (config.arch), but this needs an
/// encoder-decoder one" unless info.config.arch is `needed`.
void require_architecture(const CheckpointInfo& info, Architecture needed, const std::string& path);
/// model.load_state_dict(parameters), any mismatch a CheckpointError naming the path.
void load_parameters(Module& model, const StateDict& parameters, const std::string& path);

/// Reads an encoder-decoder checkpoint written by save_checkpoint: read_checkpoint, then
/// require_architecture(EncoderDecoder), then the model built and its tensors loaded (CheckpointError
/// for tensors that do not fit the configuration): its parameters read from the file into the
/// model when the file is read_checkpoint_header's (the path overload's), copied from the file's
/// tensors when it is read_checkpoint_file's. `file` is taken by value: move it in (its tokenizers
/// are moved into the result, not copied).
LoadedCheckpoint load_checkpoint(CheckpointFile file);
LoadedCheckpoint load_checkpoint(const std::string& path);

struct LoadedDecoderOnly {
  CheckpointInfo info;
  std::unique_ptr<DecoderOnly> model;
  StateDict optimizer_state;
};
/// A decoder-only checkpoint: CheckpointError (naming the path and both kinds) for another kind.
LoadedDecoderOnly load_decoder_only_checkpoint(CheckpointFile file);
LoadedDecoderOnly load_decoder_only_checkpoint(const std::string& path);

/// Writes an encoder-only model's parameters, optimizer state (may be empty) and info, atomically.
void save_encoder_only_checkpoint(const std::string& path, const EncoderOnly& model, const StateDict& optimizer_state,
                                  const EncoderOnlyCheckpointInfo& info);
struct LoadedEncoderOnly {
  EncoderOnlyCheckpointInfo info;
  std::unique_ptr<EncoderOnly> model;
  StateDict optimizer_state;
};
/// CheckpointError naming the path: another architecture ("<path>: an encoder-decoder checkpoint
/// (config.arch), but <what> needs an encoder-only one"), bad metadata, tensors that do not fit.
LoadedEncoderOnly load_encoder_only_checkpoint(CheckpointFile file, const std::string& what = "this command");
LoadedEncoderOnly load_encoder_only_checkpoint(const std::string& path, const std::string& what = "this command");

/// The architecture a checkpoint's metadata declares: config.arch, or encoder-decoder for the
/// checkpoints written before there was a choice (they have no config.arch).
std::string checkpoint_arch(const std::map<std::string, std::string>& metadata);
inline constexpr const char* kEncoderOnlyArch = "encoder-only";

/// The configuration as metadata entries ("config.d_model" -> "512", ...) and back.
std::map<std::string, std::string> config_to_metadata(const TransformerConfig& config);
TransformerConfig config_from_metadata(const std::map<std::string, std::string>& metadata, const std::string& source);
/// The block's settings (RMSNorm, key/value heads, biases, the rotary base and scaling) from the
/// config.* entries, the paper's for each one absent. CheckpointError naming `source` and the entry.
BlockOptions block_options_from_metadata(const std::map<std::string, std::string>& metadata, const std::string& source);
std::map<std::string, std::string> encoder_only_config_to_metadata(const EncoderOnlyConfig& config);
inline std::map<std::string, std::string> config_to_metadata(const EncoderOnlyConfig& config) {
  return encoder_only_config_to_metadata(config);
}
EncoderOnlyConfig encoder_only_config_from_metadata(const std::map<std::string, std::string>& metadata,
                                                    const std::string& source);

}  // namespace gradformer
