// Exercise (chapter 13): write one step of beam search.
//
// Each of the `rows` live prefixes has a log-probability alive_log_probs[row] (-inf for a row that is
// not alive, as every row but the first is at the first step), and the model gives log_probs
// [rows, V] (float64), the log-probability of each next token after each prefix. Extending prefix
// `row` by `token` gives log P = alive_log_probs[row] + log_probs[row, token]. Return the `count`
// most probable extensions as BeamCandidate{row, token, log P}, best first; leave out those of
// log P -inf (fewer than `count` come back then); of two equal ones, the one with the smaller
// row * V + token first. log_probs.at({row, token}) reads one entry. Then:
//   cmake --build build --target check-exercise-13_beam_step
// Delete the `throw` line when you write the body: it is how the checker knows that the file is
// untouched, and says so.
#include "exercises.h"

namespace exercises {

using namespace gradformer;

std::vector<BeamCandidate> beam_step(const std::vector<double>& alive_log_probs, const Tensor& log_probs,
                                     int64_t count) {
  // Your code here.
  (void)alive_log_probs, (void)log_probs, (void)count;
  throw NotWrittenYet();
}

}  // namespace exercises
