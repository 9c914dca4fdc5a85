// Exercise (chapter 10): count the parameters of an encoder-decoder from its configuration.
//
// config.d_model (d), config.d_ff, config.layers (N, of the encoder and again of the decoder),
// config.src_vocab and config.tgt_vocab, and three choices:
//   config.tie_embeddings          one [V, d] matrix serves both embeddings and the output weight;
//   config.norm                    NormPlacement::Pre adds a final LayerNorm after each stack;
//   config.positions               Positions::Learned adds a [max_len, d] table (sinusoidal: none).
// Count what each piece holds: an embedding [V, d]; the output projection, a weight [V_tgt, d] and a
// bias [V_tgt]; an attention, four [d, d] matrices and four biases; the feed-forward network,
// W_1 [d_ff, d], b_1, W_2 [d, d_ff], b_2; a LayerNorm, a gain and a bias of d each. An encoder layer
// has one attention, a feed-forward network and 2 LayerNorms; a decoder layer one more attention
// (cross-attention) and a third LayerNorm. Then:
//   cmake --build build --target check-exercise-10_parameter_count
// Delete the `throw` line when you write the body: it is how the checker knows that the file is
// untouched, and says so.
#include "exercises.h"

namespace exercises {

using namespace gradformer;

int64_t parameter_count(const TransformerConfig& config) {
  // Your code here.
  (void)config;
  throw NotWrittenYet();
}

}  // namespace exercises
