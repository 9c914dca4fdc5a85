#include "autograd/pointwise.h"

#include <cmath>
#include <numbers>

#include "autograd/node.h"
#include "tensor/elementwise.h"
#include "tensor/map.h"
#include "tensor/random.h"

namespace gradformer {

// out[i] = fn(g[i], x[i]): the chain rule for an elementwise f, dL/dx = dL/dy * f'(x).
template <class F>
static Tensor chain(const char* op, const Tensor& g, const Tensor& x, F fn) {
  return dispatch_floating(
      x.dtype(), op, [&]<class T>() { return map<T, T, T>(op, g, x, [&](T gi, T xi) -> T { return fn(gi, xi); }); });
}

// d(e^x)/dx = e^x: the backward reuses the output rather than recomputing it.
Variable exp(const Variable& x) {
  Tensor y = gradformer::exp(x.value());
  return record("exp", y, {x}, [y](const Tensor& g, Grads& dx) { dx[0] = gradformer::mul(g, y); });
}

// d(log x)/dx = 1/x
Variable log(const Variable& x) {
  return record("log", gradformer::log(x.value()), {x},
                [](const Tensor& g, Grads& dx) { dx[0] = gradformer::div(g, dx.input(0)); });
}

// d(sqrt x)/dx = 1 / (2 sqrt x)
Variable sqrt(const Variable& x) {
  Tensor y = gradformer::sqrt(x.value());
  return record("sqrt", y, {x}, [y](const Tensor& g, Grads& dx) {
    dx[0] = chain("sqrt_backward", g, y, [](auto gi, auto yi) { return gi / (2 * yi); });
  });
}

// d(x^-1/2)/dx = -1/2 x^-3/2 = -1/2 y^3
Variable rsqrt(const Variable& x) {
  Tensor y = gradformer::rsqrt(x.value());
  return record("rsqrt", y, {x}, [y](const Tensor& g, Grads& dx) {
    dx[0] = chain("rsqrt_backward", g, y, [](auto gi, auto yi) { return gi * decltype(yi)(-0.5) * yi * yi * yi; });
  });
}

// d(x^p)/dx = p x^(p-1)
Variable pow(const Variable& x, double exponent) {
  return record("pow", gradformer::pow(x.value(), exponent), {x}, [exponent](const Tensor& g, Grads& dx) {
    dx[0] = chain("pow_backward", g, dx.input(0), [exponent](auto gi, auto xi) {
      using T = decltype(xi);
      return exponent == 0 ? T(0) : gi * static_cast<T>(exponent) * std::pow(xi, static_cast<T>(exponent - 1));
    });
  });
}

// d(x^y)/dx = y x^(y-1),  d(x^y)/dy = x^y log x
Variable pow(const Variable& x, const Variable& exponent) {
  Tensor y = gradformer::pow(x.value(), exponent.value());
  return record("pow", y, {x, exponent}, [y](const Tensor& g, Grads& dx) {
    const Tensor& base = dx.input(0);
    const Tensor& e = dx.input(1);
    if (dx.wanted(0)) dx[0] = gradformer::mul(gradformer::mul(g, e), gradformer::pow(base, e - 1.0));
    if (dx.wanted(1)) dx[1] = gradformer::mul(gradformer::mul(g, y), gradformer::log(base));
  });
}

// d(tanh x)/dx = 1 - tanh(x)^2
Variable tanh(const Variable& x) {
  Tensor y = gradformer::tanh(x.value());
  return record("tanh", y, {x}, [y](const Tensor& g, Grads& dx) {
    dx[0] = chain("tanh_backward", g, y, [](auto gi, auto yi) { return gi * (1 - yi * yi); });
  });
}

// d(relu x)/dx = 1 if x > 0 else 0 (0 at x = 0, as PyTorch)
Variable relu(const Variable& x) {
  return record("relu", gradformer::relu(x.value()), {x}, [](const Tensor& g, Grads& dx) {
    dx[0] = chain("relu_backward", g, dx.input(0), [](auto gi, auto xi) { return xi > 0 ? gi : decltype(gi)(0); });
  });
}

// gelu(x) = x Phi(x)  =>  gelu'(x) = Phi(x) + x phi(x),  phi(x) = exp(-x^2/2) / sqrt(2 pi)
Variable gelu(const Variable& x) {
  return record("gelu", gradformer::gelu(x.value()), {x}, [](const Tensor& g, Grads& dx) {
    dx[0] = chain("gelu_backward", g, dx.input(0), [](auto gi, auto xi) {
      using T = decltype(xi);
      const T cdf = T(0.5) * (1 + std::erf(xi * T(std::numbers::sqrt2 / 2)));
      const T pdf = std::exp(T(-0.5) * xi * xi) * T(0.5 * std::numbers::inv_sqrtpi * std::numbers::sqrt2);
      return gi * (cdf + xi * pdf);
    });
  });
}

// gelu_tanh(x) = x/2 (1 + tanh u),  u = sqrt(2/pi) (x + 0.044715 x^3)
//   =>  gelu_tanh'(x) = (1 + tanh u)/2 + x/2 (1 - tanh^2 u) sqrt(2/pi) (1 + 3 * 0.044715 x^2)
// With s = 1 / (1 + exp(-2u)), tanh u = 2s - 1, so (1 + tanh u)/2 = s and 1 - tanh^2 u = 4 s (1 - s):
//   gelu_tanh'(x) = s + 2 x s (1 - s) sqrt(2/pi) (1 + 3 * 0.044715 x^2)
// one exp per element, as the forward (tensor/elementwise.cpp) takes it, where std::tanh costs
// several times as much. exp(-2u) = inf for very negative u gives s = 0 and a slope of 0, as it should.
Variable gelu_tanh(const Variable& x) {
  return record("gelu_tanh", gradformer::gelu_tanh(x.value()), {x}, [](const Tensor& g, Grads& dx) {
    dx[0] = chain("gelu_tanh_backward", g, dx.input(0), [](auto gi, auto xi) {
      using T = decltype(xi);
      const T sqrt_2_over_pi = T(0.79788456080286535588), c = T(0.044715);
      const T s = T(1) / (T(1) + std::exp(T(-2) * sqrt_2_over_pi * (xi + c * xi * xi * xi)));
      return gi * (s + 2 * xi * s * (1 - s) * sqrt_2_over_pi * (1 + 3 * c * xi * xi));
    });
  });
}

// silu(x) = x s,  s = sigmoid(x) = 1 / (1 + exp(-x))
//   =>  silu'(x) = s + x s (1 - s) = s (1 + x (1 - s))
// exp(-x) = inf for very negative x gives s = 0 and a slope of 0, the limit.
Variable silu(const Variable& x) {
  return record("silu", gradformer::silu(x.value()), {x}, [](const Tensor& g, Grads& dx) {
    dx[0] = chain("silu_backward", g, dx.input(0), [](auto gi, auto xi) {
      using T = decltype(xi);
      const T s = T(1) / (T(1) + std::exp(-xi));
      return gi * s * (1 + xi * (1 - s));
    });
  });
}

// d/da where(c, a, b) = c, d/db = not c (broadcast gradients are summed back by the engine).
Variable where(const Tensor& cond, const Variable& a, const Variable& b) {
  return record("where", gradformer::where(cond, a.value(), b.value()), {a, b}, [cond](const Tensor& g, Grads& dx) {
    const Tensor zero = scalar(0.0, g.dtype());
    if (dx.wanted(0)) dx[0] = gradformer::where(cond, g, zero);
    if (dx.wanted(1)) dx[1] = gradformer::where(cond, zero, g);
  });
}

// Filled positions are constants: their gradient is zero.
Variable masked_fill(const Variable& x, const Tensor& mask, double value) {
  return record("masked_fill", gradformer::masked_fill(x.value(), mask, value), {x},
                [mask](const Tensor& g, Grads& dx) { dx[0] = gradformer::masked_fill(g, mask, 0.0); });
}

// y = x * mask / (1 - p)  =>  dL/dx = dL/dy * mask / (1 - p): the same factors both ways.
Variable dropout(const Variable& x, double p, Generator& gen, bool training) {
  if (!(p >= 0 && p <= 1)) throw ValueError(message("dropout: p must be in [0, 1], got ", p));
  if (!training || p == 0) return x;
  // The backward keeps which elements were kept, one byte each, and multiplies by their factors.
  Dropped dropped = apply_dropout(x.value(), p, gen);
  return record(
      "dropout", std::move(dropped.output), {x}, Reads::None,
      [kept = std::move(dropped.kept), p](const Tensor& g, Grads& dx) { dx[0] = times_dropout_factors(g, kept, p); });
}

}  // namespace gradformer
