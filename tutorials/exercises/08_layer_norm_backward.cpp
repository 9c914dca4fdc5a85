// Exercise (chapter 8): LayerNorm's backward, the path every gradient of a post-LN Transformer takes.
//
// Over the last dimension (d features) of each row of x:
//   mean = (1/d) sum_j x_j,   var = (1/d) sum_j (x_j - mean)^2,   sigma = sqrt(var + eps)
//   xhat_j = (x_j - mean) / sigma,   y_j = gamma_j xhat_j + beta_j
// Given dy = dL/dy, return dL/dx (all [rows, d] float64; gamma [d]). Derive it on paper first: with
// g_j = dy_j gamma_j (dL/dxhat), remember that mean and sigma depend on every x_j of the row, so
// dL/dx_i collects a term through xhat_i itself and terms through mean and sigma. The result has
// the shape (1/sigma) (g_i - <mean of g> - xhat_i <mean of g xhat>). Write it with loops over
// x.data<double>() (rows = x.size(0), d = x.size(1)) or with tensor ops (sum with keepdim, sqrt).
// Then:
//   cmake --build build --target check-exercise-08_layer_norm_backward
// Delete the `throw` line when you write the body: it is how the checker knows that the file is
// untouched, and says so.
#include "exercises.h"

namespace exercises {

using namespace gradformer;

Tensor layer_norm_backward(const Tensor& x, const Tensor& gamma, const Tensor& dy, double eps) {
  // Your code here.
  (void)x, (void)gamma, (void)dy, (void)eps;
  throw NotWrittenYet();
}

}  // namespace exercises
