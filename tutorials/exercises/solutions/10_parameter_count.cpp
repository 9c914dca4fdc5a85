// The reference solution of tutorials/exercises/10_parameter_count.cpp (the formula of
// parameter_count in transformer/model/encoder_decoder.cpp).
#include "exercises.h"

namespace exercises {

using namespace gradformer;

int64_t parameter_count(const TransformerConfig& c) {
  const int64_t d = c.d_model;
  const int64_t attention = 4 * d * d + 4 * d;               // W^Q, W^K, W^V, W^O and their biases
  const int64_t feed_forward = 2 * d * c.d_ff + c.d_ff + d;  // W_1, b_1, W_2, b_2
  const int64_t layer_norm = 2 * d;                          // gain and bias
  const int64_t encoder_layer = attention + feed_forward + 2 * layer_norm;
  const int64_t decoder_layer = 2 * attention + feed_forward + 3 * layer_norm;
  // Tied: one [V, d] matrix for both embeddings and the output weight; the output bias stays.
  const int64_t embeddings = c.tie_embeddings ? c.src_vocab * d : (c.src_vocab + c.tgt_vocab) * d;
  const int64_t output_projection = c.tie_embeddings ? c.tgt_vocab : d * c.tgt_vocab + c.tgt_vocab;
  const int64_t final_norms = c.norm == NormPlacement::Pre ? 2 * layer_norm : 0;
  const int64_t positions = c.positions == Positions::Learned ? c.max_len * d : 0;
  return embeddings + positions + output_projection + c.layers * (encoder_layer + decoder_layer) + final_norms;
}

}  // namespace exercises
