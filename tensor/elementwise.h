// Elementwise operations with NumPy broadcasting. Binary ops need both operands to share a dtype
// (no silent promotion); a double scalar takes the tensor's dtype.
#pragma once

#include "tensor/tensor.h"

namespace gradformer {

// ---- arithmetic (float32, float64, int64) ----------------------------------------------------
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor neg(const Tensor& a);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor clamp(const Tensor& a, double lo, double hi);  // ValueError if lo > hi

// ---- floating only ---------------------------------------------------------------------------
Tensor pow(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& a, double exponent);
Tensor exp(const Tensor& a);
Tensor log(const Tensor& a);
Tensor sqrt(const Tensor& a);
Tensor rsqrt(const Tensor& a);  // 1 / sqrt(a)
Tensor tanh(const Tensor& a);
Tensor relu(const Tensor& a);       // max(0, a)
Tensor gelu(const Tensor& a);       // a * Phi(a), the exact (erf) form
Tensor gelu_tanh(const Tensor& a);  // GPT-2's approximation: a/2 (1 + tanh(sqrt(2/pi) (a + 0.044715 a^3)))
Tensor silu(const Tensor& a);       // a * sigmoid(a) = a / (1 + exp(-a)), Llama's (SwiGLU's gate)

// ---- comparisons and masks: results are bool -------------------------------------------------
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor logical_and(const Tensor& a, const Tensor& b);
Tensor logical_not(const Tensor& a);
/// cond ? a : b, elementwise, all three broadcast together; cond is bool.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
/// a with `value` wherever mask (bool, broadcast to a's shape) is true.
Tensor masked_fill(const Tensor& a, const Tensor& mask, double value);

// ---- operators, for readable formulas: (x - mean) / sqrt(var + eps) ---------------------------
inline Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
inline Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
inline Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
inline Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
inline Tensor operator-(const Tensor& a) { return neg(a); }
inline Tensor operator+(const Tensor& a, double b) { return add(a, scalar(b, a.dtype())); }
inline Tensor operator-(const Tensor& a, double b) { return sub(a, scalar(b, a.dtype())); }
inline Tensor operator*(const Tensor& a, double b) { return mul(a, scalar(b, a.dtype())); }
inline Tensor operator/(const Tensor& a, double b) { return div(a, scalar(b, a.dtype())); }
inline Tensor operator+(double a, const Tensor& b) { return add(scalar(a, b.dtype()), b); }
inline Tensor operator-(double a, const Tensor& b) { return sub(scalar(a, b.dtype()), b); }
inline Tensor operator*(double a, const Tensor& b) { return mul(scalar(a, b.dtype()), b); }
inline Tensor operator/(double a, const Tensor& b) { return div(scalar(a, b.dtype()), b); }

}  // namespace gradformer
