// An encoder-only checkpoint: the same .safetensors layout as the encoder-decoder's (checkpoint.h),
// its parameters under EncoderOnly's names (encoder_only.h), optimizer.* for resuming, and metadata
//   config.arch = encoder-only, config.vocab, config.d_model, config.d_ff, config.heads,
//   config.layers, config.dropout, config.norm, config.max_len, config.positions (sinusoidal |
//   learned), config.activation (relu | gelu), config.types, config.embed_norm, config.tie_embeddings, config.classes,
//   config.dtype, vocab.source (one token per line; <mask> at id 4), labels (one class name per line), state.*
// The keys the other architectures share mean the same here; config.src_vocab/tgt_vocab become
// config.vocab, and the BERT-only ones are new. A checkpoint of another architecture is refused by
// name, and so is this one by read_checkpoint (checkpoint.h).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "nn/safetensors.h"
#include "transformer/data/vocab.h"
#include "transformer/model/encoder_only.h"

namespace gradformer {

inline constexpr const char* kEncoderOnlyArch = "encoder-only";

struct EncoderOnlyCheckpointInfo {
  EncoderOnlyConfig config;
  Vocab vocab;
  std::vector<std::string> labels;           // the classifier's class names, config.classes of them
  std::map<std::string, std::string> state;  // "train.step", "options.task", ... (without "state.")
};

/// Writes parameters, optimizer state (may be empty) and info to `path`, atomically.
void save_encoder_only_checkpoint(const std::string& path, const EncoderOnly& model, const StateDict& optimizer_state,
                                  const EncoderOnlyCheckpointInfo& info);

struct LoadedEncoderOnly {
  EncoderOnlyCheckpointInfo info;
  std::unique_ptr<EncoderOnly> model;
  StateDict optimizer_state;
};

/// CheckpointError naming the path: not a gradformer checkpoint, another architecture ("<path>: an
/// encoder-decoder checkpoint (config.arch), but <what> needs an encoder-only one"), bad metadata, tensors that do
/// not fit. `what` names the caller for that message ("classify").
LoadedEncoderOnly load_encoder_only_checkpoint(const std::string& path, const std::string& what = "this command");

/// The architecture a checkpoint's metadata declares: config.arch, or encoder-decoder for the
/// checkpoints written before there was a choice (they have no config.arch).
std::string checkpoint_arch(const std::map<std::string, std::string>& metadata);

std::map<std::string, std::string> encoder_only_config_to_metadata(const EncoderOnlyConfig& config);
EncoderOnlyConfig encoder_only_config_from_metadata(const std::map<std::string, std::string>& metadata,
                                                    const std::string& source);

}  // namespace gradformer
