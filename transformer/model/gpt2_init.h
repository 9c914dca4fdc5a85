// GPT-2's initialisation (Radford et al., 2019, section 2.3):
//
//   "A modified initialization which accounts for the accumulation on the residual path with model
//    depth is used. We scale the weights of residual layers at initialization by a factor of
//    1/sqrt(N) where N is the number of residual layers."
//
// Each block adds two sub-layer outputs to the residual stream (attention, then the feed-forward
// network), so a model of n_layer blocks has N = 2 n_layer residual layers. As nanoGPT writes it:
//
//   every weight matrix                              N(0, 0.02)
//   the two that write into the residual stream      N(0, 0.02 / sqrt(2 n_layer))
//     (self_attn.out_proj.weight, GPT-2's attn.c_proj; linear2.weight, GPT-2's mlp.c_proj)
//   token embedding (wte)                            N(0, 0.02)
//   learned positions (wpe)                          N(0, 0.01), as GPT-2's released model.py
//   biases 0;  LayerNorm gains 1, biases 0
//
// Without the scaling, each of the N sub-layers adds about the same variance to the stream, whose
// RMS then grows like sqrt(N); with it, the N additions together add about as much as one would.
#pragma once

#include "tensor/random.h"
#include "transformer/model/decoder_only.h"

namespace gradformer {

/// The standard deviations above, as constants, so tests and chapters can name them.
struct Gpt2Init {
  static constexpr double weight_std = 0.02;    // every matrix, and wte
  static constexpr double position_std = 0.01;  // wpe (GPT-2's model.py)
  /// 0.02 / sqrt(2 n_layer): the residual projections' standard deviation.
  static double residual_std(int64_t n_layer);
};

/// Redraws every parameter of `model` as GPT-2 initialises it (above), from `gen`. Sinusoidal
/// positions (no parameter) and LoRA adapters (a fine-tuning's, drawn by reset_lora_adapters) are
/// left alone.
void gpt2_init_(DecoderOnly& model, Generator& gen);

}  // namespace gradformer
