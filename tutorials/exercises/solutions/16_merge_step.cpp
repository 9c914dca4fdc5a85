// Reference solution of tutorials/exercises/16_merge_step.cpp: count the pairs, take the first of
// the most frequent in pair order, join it left to right.
#include <map>

#include "exercises.h"

namespace exercises {

ChosenPair merge_step(std::vector<WordCount>& words, int64_t new_id) {
  std::map<std::pair<int64_t, int64_t>, int64_t> counts;  // ascending pairs: a tie keeps the smaller one
  for (const WordCount& word : words)
    for (size_t i = 0; i + 1 < word.ids.size(); ++i) counts[{word.ids[i], word.ids[i + 1]}] += word.count;
  ChosenPair chosen;
  for (const auto& [pair, count] : counts)
    if (count > chosen.count) chosen = {pair.first, pair.second, count};
  if (chosen.count == 0) return chosen;
  for (WordCount& word : words) {
    std::vector<int64_t> joined;
    for (size_t i = 0; i < word.ids.size(); ++i) {
      const bool pair_here = i + 1 < word.ids.size() && word.ids[i] == chosen.left && word.ids[i + 1] == chosen.right;
      joined.push_back(pair_here ? new_id : word.ids[i]);
      i += pair_here ? 1 : 0;  // the pair's right token is used up
    }
    word.ids = std::move(joined);
  }
  return chosen;
}

}  // namespace exercises
