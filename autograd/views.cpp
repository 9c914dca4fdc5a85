#include "autograd/views.h"

#include <numeric>

#include "autograd/node.h"
#include "tensor/index.h"
#include "tensor/reduce.h"

namespace gradformer {

// x: [a, b, ...] -> out: shape (same elements). The gradient is reshaped back.
Variable view(const Variable& x, const Shape& shape) {
  return record("view", x.value().view(shape), {x}, Reads::None,
                [](const Tensor& g, Grads& dx) { dx[0] = g.reshape(dx.input_shape(0)); });
}

Variable reshape(const Variable& x, const Shape& shape) {
  return record("reshape", x.value().reshape(shape), {x}, Reads::None,
                [](const Tensor& g, Grads& dx) { dx[0] = g.reshape(dx.input_shape(0)); });
}

// Swapping two axes is its own inverse.
Variable transpose(const Variable& x, int64_t dim0, int64_t dim1) {
  return record("transpose", x.value().transpose(dim0, dim1), {x}, Reads::None,
                [dim0, dim1](const Tensor& g, Grads& dx) { dx[0] = g.transpose(dim0, dim1); });
}

// out axis i is input axis order[i]; the inverse permutation puts them back.
Variable permute(const Variable& x, const std::vector<int64_t>& order) {
  Tensor out = x.value().permute(order);  // validates order
  std::vector<int64_t> inverse(order.size());
  for (size_t i = 0; i < order.size(); ++i)
    inverse[static_cast<size_t>(normalize_dim(order[i], x.dim(), "permute"))] = static_cast<int64_t>(i);
  return record("permute", out, {x}, Reads::None,
                [inverse = std::move(inverse)](const Tensor& g, Grads& dx) { dx[0] = g.permute(inverse); });
}

// The sliced-out elements did not reach the output: their gradient is zero.
Variable slice(const Variable& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  return record("slice", x.value().slice(dim, start, end, step), {x}, Reads::None, [=](const Tensor& g, Grads& dx) {
    Tensor full = zeros(dx.input_shape(0), g.dtype());
    full.slice(dim, start, end, step).copy_(g);
    dx[0] = full;
  });
}

// The gradient is g on the narrowed part and zero elsewhere; the engine adds it into that part alone.
Variable narrow(const Variable& x, int64_t dim, int64_t start, int64_t length) {
  Tensor out = x.value().narrow(dim, start, length);  // validates dim, start and length
  const int64_t d = normalize_dim(dim, x.dim(), "narrow");
  return record("narrow", out, {x}, Reads::None,
                [=](const Tensor& g, Grads& dx) { dx.set_part(0, d, start, length, g); });
}

// select is a narrow of length 1 with that axis dropped: the gradient goes into that one slice.
Variable select(const Variable& x, int64_t dim, int64_t index) {
  Tensor out = x.value().select(dim, index);  // validates dim and index
  const int64_t d = normalize_dim(dim, x.dim(), "select");
  const int64_t i = index < 0 ? index + x.value().size(d) : index;
  return record("select", out, {x}, Reads::None,
                [=](const Tensor& g, Grads& dx) { dx.set_part(0, d, i, 1, g.unsqueeze(d)); });
}

Variable squeeze(const Variable& x, int64_t dim) {
  return record("squeeze", x.value().squeeze(dim), {x}, Reads::None,
                [](const Tensor& g, Grads& dx) { dx[0] = g.reshape(dx.input_shape(0)); });
}

Variable unsqueeze(const Variable& x, int64_t dim) {
  return record("unsqueeze", x.value().unsqueeze(dim), {x}, Reads::None,
                [](const Tensor& g, Grads& dx) { dx[0] = g.reshape(dx.input_shape(0)); });
}

// Each input element was copied to every position along the expanded axes: sum them back.
Variable expand(const Variable& x, const Shape& shape) {
  return record("expand", x.value().expand(shape), {x}, Reads::None,
                [](const Tensor& g, Grads& dx) { dx[0] = sum_to(g, dx.input_shape(0)); });
}

Variable contiguous(const Variable& x) {
  if (x.value().is_contiguous()) return x;
  return record("contiguous", x.value().contiguous(), {x}, Reads::None, [](const Tensor& g, Grads& dx) { dx[0] = g; });
}

static std::vector<Tensor> values_of(const std::vector<Variable>& xs) {
  std::vector<Tensor> values;
  values.reserve(xs.size());
  for (const Variable& x : xs) values.push_back(x.value());
  return values;
}

// out = [x0 | x1 | ...] along dim: piece k's gradient is the band of g it occupies.
Variable concat(const std::vector<Variable>& xs, int64_t dim) {
  Tensor out = gradformer::concat(values_of(xs), dim);
  const int d = normalize_dim(dim, out.dim(), "concat");
  return record("concat", out, xs, Reads::None, [d](const Tensor& g, Grads& dx) {
    int64_t at = 0;
    for (size_t k = 0; k < dx.size(); ++k) {
      const int64_t length = dx.input_shape(k)[d];
      if (dx.wanted(k)) dx[k] = g.narrow(d, at, length);
      at += length;
    }
  });
}

// out[..., k, ...] = xk: piece k's gradient is g.select(dim, k).
Variable stack(const std::vector<Variable>& xs, int64_t dim) {
  Tensor out = gradformer::stack(values_of(xs), dim);
  const int d = normalize_dim(dim, out.dim(), "stack");
  return record("stack", out, xs, Reads::None, [d](const Tensor& g, Grads& dx) {
    for (size_t k = 0; k < dx.size(); ++k)
      if (dx.wanted(k)) dx[k] = g.select(d, static_cast<int64_t>(k));
  });
}

}  // namespace gradformer
