// Bringing in an encoder-decoder trained elsewhere: a plain state dict (a .safetensors file of
// tensors only, as PyTorch's safetensors package saves one) under gradformer's parameter names
// (ARCHITECTURE.md, "Checkpoints"), turned into a gradformer checkpoint. The tensors' shapes tell
// most of the configuration; what they cannot tell (the number of heads, how sources were fed, the
// vocabularies) the caller supplies.
#pragma once

#include <string>

#include "nn/safetensors.h"
#include "transformer/store/checkpoint.h"

namespace gradformer {

/// What the shapes of an encoder-decoder's tensors say, and which tensor says it:
///   src_vocab, d_model   src_embed.weight [V_src, d]
///   tgt_vocab            tgt_embed.weight [V_tgt, d] (or generator.weight; V_src when tied)
///   tie_embeddings       tgt_embed.weight and generator.weight absent, or both bit-identical to
///                        src_embed.weight (a state dict of tied modules lists the matrix thrice)
///   d_ff                 encoder.layers.0.linear1.weight [d_ff, d]
///   layers               the encoder.layers.{i} present (the decoder must have as many)
///   norm                 pre when encoder.norm.weight is present (pre-LN's final LayerNorm), else post
///   positions, max_len   learned when positional_encoding.weight [max_len, d] is present (max_len 0
///                        otherwise: sinusoids are computed, not stored)
///   dtype                src_embed.weight's (float32 or float64)
struct WeightShapes {
  int64_t src_vocab = 0, tgt_vocab = 0, d_model = 0, d_ff = 0, layers = 0, max_len = 0;
  bool tie_embeddings = false;
  NormPlacement norm = NormPlacement::Post;
  Positions positions = Positions::Sinusoidal;
  DType dtype = DType::Float32;
};

/// The shapes of `tensors` read as above. CheckpointError naming `source` when they are not an
/// encoder-decoder's: the names of a decoder-only or encoder-only model (said so), names that are
/// not gradformer's (the first few listed), a tensor that shapes depend on missing or not a float
/// matrix, an encoder and decoder of different depths, or a layer index no model may have
/// ("tensor encoder.layers.9223372036854775807.norm1.weight has layer index 9223372036854775807, but
/// a model has at most 1024 layers").
WeightShapes infer_shapes(const StateDict& tensors, const std::string& source);

/// The file at `path`, refused (CheckpointError) when it is already a gradformer checkpoint.
SafetensorsFile read_weights(const std::string& path);

/// The model that `tensors` are the parameters of, under `info` (its config complete: the shapes'
/// values plus heads, max_len, activation, dropout; its vocabularies and source_eos). A tied
/// matrix listed three times is kept once. CheckpointError naming `source` for vocabularies whose
/// sizes differ from the embeddings' rows (or that differ from each other when tied), a
/// configuration that does not validate, and tensors that do not fit it: the missing, unexpected
/// and mis-shaped ones listed together (at most 10, then a count), found before the model is built
/// (parameter_specs), so a few tensors naming a deep stack cost nothing.
LoadedCheckpoint import_weights(const StateDict& tensors, const CheckpointInfo& info, const std::string& source);

}  // namespace gradformer
