#include "autograd/arithmetic.h"

#include "autograd/node.h"
#include "tensor/elementwise.h"

namespace gradformer {

// d(a+b)/da = 1, d(a+b)/db = 1: the gradient passes through unchanged to both.
Variable add(const Variable& a, const Variable& b) {
  return record("add", gradformer::add(a.value(), b.value()), {a, b}, Reads::None, [](const Tensor& g, Grads& dx) {
    if (dx.wanted(0)) dx[0] = g;
    if (dx.wanted(1)) dx[1] = g;
  });
}

// d(a-b)/da = 1, d(a-b)/db = -1
Variable sub(const Variable& a, const Variable& b) {
  return record("sub", gradformer::sub(a.value(), b.value()), {a, b}, Reads::None, [](const Tensor& g, Grads& dx) {
    if (dx.wanted(0)) dx[0] = g;
    if (dx.wanted(1)) dx[1] = gradformer::neg(g);
  });
}

// d(a*b)/da = b, d(a*b)/db = a
Variable mul(const Variable& a, const Variable& b) {
  return record("mul", gradformer::mul(a.value(), b.value()), {a, b}, Reads::Other, [](const Tensor& g, Grads& dx) {
    if (dx.wanted(0)) dx[0] = gradformer::mul(g, dx.input(1));
    if (dx.wanted(1)) dx[1] = gradformer::mul(g, dx.input(0));
  });
}

// d(a/b)/da = 1/b, d(a/b)/db = -a/b^2
Variable div(const Variable& a, const Variable& b) {
  return record("div", gradformer::div(a.value(), b.value()), {a, b}, [](const Tensor& g, Grads& dx) {
    const Tensor g_over_b = gradformer::div(g, dx.input(1));
    if (dx.wanted(0)) dx[0] = g_over_b;
    if (dx.wanted(1)) dx[1] = gradformer::neg(gradformer::div(gradformer::mul(g_over_b, dx.input(0)), dx.input(1)));
  });
}

// d(-a)/da = -1
Variable neg(const Variable& a) {
  return record("neg", gradformer::neg(a.value()), {a}, Reads::None,
                [](const Tensor& g, Grads& dx) { dx[0] = gradformer::neg(g); });
}

static Variable constant(double value, const Variable& like) { return Variable(scalar(value, like.dtype())); }

Variable operator+(const Variable& a, double b) { return add(a, constant(b, a)); }
Variable operator-(const Variable& a, double b) { return sub(a, constant(b, a)); }
Variable operator*(const Variable& a, double b) { return mul(a, constant(b, a)); }
Variable operator/(const Variable& a, double b) { return div(a, constant(b, a)); }
Variable operator+(double a, const Variable& b) { return add(constant(a, b), b); }
Variable operator-(double a, const Variable& b) { return sub(constant(a, b), b); }
Variable operator*(double a, const Variable& b) { return mul(constant(a, b), b); }
Variable operator/(double a, const Variable& b) { return div(constant(a, b), b); }

}  // namespace gradformer
