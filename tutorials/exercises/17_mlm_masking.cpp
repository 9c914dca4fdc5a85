// Exercise (chapter 17): write BERT's masked-LM corruption, the 80/10/10 recipe.
//
// ids is [B, S] int64: each row <s> words </s> then <pad>. Every position holding a word (id >= 5,
// kFirstWordId; the ids below are <pad> <s> </s> <unk> <mask>, never chosen) is chosen with
// probability 0.15, independently, by a draw from `gen` (gen.uniform() is in [0, 1)). A chosen word
//   - becomes <mask> (kMaskId, 4) 80% of the time,
//   - becomes a word drawn uniformly from [5, vocab_size) 10% of the time (gen.integer(lo, hi)),
//   - stays as it is 10% of the time,
// and its label is the original word; every other position keeps its id and has the label <pad>
// (Vocab::pad, 0), which the loss ignores. Return input and labels as [B, S] int64 tensors
// (ids.to_vector<int64_t>() reads the ids, from_vector(values, ids.shape()) makes a tensor); the
// counts of MlmBatch may stay 0. Then:
//   cmake --build build --target check-exercise-17_mlm_masking
// Delete the `throw` line when you write the body: it is how the checker knows that the file is
// untouched, and says so.
#include "exercises.h"

namespace exercises {

using namespace gradformer;

MlmBatch mask_tokens(const Tensor& ids, int64_t vocab_size, Generator& gen) {
  // Your code here.
  (void)ids, (void)vocab_size, (void)gen;
  throw NotWrittenYet();
}

}  // namespace exercises
