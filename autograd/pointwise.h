// Differentiable elementwise functions, masks and dropout.
#pragma once

#include "autograd/variable.h"
#include "tensor/random.h"

namespace gradformer {

Variable exp(const Variable& x);
Variable log(const Variable& x);
Variable sqrt(const Variable& x);
Variable rsqrt(const Variable& x);  // 1 / sqrt(x)
Variable pow(const Variable& x, double exponent);
Variable pow(const Variable& x, const Variable& exponent);  // x > 0 where the exponent needs a gradient
Variable tanh(const Variable& x);
Variable relu(const Variable& x);
Variable gelu(const Variable& x);       // x * Phi(x), the exact (erf) form
Variable gelu_tanh(const Variable& x);  // GPT-2's tanh approximation of gelu
Variable silu(const Variable& x);       // x * sigmoid(x), the gate of Llama's SwiGLU

/// cond ? a : b elementwise (cond is a bool tensor; all three broadcast together).
Variable where(const Tensor& cond, const Variable& a, const Variable& b);
/// x with `value` wherever mask (bool, broadcast to x's shape) is true; no gradient flows there.
Variable masked_fill(const Variable& x, const Tensor& mask, double value);

/// Inverted dropout: each element is zeroed with probability p and the survivors are scaled by
/// 1/(1-p), so the expected value is unchanged and evaluation needs no rescaling. The mask is drawn
/// from `gen` and saved for backward. When training is false (or p == 0) x is returned as is.
/// ValueError unless 0 <= p <= 1.
Variable dropout(const Variable& x, double p, Generator& gen, bool training = true);

}  // namespace gradformer
