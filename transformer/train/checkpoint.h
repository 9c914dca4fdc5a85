// A gradformer checkpoint: one .safetensors file holding
//   tensors:  the model's parameters under PyTorch's names (src_embed.weight, encoder.layers.0...),
//             and, for resuming, the optimizer's moments as "optimizer.<name>" (adam.m.0, ...)
//   metadata: the model configuration (config.d_model, ...), both vocabularies (one token per
//             line), and the training state (train.*: step, generators, where the data stood).
// Everything needed to rebuild the model for `translate` and `score`, and to continue a run with
// `train --resume` exactly where it stopped.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "nn/safetensors.h"
#include "transformer/model/encoder_decoder.h"
#include "transformer/data/vocab.h"

namespace gradformer {

/// What a checkpoint holds besides the tensors.
struct CheckpointInfo {
  TransformerConfig config;
  Vocab source_vocab, target_vocab;
  /// Free-form string state: "train.step", "train.task", generator states, ... (kept as text so a
  /// person can read them with any safetensors tool).
  std::map<std::string, std::string> state;
};

/// Writes model parameters, optimizer state (may be empty) and info to `path`, atomically.
void save_checkpoint(const std::string& path, const EncoderDecoder& model, const StateDict& optimizer_state,
                     const CheckpointInfo& info);

struct LoadedCheckpoint {
  CheckpointInfo info;
  std::unique_ptr<EncoderDecoder> model;  // built from info.config, parameters loaded
  StateDict optimizer_state;              // names without the "optimizer." prefix
};

/// Reads a checkpoint written by save_checkpoint. CheckpointError naming the path for a file that
/// is not one (missing metadata, a configuration that does not validate, a vocabulary whose size
/// differs from the model's, tensors that do not fit the configuration).
LoadedCheckpoint load_checkpoint(const std::string& path);

/// The configuration as metadata entries ("config.d_model" -> "512", ...) and back.
std::map<std::string, std::string> config_to_metadata(const TransformerConfig& config);
TransformerConfig config_from_metadata(const std::map<std::string, std::string>& metadata, const std::string& source);

}  // namespace gradformer
