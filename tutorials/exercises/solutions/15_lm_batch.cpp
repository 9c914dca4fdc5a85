// Reference solution of tutorials/exercises/15_lm_batch.cpp: pad, then read each row shifted by one.
#include <algorithm>

#include "exercises.h"

namespace exercises {

using namespace gradformer;

LmBatch lm_batch(const std::vector<LmSequence>& sequences) {
  const auto B = static_cast<int64_t>(sequences.size());
  size_t L = 0;
  for (const LmSequence& s : sequences) L = std::max(L, s.tokens.size());
  std::vector<int64_t> inputs, targets;  // [B, L-1] each, row by row
  LmBatch batch;
  for (const LmSequence& s : sequences) {
    std::vector<int64_t> row = s.tokens;
    row.resize(L, Vocab::pad);
    for (size_t t = 0; t + 1 < L; ++t) {
      inputs.push_back(row[t]);  // position t reads token t ...
      const bool scored = t + 1 < s.tokens.size() && s.scored[t + 1];
      targets.push_back(scored ? row[t + 1] : Vocab::pad);  // ... and predicts token t + 1
      batch.ntokens += scored ? 1 : 0;
    }
  }
  const int64_t columns = static_cast<int64_t>(L) - 1;
  batch.inputs = from_vector(inputs, {B, columns});
  batch.targets = from_vector(targets, {B, columns});
  return batch;
}

}  // namespace exercises
