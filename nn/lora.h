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
#include <string>

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
  /// A drawn again, B back to zero: the update is nothing again.
  void reset_parameters(Generator& gen);
  /// ((alpha / r) x A^T) B^T     x [..., in] -> [..., out]: two thin products, never B A itself.
  Variable forward(const Variable& x) const;
  /// (alpha / r) B A  [out, in]: what merging adds to W.
  Tensor delta() const;
  double scale() const { return scale_; }

  Variable A, B;  // [r, in], [out, r]

 private:
  double scale_;
};

/// Whether a parameter's dotted name is an adapter's: one of its parts is "lora" or starts "lora_"
/// (Linear's "lora", MultiheadAttention's "lora_q", "lora_k", "lora_v").
bool is_lora_parameter(const std::string& name);

/// Every adapter of `model` drawn again (A) and zeroed (B), the model as it was before the
/// adapters: what a model's reset_parameters calls after drawing its own weights.
void reset_lora_adapters(const Module& model, Generator& gen);

/// LoRA's fine-tuning: every parameter but the adapters' frozen (requires_grad false: no gradient
/// is computed for it, and an optimizer given the parameters that require one leaves it alone).
/// Returns the number of numbers left to train.
int64_t freeze_all_but_lora(const Module& model);

}  // namespace gradformer
