// A corpus where a sentence's length says what to do with it: four kinds of transformation over a
// twelve-letter alphabet, each with its own range of lengths and no marker of its kind.
//   copy     2-4 letters    "c a b"       -> "c a b"
//   reverse  5-7 letters    "a b c d e"   -> "e d c b a"
//   shift    8-10 letters   each letter becomes the next one, l wraps to a
//   swap     11-13 letters  neighbours change places: "a b c d ..." -> "b a d c ...", an odd last stays
// The model has to read the kind off the length. Batches grouped by length then hold one kind each,
// which is what makes this corpus the test case for batching (chapter 12).
#pragma once

#include <cstdint>
#include <vector>

#include "transformer/data/tsv.h"

namespace gradformer {

struct LengthKindsOptions {
  int64_t train_size = 3000;
  int64_t test_size = 300;
  uint64_t seed = 11;
};

/// Train and test pairs; no source appears in both. Kinds are drawn with equal probability, the
/// length uniformly in the kind's range, the letters uniformly.
struct LengthKindsCorpus {
  std::vector<SentencePair> train, test;
};

LengthKindsCorpus make_length_kinds_corpus(const LengthKindsOptions& options = {});

}  // namespace gradformer
