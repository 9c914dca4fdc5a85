// One encoder-decoder forward pass, from a program outside the gradformer tree.
#include <iostream>

#include "transformer/model/encoder_decoder.h"
#include "transformer/model/masks.h"

int main() {
  using namespace gradformer;
  EncoderDecoder model(TransformerConfig::tutorial(/*src_vocab=*/20, /*tgt_vocab=*/20), /*seed=*/1);
  const Tensor src = from_vector<int64_t>({5, 6, 7, 2}, {1, 4}), tgt_in = from_vector<int64_t>({1, 8, 9}, {1, 3});
  const Variable logits = model.forward(src, tgt_in, padding_mask(src, 0), target_mask(tgt_in, 0));
  std::cout << "logits " << logits.value().shape() << "\n";  // [1, 3, 20]: a score per target word
}
