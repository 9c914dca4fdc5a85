// Exercise (chapter 16): one step of learning byte-pair merges.
//
// Each word is a distinct pre-token of the training text, as token ids (at first its bytes), with
// how often the text holds it. One step:
//   1. count every pair of neighbouring ids inside each word, weighted by the word's count: each
//      place i, i + 1 counts once, so "7 7 7" holds the pair (7, 7) twice; pairs never cross from
//      one word into the next;
//   2. choose the most frequent pair; of pairs with the same count, the smaller one (the smaller
//      left id, then the smaller right id), so that the result depends on the text alone;
//   3. in every word, replace the pair's occurrences by new_id, left to right without overlap:
//      "7 7 7" becomes "new_id 7".
// Return the pair and its count; when no word has two tokens left, {-1, -1, 0} with the words
// unchanged. A std::map<std::pair<int64_t, int64_t>, int64_t> keeps the counts in pair order. Then:
//   cmake --build build --target check-exercise-16_merge_step
// Delete the `throw` line when you write the body: it is how the checker knows that the file is
// untouched, and says so.
#include "exercises.h"

namespace exercises {

ChosenPair merge_step(std::vector<WordCount>& words, int64_t new_id) {
  // Your code here.
  (void)words, (void)new_id;
  throw NotWrittenYet();
}

}  // namespace exercises
