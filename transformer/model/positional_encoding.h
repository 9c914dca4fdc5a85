// Sinusoidal positional encoding (Vaswani et al., 2017, section 3.5):
//
//   "Since our model contains no recurrence and no convolution, in order for the model to make use
//    of the order of the sequence, we must inject some information about the relative or absolute
//    position of the tokens in the sequence."
//
//       PE(pos, 2i)   = sin(pos / 10000^(2i / d_model))
//       PE(pos, 2i+1) = cos(pos / 10000^(2i / d_model))
//
//   "We chose this function because we hypothesized it would allow the model to easily learn to
//    attend by relative positions, since for any fixed offset k, PE(pos+k) can be represented as a
//    linear function of PE(pos)."  — each (sin, cos) pair is rotated by the angle k / 10000^(2i/d).
//
//   "In the embedding layers, we multiply those weights by sqrt(d_model)." (section 3.4) ...
//   "we apply dropout to the sums of the embeddings and the positional encodings" (section 5.4)
//
// Learned positions are the alternative the paper tried ("We also experimented with using learned
// positional embeddings instead, and found that the two versions produced nearly identical
// results", section 3.5) and the one GPT-2 and BERT use: a [max_len, d_model] parameter, one row per
// position, initialised N(0, 0.02) ("initializer_range": 0.02 in both models' configurations).
#pragma once

#include <memory>

#include "autograd/variable.h"
#include "nn/layers.h"
#include "nn/module.h"
#include "tensor/random.h"
#include "tensor/tensor.h"
#include "transformer/model/config.h"

namespace gradformer {

/// The table PE [max_len, d_model] (d_model even). ValueError for non-positive or odd sizes.
Tensor sinusoidal_encoding(int64_t max_len, int64_t d_model, DType dtype = DType::Float32);

/// The rotation that takes PE(pos) to PE(pos + k) for every pos: a [d_model, d_model] block-diagonal
/// matrix of 2x2 rotations [[cos a_i, sin a_i], [-sin a_i, cos a_i]], a_i = k / 10000^(2i/d), so
/// PE(pos + k) = R_k PE(pos) (PE as a column).
Tensor positional_rotation(int64_t k, int64_t d_model, DType dtype = DType::Float64);

/// x -> dropout(x + PE[start : start + T]). Sinusoidal: no parameters (the table is a constant, not
/// trained). Learned: the parameter "weight" [max_len, d_model] is PE, allocated as zeros until
/// reset_parameters draws it. Rotary: nothing is added (x -> dropout(x)); the positions are in
/// each self-attention's rotation of queries and keys (rotary.h).
class PositionalEncoding : public Module {
 public:
  PositionalEncoding(int64_t d_model, int64_t max_len, double dropout_p, std::shared_ptr<Generator> dropout_gen,
                     DType dtype = DType::Float32, Positions positions = Positions::Sinusoidal);
  /// Learned: weight ~ N(0, 0.02) (GPT-2, BERT). Sinusoidal: nothing to draw.
  void reset_parameters(Generator& init_gen);
  bool learned() const { return weight.defined(); }
  bool rotary() const { return positions_ == Positions::Rotary; }
  Variable weight;  // learned only: [max_len, d_model]
  /// x: [B, T, d_model] -> [B, T, d_model]; positions start, start + 1, ... (start > 0 when decoding
  /// one token at a time). ShapeError naming max_len if the sequence is too long.
  Variable forward(const Variable& x, int64_t start = 0) const;
  /// The sinusoid table, or the learned matrix's current values (undefined for rotary positions).
  Tensor table() const { return learned() ? weight.value() : table_; }
  int64_t max_len() const { return max_len_; }

 private:
  int64_t d_model_, max_len_;
  Positions positions_;
  Tensor table_;  // sinusoidal only: [max_len, d_model]
  std::shared_ptr<Dropout> dropout_;
};

}  // namespace gradformer
