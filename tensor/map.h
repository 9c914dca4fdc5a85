// map: the general mechanism behind every elementwise operation. It broadcasts its operands,
// allocates a contiguous result and applies a scalar function to each element, in parallel for
// large tensors. An elementwise op is then one line:
//
//   Tensor exp(const Tensor& t) {
//     return dispatch_floating(t.dtype(), "exp", [&]<class T>() {
//       return map<T, T>(t, [](T x) { return std::exp(x); });
//     });
//   }
#pragma once

#include "tensor/strided_loop.h"
#include "tensor/tensor.h"

namespace gradformer {

/// out[i] = fn(a[i]).  a: any shape, element type In -> out: same shape, element type Out.
template <class Out, class In, class F>
Tensor map(const Tensor& a, F fn) {
  const In* pa = a.data<In>();
  Tensor out = Tensor::empty(a.shape(), dtype_of<Out>);
  Out* po = out.data<Out>();
  for_each_row<2>(a.shape(), {out.strides(), a.strides()}, [&](const auto& off, const auto& st, int64_t n) {
    Out* o = po + off[0];
    const In* x = pa + off[1];
    if (st[1] == 1)
      for (int64_t i = 0; i < n; ++i) o[i] = fn(x[i]);
    else
      for (int64_t i = 0; i < n; ++i) o[i] = fn(x[i * st[1]]);
  });
  return out;
}

/// out[i] = fn(a[i], b[i]) with NumPy broadcasting; ShapeError naming `op` if the shapes don't broadcast.
template <class Out, class InA, class InB, class F>
Tensor map(const char* op, const Tensor& a, const Tensor& b, F fn) {
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), op);
  const InA* pa = a.data<InA>();
  const InB* pb = b.data<InB>();
  Tensor out = Tensor::empty(shape, dtype_of<Out>);
  Out* po = out.data<Out>();
  const Shape sa = broadcast_strides(a.shape(), a.strides(), shape);
  const Shape sb = broadcast_strides(b.shape(), b.strides(), shape);
  for_each_row<3>(shape, {out.strides(), sa, sb}, [&](const auto& off, const auto& st, int64_t n) {
    Out* o = po + off[0];
    const InA* x = pa + off[1];
    const InB* y = pb + off[2];
    if (st[1] == 1 && st[2] == 1)
      for (int64_t i = 0; i < n; ++i) o[i] = fn(x[i], y[i]);
    else
      for (int64_t i = 0; i < n; ++i) o[i] = fn(x[i * st[1]], y[i * st[2]]);
  });
  return out;
}

/// out[i] = fn(a[i], b[i], c[i]) with broadcasting over all three.
template <class Out, class InA, class InB, class InC, class F>
Tensor map(const char* op, const Tensor& a, const Tensor& b, const Tensor& c, F fn) {
  const Shape shape = broadcast_shapes(broadcast_shapes(a.shape(), b.shape(), op), c.shape(), op);
  const InA* pa = a.data<InA>();
  const InB* pb = b.data<InB>();
  const InC* pc = c.data<InC>();
  Tensor out = Tensor::empty(shape, dtype_of<Out>);
  Out* po = out.data<Out>();
  const Shape sa = broadcast_strides(a.shape(), a.strides(), shape);
  const Shape sb = broadcast_strides(b.shape(), b.strides(), shape);
  const Shape sc = broadcast_strides(c.shape(), c.strides(), shape);
  for_each_row<4>(shape, {out.strides(), sa, sb, sc}, [&](const auto& off, const auto& st, int64_t n) {
    Out* o = po + off[0];
    const InA* x = pa + off[1];
    const InB* y = pb + off[2];
    const InC* z = pc + off[3];
    for (int64_t i = 0; i < n; ++i) o[i] = fn(x[i * st[1]], y[i * st[2]], z[i * st[3]]);
  });
  return out;
}

namespace detail {
// The loop of assign and update: dst[i] = fn(src[i]), or fn(dst[i], src[i]) when ReadsDst.
template <bool ReadsDst, class T, class S, class F>
void write_elements(const char* op, const Tensor& dst, const Tensor& src, F& fn) {
  if (!broadcasts_to(src.shape(), dst.shape()))
    throw ShapeError(message(op, ": cannot broadcast ", src.shape(), " into the destination's shape ", dst.shape()));
  T* pd = dst.data<T>();
  const S* ps = src.data<S>();
  const Shape ss = broadcast_strides(src.shape(), src.strides(), dst.shape());
  auto value = [&](T* d, const S* s) {
    if constexpr (ReadsDst)
      return fn(*d, *s);
    else
      return fn(*s);
  };
  for_each_row<2>(dst.shape(), {dst.strides(), ss}, [&](const auto& off, const auto& st, int64_t n) {
    T* d = pd + off[0];
    const S* s = ps + off[1];
    if (st[0] == 1 && st[1] == 1)
      for (int64_t i = 0; i < n; ++i) d[i] = value(d + i, s + i);
    else
      for (int64_t i = 0; i < n; ++i) d[i * st[0]] = value(d + i * st[0], s + i * st[1]);
  });
}
}  // namespace detail

/// In place, without reading dst (it may be uninitialised): dst[i] = fn(src[i]), src broadcast to
/// dst's shape; dst may be any view. copy_ and fill_ are this.
template <class T, class S, class F>
void assign(const char* op, const Tensor& dst, const Tensor& src, F fn) {
  detail::write_elements<false, T, S>(op, dst, src, fn);
}

/// In place: dst[i] = fn(dst[i], src[i]), src broadcast to dst's shape; dst may be any view.
template <class T, class S, class F>
void update(const char* op, const Tensor& dst, const Tensor& src, F fn) {
  detail::write_elements<true, T, S>(op, dst, src, fn);
}

}  // namespace gradformer
