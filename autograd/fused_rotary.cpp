#include "autograd/arithmetic.h"
#include "autograd/fused.h"
#include "autograd/node.h"
#include "autograd/views.h"
#include "tensor/kernels/parallel.h"

namespace gradformer {
namespace {

void check_rotary(const char* op, const Variable& x, const Tensor& cos, const Tensor& sin, int64_t start) {
  if (x.dim() < 2 || x.size(-1) % 2 != 0)
    throw ShapeError(message(op, ": x must be [..., T, d_k] with d_k even, got ", x.shape()));
  const int64_t half = x.size(-1) / 2, T = x.size(-2);
  if (cos.dim() != 2 || cos.shape() != sin.shape() || cos.size(1) != half)
    throw ShapeError(
        message(op, ": cos and sin must be [positions, ", half, "], got ", cos.shape(), " and ", sin.shape()));
  if (cos.dtype() != x.dtype() || sin.dtype() != x.dtype())
    throw DTypeError(message(op, ": cos and sin must be ", x.dtype(), " as x, got ", cos.dtype()));
  if (start < 0 || start + T > cos.size(0))
    throw ValueError(message(op, ": positions ", start, " to ", start + T - 1, " are outside the table's ", cos.size(0),
                             " positions"));
}

// out[r, t, i] = x[i] c - x[i + h] s,  out[r, t, i + h] = x[i + h] c + x[i] s,  c, s = cos, sin[start + t, i]:
// each pair (x_i, x_{i+h}) turned by the angle of position start + t. sign = -1 turns it back (backward).
Tensor rotate(const Tensor& x, const Tensor& cos, const Tensor& sin, int64_t start, double sign) {
  const Tensor xc = x.contiguous(), c = cos.contiguous(), s = sin.contiguous();
  const int64_t dk = xc.size(-1), h = dk / 2, T = xc.size(-2), rows = xc.numel() / (T * dk);
  Tensor out = Tensor::empty(xc.shape(), xc.dtype());
  dispatch_floating(xc.dtype(), "rotary", [&]<class V>() {
    const V *px = xc.data<V>(), *pc = c.data<V>() + start * h, *ps = s.data<V>() + start * h;
    V* po = out.data<V>();
    const V sg = static_cast<V>(sign);
    parallel_for(0, rows * T, grain_for(3 * dk), [&](int64_t lo, int64_t hi) {
      for (int64_t row = lo; row < hi; ++row) {
        const int64_t t = row % T;
        const V *xr = px + row * dk, *cr = pc + t * h, *sr = ps + t * h;
        V* o = po + row * dk;
        for (int64_t i = 0; i < h; ++i) {
          const V si = sg * sr[i];
          o[i] = xr[i] * cr[i] - xr[i + h] * si;
          o[i + h] = xr[i + h] * cr[i] + xr[i] * si;
        }
      }
    });
  });
  return out;
}

}  // namespace

// The definition composed from differentiable ops: the halves x1 = x[..., :h], x2 = x[..., h:] and
//   out = concat(x1 cos - x2 sin, x2 cos + x1 sin)
Variable rotary_unfused(const Variable& x, const Tensor& cos, const Tensor& sin, int64_t start) {
  check_rotary("rotary_unfused", x, cos, sin, start);
  const int64_t h = x.size(-1) / 2, T = x.size(-2);
  const Variable c(cos.narrow(0, start, T)), s(sin.narrow(0, start, T));  // [T, h], constants
  const Variable x1 = narrow(x, -1, 0, h), x2 = narrow(x, -1, h, h);
  return concat({x1 * c - x2 * s, x2 * c + x1 * s}, -1);
}

// A rotation's inverse is its transpose, the rotation by minus the angle: dL/dx = rotate(g, -angle).
Variable rotary(const Variable& x, const Tensor& cos, const Tensor& sin, int64_t start) {
  check_rotary("rotary", x, cos, sin, start);
  return record("rotary", rotate(x.value(), cos, sin, start, 1.0), {x},
                [cos, sin, start](const Tensor& g, Grads& dx) { dx[0] = rotate(g, cos, sin, start, -1.0); });
}

}  // namespace gradformer
