#include "tensor/elementwise.h"

#include <cmath>

#include "tensor/kernels/exp_kernel.h"
#include "tensor/kernels/parallel.h"
#include "tensor/map.h"

namespace gradformer {
namespace {

void check_same_dtype(const char* op, const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype()) throw DTypeError(message(op, ": dtypes differ: ", a.dtype(), " and ", b.dtype()));
}

template <class F>
Tensor numeric_binary(const char* op, const Tensor& a, const Tensor& b, F fn) {
  check_same_dtype(op, a, b);
  return dispatch_numeric(a.dtype(), op,
                          [&]<class T>() { return map<T, T, T>(op, a, b, [&](T x, T y) -> T { return fn(x, y); }); });
}

template <class F>
Tensor floating_unary(const char* op, const Tensor& a, F fn) {
  return dispatch_floating(a.dtype(), op, [&]<class T>() { return map<T, T>(a, [&](T x) -> T { return fn(x); }); });
}

template <class F>
Tensor compare(const char* op, const Tensor& a, const Tensor& b, F fn) {
  check_same_dtype(op, a, b);
  return dispatch_any(a.dtype(),
                      [&]<class T>() { return map<bool, T, T>(op, a, b, [&](T x, T y) { return fn(x, y); }); });
}

void check_bool(const char* op, const Tensor& t, const char* what) {
  if (t.dtype() != DType::Bool) throw DTypeError(message(op, ": ", what, " must be bool, got ", t.dtype()));
}

}  // namespace

Tensor add(const Tensor& a, const Tensor& b) {
  return numeric_binary("add", a, b, [](auto x, auto y) { return x + y; });
}
Tensor sub(const Tensor& a, const Tensor& b) {
  return numeric_binary("sub", a, b, [](auto x, auto y) { return x - y; });
}
Tensor mul(const Tensor& a, const Tensor& b) {
  return numeric_binary("mul", a, b, [](auto x, auto y) { return x * y; });
}
Tensor div(const Tensor& a, const Tensor& b) {
  if (a.dtype() == DType::Int64)  // integer division by zero is undefined behaviour, not inf
    throw DTypeError("div: integer division is not supported; convert to a floating dtype with to()");
  return numeric_binary("div", a, b, [](auto x, auto y) { return x / y; });
}
Tensor maximum(const Tensor& a, const Tensor& b) {
  // NaN wins, as in PyTorch: a NaN must not vanish silently.
  return numeric_binary("maximum", a, b, [](auto x, auto y) { return (x > y || x != x) ? x : y; });
}
Tensor neg(const Tensor& a) {
  return dispatch_numeric(a.dtype(), "neg", [&]<class T>() { return map<T, T>(a, [](T x) { return -x; }); });
}
Tensor clamp(const Tensor& a, double lo, double hi) {
  if (lo > hi) throw ValueError(message("clamp: lower bound ", lo, " is above upper bound ", hi));
  return dispatch_numeric(a.dtype(), "clamp", [&]<class T>() {
    const T l = static_cast<T>(lo), h = static_cast<T>(hi);
    return map<T, T>(a, [=](T x) { return x < l ? l : (x > h ? h : x); });
  });
}

Tensor pow(const Tensor& a, const Tensor& b) {
  check_same_dtype("pow", a, b);
  return dispatch_floating(
      a.dtype(), "pow", [&]<class T>() { return map<T, T, T>("pow", a, b, [](T x, T y) { return std::pow(x, y); }); });
}
Tensor pow(const Tensor& a, double exponent) {
  return floating_unary("pow", a, [exponent](auto x) { return std::pow(x, static_cast<decltype(x)>(exponent)); });
}
Tensor exp(const Tensor& a) {
  if (a.dtype() != DType::Float32) return floating_unary("exp", a, [](auto x) { return std::exp(x); });
  // float32: the library's exp (tensor/kernels/exp_kernel.h), the one the softmax family takes
  const Tensor x = a.contiguous();
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  const float* px = x.data<float>();
  float* py = y.data<float>();
  parallel_for(0, x.numel(), grain_for(2),
               [&](int64_t lo, int64_t hi) { exp_shifted(px + lo, 0.0f, py + lo, hi - lo); });
  return y;
}
Tensor log(const Tensor& a) {
  return floating_unary("log", a, [](auto x) { return std::log(x); });
}
Tensor sqrt(const Tensor& a) {
  return floating_unary("sqrt", a, [](auto x) { return std::sqrt(x); });
}
Tensor rsqrt(const Tensor& a) {
  return floating_unary("rsqrt", a, [](auto x) { return 1 / std::sqrt(x); });
}
Tensor tanh(const Tensor& a) {
  return floating_unary("tanh", a, [](auto x) { return std::tanh(x); });
}
Tensor relu(const Tensor& a) {
  return floating_unary("relu", a, [](auto x) { return x > 0 ? x : decltype(x){0}; });
}
// GELU(x) = x * Phi(x) = x/2 * (1 + erf(x / sqrt(2)))   (Hendrycks & Gimpel, 2016)
Tensor gelu(const Tensor& a) {
  return floating_unary("gelu", a, [](auto x) {
    using T = decltype(x);
    return T(0.5) * x * (T(1) + std::erf(x * T(0.70710678118654752440)));
  });
}
// GELU's tanh approximation (Hendrycks & Gimpel, 2016, section 2), the one GPT-2 computes:
//   gelu_tanh(x) = x/2 * (1 + tanh(u)),  u = sqrt(2/pi) * (x + 0.044715 x^3)
// computed as x / (1 + exp(-2u)), the same function (1 + tanh u = 2 / (1 + exp(-2u))): one exp is
// a few times cheaper than a tanh, and for negative x there is no cancellation in 1 + tanh u.
// For u below -T's largest exponent, exp overflows to infinity and the result is x / inf = -0.
Tensor gelu_tanh(const Tensor& a) {
  return floating_unary("gelu_tanh", a, [](auto x) {
    using T = decltype(x);
    const T sqrt_2_over_pi = T(0.79788456080286535588);  // sqrt(2 / pi)
    const T u = sqrt_2_over_pi * (x + T(0.044715) * x * x * x);
    return x / (T(1) + std::exp(T(-2) * u));
  });
}

// SiLU, the sigmoid-weighted linear unit (Elfwing et al., 2017; "Swish" with beta 1 in Ramachandran
// et al., 2017): silu(x) = x sigmoid(x) = x / (1 + exp(-x)). For x below -T's largest exponent,
// exp(-x) is infinite and the result is x / inf = -0, the limit.
Tensor silu(const Tensor& a) {
  return floating_unary("silu", a, [](auto x) {
    using T = decltype(x);
    return x / (T(1) + std::exp(-x));
  });
}

Tensor eq(const Tensor& a, const Tensor& b) {
  return compare("eq", a, b, [](auto x, auto y) { return x == y; });
}
Tensor ne(const Tensor& a, const Tensor& b) {
  return compare("ne", a, b, [](auto x, auto y) { return x != y; });
}
Tensor lt(const Tensor& a, const Tensor& b) {
  return compare("lt", a, b, [](auto x, auto y) { return x < y; });
}
Tensor le(const Tensor& a, const Tensor& b) {
  return compare("le", a, b, [](auto x, auto y) { return x <= y; });
}
Tensor gt(const Tensor& a, const Tensor& b) {
  return compare("gt", a, b, [](auto x, auto y) { return x > y; });
}
Tensor ge(const Tensor& a, const Tensor& b) {
  return compare("ge", a, b, [](auto x, auto y) { return x >= y; });
}

Tensor logical_and(const Tensor& a, const Tensor& b) {
  check_bool("logical_and", a, "a");
  check_bool("logical_and", b, "b");
  return map<bool, bool, bool>("logical_and", a, b, [](bool x, bool y) { return x && y; });
}
Tensor logical_not(const Tensor& a) {
  check_bool("logical_not", a, "the input");
  return map<bool, bool>(a, [](bool x) { return !x; });
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  check_bool("where", cond, "the condition");
  check_same_dtype("where", a, b);
  return dispatch_any(a.dtype(), [&]<class T>() {
    return map<T, bool, T, T>("where", cond, a, b, [](bool c, T x, T y) { return c ? x : y; });
  });
}

Tensor masked_fill(const Tensor& a, const Tensor& mask, double value) {
  check_bool("masked_fill", mask, "the mask");
  if (!broadcasts_to(mask.shape(), a.shape()))
    throw ShapeError(message("masked_fill: mask of shape ", mask.shape(), " does not broadcast to ", a.shape()));
  return dispatch_any(a.dtype(), [&]<class T>() {
    const T v = static_cast<T>(value);
    return map<T, T, bool>("masked_fill", a, mask, [v](T x, bool m) { return m ? v : x; });
  });
}

}  // namespace gradformer
