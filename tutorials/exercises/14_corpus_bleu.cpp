// Exercise (chapter 14): write corpus BLEU.
//
// hypotheses[i] is scored against references[i], each a list of words. For n = 1..4, go over every
// sentence: count each n-gram of the hypothesis (a std::map<std::vector<std::string>, int64_t> does
// it), and add to matches[n - 1] its count clipped to the number of times the reference holds it
// (min of the two), and to totals[n - 1] its count. Then, over the whole corpus:
//   precisions[n - 1] = matches / totals  (0 when totals is 0)
//   hypothesis_length c, reference_length r: the summed lengths
//   brevity_penalty = 1 if c > r, else exp(1 - r / c)  (0 when c is 0)
//   bleu = 100 * brevity_penalty * (p_1 p_2 p_3 p_4)^(1/4), and 0 when any matches[n] is 0.
// Fill in every field of the BleuScore. Then:
//   cmake --build build --target check-exercise-14_corpus_bleu
// Delete the `throw` line when you write the body: it is how the checker knows that the file is
// untouched, and says so.
#include "exercises.h"

namespace exercises {

using namespace gradformer;

BleuScore corpus_bleu(const std::vector<std::vector<std::string>>& hypotheses,
                      const std::vector<std::vector<std::string>>& references) {
  // Your code here.
  (void)hypotheses, (void)references;
  throw NotWrittenYet();
}

}  // namespace exercises
