// Exercise (chapter 21): LoRA's backward pass, the gradients a fine-tuning with adapters trains on.
//
// The adapter adds h = s (x A^T) B^T to a frozen layer's output, s = alpha / r, with
//   x [N, in], A [r, in], B [out, r], and G = dL/dh [N, out] the gradient that arrives from above.
// With u = x A^T [N, r] (what the forward pass kept) and g = G B [N, r]:
//   dL/dB = s G^T u      [out, r]
//   dL/dA = s g^T x      [r, in]
//   dL/dx = s g A        [N, in]   (the adapter's part; the frozen W adds G W to it)
// Return the three, float64. Read a tensor with t.contiguous().to_vector<double>() (sizes t.size(0),
// t.size(1)) and build a result with from_vector(values, {rows, columns}); or use the library's
// matmul and transpose(0, 1). Then:
//   cmake --build build --target check-exercise-21_lora_backward
// Delete the `throw` line when you write the body: it is how the checker knows that the file is
// untouched, and says so.
#include "exercises.h"

namespace exercises {

using namespace gradformer;

LoraGradients lora_backward(const Tensor& x, const Tensor& A, const Tensor& B, double scale, const Tensor& G) {
  // Your code here.
  (void)x, (void)A, (void)B, (void)scale, (void)G;
  throw NotWrittenYet();
}

}  // namespace exercises
