// A tiny encoder-decoder over two sentence pairs, for the tracers' tests (trace and trace --train):
// d_model 16, 2 layers, 2 heads, seeded, so every run builds the same model.
#pragma once

#include <memory>

#include "transformer/data/vocab.h"
#include "transformer/model/encoder_decoder.h"

namespace gradformer {

struct TinyTranslator {
  Vocab source = Vocab::build({{"le", "chat", "noir", "mange", "."}, {"je", "suis", "heureux", "."}});
  Vocab target = Vocab::build({{"the", "black", "cat", "eats", "."}, {"i", "am", "happy", "."}});
  std::unique_ptr<EncoderDecoder> model;
  explicit TinyTranslator(NormPlacement norm) {
    TransformerConfig c = TransformerConfig::tutorial(source.size(), target.size());
    c.d_model = 16, c.d_ff = 32, c.heads = 2, c.layers = 2, c.norm = norm,
    c.max_len = 32;  // dropout 0.1: eval must turn it off
    model = std::make_unique<EncoderDecoder>(c, 7);
  }
};

}  // namespace gradformer
