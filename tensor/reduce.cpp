#include "tensor/reduce.h"

#include <cmath>
#include <limits>

#include "tensor/kernels/parallel.h"

namespace gradformer {
namespace {

template <class T>
using Accumulator = std::conditional_t<std::is_floating_point_v<T>, double, T>;

// The input split in two: the kept dimensions (one output element per index) and the reduced ones.
struct Plan {
  Shape out_shape;                       // with or without the size-1 reduced axes, per keepdim
  Shape kept_shape, kept_strides;        // input dims that survive (reduced ones set to size 1)
  Shape reduced_shape, reduced_strides;  // input dims summed over
  int64_t reduced_numel = 1;
};

Plan make_plan(const Tensor& t, const Axes& axes, bool keepdim, const char* op) {
  std::vector<bool> reduce(static_cast<size_t>(t.dim()), axes.empty());
  for (int64_t a : axes) {
    const int d = normalize_dim(a, t.dim(), op);
    if (reduce[static_cast<size_t>(d)]) throw IndexError(message(op, ": axis ", a, " appears twice"));
    reduce[static_cast<size_t>(d)] = true;
  }
  Plan p;
  for (int d = 0; d < t.dim(); ++d) {
    if (reduce[static_cast<size_t>(d)]) {
      p.reduced_shape.push_back(t.shape()[d]);
      p.reduced_strides.push_back(t.strides()[d]);
      p.kept_shape.push_back(1);
      p.kept_strides.push_back(0);
      if (keepdim) p.out_shape.push_back(1);
    } else {
      p.kept_shape.push_back(t.shape()[d]);
      p.kept_strides.push_back(t.strides()[d]);
      p.out_shape.push_back(t.shape()[d]);
    }
  }
  p.reduced_numel = p.reduced_shape.numel();
  return p;
}

// Visits every reduced element under one output position, in row-major order.
template <class T>
struct ReducedElements {
  const T* base;
  const Plan* plan;

  template <class F>
  void for_each(F&& f) const {
    const Shape& dims = plan->reduced_shape;
    const Shape& strides = plan->reduced_strides;
    const int r = dims.rank();
    if (plan->reduced_numel == 0) return;
    if (r == 0) {
      f(*base);
      return;
    }
    std::array<int64_t, kMaxRank> index{};
    const int64_t n = dims[r - 1], s = strides[r - 1];
    for (const T* row = base;;) {
      if (s == 1)
        for (int64_t i = 0; i < n; ++i) f(row[i]);
      else
        for (int64_t i = 0; i < n; ++i) f(row[i * s]);
      int d = r - 2;  // odometer over the outer reduced dims
      for (; d >= 0; --d) {
        row += strides[d];
        if (++index[static_cast<size_t>(d)] < dims[d]) break;
        row -= dims[d] * strides[d];
        index[static_cast<size_t>(d)] = 0;
      }
      if (d < 0) return;
    }
  }
};

// out[k] = reduce_one(ReducedElements at output k), one output per task, in parallel.
template <class Out, class T, class F>
Tensor reduce(const Tensor& t, const Plan& plan, F reduce_one) {
  Tensor out = Tensor::empty(plan.out_shape, dtype_of<Out>);
  Out* po = out.data<Out>();
  const T* pt = t.data<T>();
  const Shape out_strides = contiguous_strides(plan.kept_shape);
  const int64_t outputs = plan.kept_shape.numel();
  parallel_for(0, outputs, grain_for(plan.reduced_numel), [&](int64_t lo, int64_t hi) {
    for (int64_t k = lo; k < hi; ++k) {
      int64_t offset = 0;
      for (int d = 0; d < plan.kept_shape.rank(); ++d)
        offset += (k / out_strides[d]) % plan.kept_shape[d] * plan.kept_strides[d];
      po[k] = reduce_one(ReducedElements<T>{pt + offset, &plan});
    }
  });
  return out;
}

void check_not_empty(const Plan& plan, const Tensor& t, const char* op) {
  if (plan.reduced_numel == 0)
    throw ShapeError(message(op, ": cannot reduce over zero elements (input shape ", t.shape(), ")"));
}

}  // namespace

// Sum over the leading `reduced` rows of a contiguous [R, K] view: out[k] = sum_r x[r, k], added
// row by row so the inner loop runs along contiguous memory. Each output still adds its R terms
// in order r = 0, 1, ..., so the result is bit for bit the generic path's.   x: [R, K] -> out: [K]
template <class T>
static void sum_leading_rows(const T* x, int64_t rows, int64_t cols, T* out) {
  // At least 64 columns per task, so the inner loop along a row stays long enough to vectorise.
  parallel_for(0, cols, std::max<int64_t>(64, grain_for(rows)), [&](int64_t lo, int64_t hi) {
    std::vector<Accumulator<T>> acc(static_cast<size_t>(hi - lo), 0);
    for (int64_t r = 0; r < rows; ++r) {
      const T* row = x + r * cols + lo;
      for (int64_t k = 0; k < hi - lo; ++k) acc[static_cast<size_t>(k)] += row[k];
    }
    for (int64_t k = lo; k < hi; ++k) out[k] = static_cast<T>(acc[static_cast<size_t>(k - lo)]);
  });
}

Tensor sum(const Tensor& t, const Axes& axes, bool keepdim) {
  const Plan plan = make_plan(t, axes, keepdim, "sum");
  // The gradient of a broadcast bias: a contiguous tensor summed over its first axes only.
  std::vector<bool> reduced(static_cast<size_t>(t.dim()), axes.empty());
  for (int64_t a : axes) reduced[static_cast<size_t>(normalize_dim(a, t.dim(), "sum"))] = true;
  const int r = plan.reduced_shape.rank();
  bool leading = t.is_contiguous() && r > 0 && r < t.dim();
  for (int d = 0; leading && d < t.dim(); ++d) leading = reduced[static_cast<size_t>(d)] == (d < r);
  if (leading) {
    return dispatch_numeric(t.dtype(), "sum", [&]<class T>() {
      Tensor out = Tensor::empty(plan.out_shape, t.dtype());
      const int64_t rows = plan.reduced_numel;
      sum_leading_rows(t.data<T>(), rows, t.numel() / std::max<int64_t>(rows, 1), out.data<T>());
      return out;
    });
  }
  return dispatch_numeric(t.dtype(), "sum", [&]<class T>() {
    return reduce<T, T>(t, plan, [](const ReducedElements<T>& xs) {
      Accumulator<T> acc = 0;
      xs.for_each([&](T x) { acc += x; });
      return static_cast<T>(acc);
    });
  });
}

Tensor mean(const Tensor& t, const Axes& axes, bool keepdim) {
  const Plan plan = make_plan(t, axes, keepdim, "mean");
  return dispatch_floating(t.dtype(), "mean", [&]<class T>() {
    const double n = static_cast<double>(plan.reduced_numel);
    return reduce<T, T>(t, plan, [n](const ReducedElements<T>& xs) {
      double acc = 0;
      xs.for_each([&](T x) { acc += x; });
      return static_cast<T>(acc / n);  // 0/0 = NaN for an empty reduction, as in PyTorch
    });
  });
}

template <bool Largest>
static Tensor extremum(const Tensor& t, const Axes& axes, bool keepdim, const char* op) {
  const Plan plan = make_plan(t, axes, keepdim, op);
  check_not_empty(plan, t, op);
  return dispatch_numeric(t.dtype(), op, [&]<class T>() {
    return reduce<T, T>(t, plan, [](const ReducedElements<T>& xs) {
      T best = Largest ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
      bool nan = false;
      xs.for_each([&](T x) {
        if (x != x) nan = true;
        if (Largest ? x > best : x < best) best = x;
      });
      return nan ? std::numeric_limits<T>::quiet_NaN() : best;
    });
  });
}
Tensor max(const Tensor& t, const Axes& axes, bool keepdim) { return extremum<true>(t, axes, keepdim, "max"); }
Tensor min(const Tensor& t, const Axes& axes, bool keepdim) { return extremum<false>(t, axes, keepdim, "min"); }

Tensor argmax(const Tensor& t, int64_t dim, bool keepdim) {
  const Plan plan = make_plan(t, {dim}, keepdim, "argmax");
  check_not_empty(plan, t, "argmax");
  return dispatch_numeric(t.dtype(), "argmax", [&]<class T>() {
    return reduce<int64_t, T>(t, plan, [](const ReducedElements<T>& xs) {
      int64_t i = 0, best_i = 0;
      T best = std::numeric_limits<T>::lowest();
      bool nan = false;
      xs.for_each([&](T x) {
        if (!nan && (x > best || x != x)) {  // the first NaN counts as the largest, as in PyTorch
          best = x;
          best_i = i;
          nan = x != x;
        }
        ++i;
      });
      return best_i;
    });
  });
}

Tensor var(const Tensor& t, const Axes& axes, bool keepdim, int64_t correction) {
  const Plan plan = make_plan(t, axes, keepdim, "var");
  if (correction < 0) throw ValueError(message("var: correction must be >= 0, got ", correction));
  return dispatch_floating(t.dtype(), "var", [&]<class T>() {
    const double n = static_cast<double>(plan.reduced_numel);
    const double denominator = std::max(0.0, n - static_cast<double>(correction));
    return reduce<T, T>(t, plan, [=](const ReducedElements<T>& xs) {
      double total = 0, squares = 0;
      xs.for_each([&](T x) { total += x; });
      const double mean = total / n;
      xs.for_each([&](T x) { squares += (x - mean) * (x - mean); });
      return static_cast<T>(squares / denominator);
    });
  });
}

Tensor logsumexp(const Tensor& t, const Axes& axes, bool keepdim) {
  const Plan plan = make_plan(t, axes, keepdim, "logsumexp");
  return dispatch_floating(t.dtype(), "logsumexp", [&]<class T>() {
    return reduce<T, T>(t, plan, [](const ReducedElements<T>& xs) {
      double m = -std::numeric_limits<double>::infinity();
      xs.for_each([&](T x) { m = (x > m || x != x) ? x : m; });
      if (std::isinf(m)) return static_cast<T>(m);  // all -inf (or some +inf): avoid inf - inf = NaN
      double s = 0;
      xs.for_each([&](T x) { s += std::exp(x - m); });
      return static_cast<T>(m + std::log(s));
    });
  });
}

Tensor sum_to(const Tensor& t, const Shape& shape) {
  if (!broadcasts_to(shape, t.shape()))
    throw ShapeError(message("sum_to: shape ", shape, " does not broadcast to ", t.shape()));
  if (shape == t.shape()) return t;
  Axes axes;
  const int lead = t.dim() - shape.rank();
  for (int d = 0; d < t.dim(); ++d)
    if (d < lead || (shape[d - lead] == 1 && t.shape()[d] != 1)) axes.push_back(d);
  if (axes.empty()) return t.reshape(shape);
  return sum(t, axes, true).reshape(shape);
}

}  // namespace gradformer
