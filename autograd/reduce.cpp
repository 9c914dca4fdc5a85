#include "autograd/reduce.h"

#include "autograd/node.h"
#include "tensor/elementwise.h"

namespace gradformer {

namespace {

// x's shape with every reduced axis set to 1: the shape of a keepdim result, which broadcasts
// against x.   x: [B, T, C], axes {-1} -> [B, T, 1]
Shape kept_shape(const Shape& x, const Axes& axes) {
  Shape kept = x;
  if (axes.empty())
    for (int d = 0; d < kept.rank(); ++d) kept[d] = 1;
  for (int64_t a : axes) kept[normalize_dim(a, x.rank(), "reduce")] = 1;
  return kept;
}

// x's shape without the reduced axes: the shape of a result without keepdim.  [B, T, C], {-1} -> [B, T]
Shape dropped_shape(const Shape& x, const Axes& axes) {
  const Shape kept = kept_shape(x, axes);
  std::vector<bool> reduced(static_cast<size_t>(x.rank()), axes.empty());
  for (int64_t a : axes) reduced[static_cast<size_t>(normalize_dim(a, x.rank(), "reduce"))] = true;
  Shape out;
  for (int d = 0; d < x.rank(); ++d)
    if (!reduced[static_cast<size_t>(d)]) out.push_back(kept[d]);
  return out;
}

int64_t reduced_count(const Shape& x, const Axes& axes) {
  return x.numel() / std::max<int64_t>(1, kept_shape(x, axes).numel());
}

}  // namespace

// d(sum x)/dx_i = 1: every element gets the upstream gradient of its output (a stride-0 view, no copy).
Variable sum(const Variable& x, const Axes& axes, bool keepdim) {
  return record("sum", gradformer::sum(x.value(), axes, keepdim), {x}, Reads::None, [axes](const Tensor& g, Grads& dx) {
    const Shape& shape = dx.input_shape(0);
    dx[0] = g.reshape(kept_shape(shape, axes)).expand(shape);
  });
}

// d(mean x)/dx_i = 1/n
Variable mean(const Variable& x, const Axes& axes, bool keepdim) {
  return record("mean", gradformer::mean(x.value(), axes, keepdim), {x}, Reads::None,
                [axes](const Tensor& g, Grads& dx) {
                  const Shape& shape = dx.input_shape(0);
                  const double n = static_cast<double>(reduced_count(shape, axes));
                  dx[0] = (g.reshape(kept_shape(shape, axes)) / n).expand(shape);
                });
}

// d(max x)/dx_i = 1/k if x_i is one of the k maximal elements, else 0.
Variable max(const Variable& x, const Axes& axes, bool keepdim) {
  Tensor m = gradformer::max(x.value(), axes, true);
  const Tensor out = keepdim ? m : m.reshape(dropped_shape(x.shape(), axes));
  return record("max", out, {x}, [axes, m](const Tensor& g, Grads& dx) {
    const Tensor& xv = dx.input(0);
    const Tensor is_max = eq(xv, m).to(xv.dtype());
    const Tensor ties = gradformer::sum(is_max, axes, true);
    dx[0] = gradformer::mul(is_max, gradformer::div(g.reshape(m.shape()), ties));
  });
}

// var = sum((x - mu)^2) / (n - c)  =>  dvar/dx_i = 2 (x_i - mu) / (n - c)   (the mu terms sum to zero)
Variable var(const Variable& x, const Axes& axes, bool keepdim, int64_t correction) {
  return record("var", gradformer::var(x.value(), axes, keepdim, correction), {x},
                [axes, correction](const Tensor& g, Grads& dx) {
                  const Tensor& xv = dx.input(0);
                  const double n = static_cast<double>(reduced_count(xv.shape(), axes));
                  const Tensor centered = xv - gradformer::mean(xv, axes, true);
                  dx[0] = gradformer::mul(centered, g.reshape(kept_shape(xv.shape(), axes)) *
                                                        (2.0 / (n - static_cast<double>(correction))));
                });
}

// lse = log sum exp x  =>  dlse/dx_i = exp(x_i - lse) = softmax(x)_i
Variable logsumexp(const Variable& x, const Axes& axes, bool keepdim) {
  Tensor lse = gradformer::logsumexp(x.value(), axes, true);
  const Tensor out = keepdim ? lse : lse.reshape(dropped_shape(x.shape(), axes));
  return record("logsumexp", out, {x}, [lse](const Tensor& g, Grads& dx) {
    dx[0] = gradformer::mul(gradformer::exp(dx.input(0) - lse), g.reshape(lse.shape()));
  });
}

}  // namespace gradformer
