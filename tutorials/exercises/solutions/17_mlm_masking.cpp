// Reference solution of tutorials/exercises/17_mlm_masking.cpp: one draw per word decides whether it
// is chosen, and a second what becomes of a chosen one.
#include "exercises.h"

namespace exercises {

using namespace gradformer;

MlmBatch mask_tokens(const Tensor& ids, int64_t vocab_size, Generator& gen) {
  std::vector<int64_t> input = ids.contiguous().to_vector<int64_t>(), labels(input.size(), Vocab::pad);
  for (size_t i = 0; i < input.size(); ++i) {
    if (input[i] < kFirstWordId || gen.uniform() >= 0.15) continue;  // specials are never chosen
    labels[i] = input[i];
    const double what = gen.uniform();
    if (what < 0.8)
      input[i] = kMaskId;
    else if (what < 0.9)
      input[i] = gen.integer(kFirstWordId, vocab_size);
    // else: the word stays
  }
  MlmBatch batch;
  batch.input = from_vector(input, ids.shape());
  batch.labels = from_vector(labels, ids.shape());
  return batch;
}

}  // namespace exercises
