// Exercise (chapter 15): write the batch of causal language modelling, with its shift.
//
// Each sequence holds tokens (<s> first, </s> last) and scored, one flag a token: whether the loss
// counts it (for a sentence every token after <s>; for translation as language modelling the target's
// words and </s>). Pad every sequence with <pad> (Vocab::pad, 0) to the longest length L,
// then make the shift: position t reads token t and predicts token t + 1, so
//   inputs  = tokens[:, :-1]   [B, L-1]
//   targets = tokens[:, 1:]    [B, L-1], <pad> where the predicted token is not scored (its flag is
//                              false, or it is padding)
//   ntokens = how many targets are not <pad>
// Build the two tables as std::vector<int64_t> row by row and make them tensors with
// from_vector(values, {B, L - 1}). Then:
//   cmake --build build --target check-exercise-15_lm_batch
// Delete the `throw` line when you write the body: it is how the checker knows that the file is
// untouched, and says so.
#include "exercises.h"

namespace exercises {

using namespace gradformer;

LmBatch lm_batch(const std::vector<LmSequence>& sequences) {
  // Your code here.
  (void)sequences;
  throw NotWrittenYet();
}

}  // namespace exercises
