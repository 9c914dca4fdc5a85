// LoRA (Hu et al., 2021, "LoRA: Low-Rank Adaptation of Large Language Models"): a weight W [out, in]
// kept frozen, and beside it a trainable update of rank r,
//
//   h = x W^T + (alpha / r) x A^T B^T        A [r, in], B [out, r]
//
// "We use a random Gaussian initialization for A and zero for B, so ΔW = BA is zero at the
// beginning of training" (section 4.1): the model starts as it was. A and B hold r (in + out) numbers
// against W's in·out; alpha / r keeps the update's size steady when r changes. Merged, W + (alpha / r)
// B A is one matrix again, and the model runs as fast as before. Freezing W is the caller's: a
// fine-tuning trains A and B alone (set_requires_grad(false) on the rest, the optimizer given only
// what requires gradients).
#pragma once

#include <cstdint>

#include "autograd/variable.h"
#include "nn/init.h"
#include "nn/module.h"

namespace gradformer {

class LoraAdapter : public Module {
 public:
  /// A ~ U(-1/sqrt(in), 1/sqrt(in)) (PyTorch's default for a Linear's weight, as the reference
  /// implementation draws it), B = 0. ValueError unless 1 <= rank <= min(in, out) and alpha > 0.
  LoraAdapter(int64_t in, int64_t out, int64_t rank, double alpha, Generator& gen, DType dtype = DType::Float32);
  /// The same, A and B allocated but not drawn (a checkpoint's are loaded into them).
  LoraAdapter(int64_t in, int64_t out, int64_t rank, double alpha, SkipInit, DType dtype = DType::Float32);
  /// (alpha / r) (x A^T) B^T     x [..., in] -> [..., out]: two thin products, never B A itself.
  Variable forward(const Variable& x) const;
  /// (alpha / r) B A  [out, in]: what merging adds to W.
  Tensor delta() const;
  double scale() const { return scale_; }

  Variable A, B;  // [r, in], [out, r]

 private:
  double scale_;
};

}  // namespace gradformer
