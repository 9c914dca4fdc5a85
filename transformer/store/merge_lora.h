// Folding LoRA adapters into the weights they sit beside (nn/lora.h): after a fine-tuning that trained
// adapters alone, each projection's W + (alpha / r) B A is one matrix again, and the model runs as
// fast as it did before it had adapters ("we can explicitly compute and store W = W0 + BA and
// perform inference as usual", Hu et al., 2021, section 4.1).
#pragma once

#include <string>

#include "transformer/model/config.h"
#include "transformer/store/checkpoint.h"

namespace gradformer {

/// The parameters of a model of `layer`'s configuration (layer.block.lora: the adapters) with every
/// adapter folded in and gone: "P.lora.A" and "P.lora.B" into "P.weight" (a Linear), "P.lora_q",
/// "P.lora_k" and "P.lora_v" into their rows of "P.in_proj_weight" (W^Q's first, then W^K's, then
/// W^V's). Computed in float64, stored in each weight's dtype. The result loads into the same
/// configuration with block.lora = {}.
StateDict merge_lora(const StateDict& parameters, const LayerConfig& layer);

/// Writes to `out_path` the checkpoint at `path` with its adapters merged (merge_lora): its
/// configuration without config.lora.*, its tokenizers and chat template kept; no optimizer state and
/// no training state, so it generates, chats and scores, and a fine-tuning of it starts anew.
/// CheckpointError if the checkpoint has no adapters; ValueError if `out_path` is `path`.
void merge_lora_checkpoint(const std::string& path, const std::string& out_path);

}  // namespace gradformer
