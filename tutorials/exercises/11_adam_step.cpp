// Exercise (chapter 11): write one step of Adam.
//
// For each element k of the parameter p, with gradient g[k], at the parameter's t-th update
// (t = 1, 2, ...; m and v start at 0):
//   m = beta1 * m + (1 - beta1) * g                 the running mean of the gradient
//   v = beta2 * v + (1 - beta2) * g^2               the running mean of its square
//   p = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
// The two divisions by 1 - beta^t are the bias correction: m and v start at 0, so early on they are
// too small by exactly those factors. Update p, m and v in place; the options are in
// options.lr, options.beta1, options.beta2 and options.eps. Then:
//   cmake --build build --target check-exercise-11_adam_step
// Delete the `throw` line when you write the body: it is how the checker knows that the file is
// untouched, and says so.
#include "exercises.h"

namespace exercises {

void adam_step(std::vector<double>& p, const std::vector<double>& g, std::vector<double>& m, std::vector<double>& v,
               int64_t t, const gradformer::AdamOptions& options) {
  // Your code here.
  (void)p, (void)g, (void)m, (void)v, (void)t, (void)options;
  throw NotWrittenYet();
}

}  // namespace exercises
