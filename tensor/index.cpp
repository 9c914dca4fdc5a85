#include "tensor/index.h"

#include "tensor/map.h"

namespace gradformer {
namespace {

// index must be int64 and every entry in [0, size) (negative entries count from the end, as in Python).
Tensor checked_indices(const Tensor& index, int64_t size, const char* op, int64_t dim) {
  if (index.dtype() != DType::Int64) throw DTypeError(message(op, ": index must be int64, got ", index.dtype()));
  Tensor idx = index.contiguous().clone();
  int64_t* p = idx.data<int64_t>();
  for (int64_t i = 0; i < idx.numel(); ++i) {
    if (p[i] < -size || p[i] >= size)
      throw IndexError(message(op, ": index ", p[i], " is out of range for dimension ", dim, " of size ", size));
    if (p[i] < 0) p[i] += size;
  }
  return idx;
}

// index_select's output viewed as [outer, index.numel(), inner] slices of t viewed as [outer, size, inner].
Shape index_select_shape(const Tensor& t, int d, const Tensor& index) {
  Shape out;
  for (int i = 0; i < d; ++i) out.push_back(t.shape()[i]);
  for (int64_t s : index.shape()) out.push_back(s);
  for (int i = d + 1; i < t.dim(); ++i) out.push_back(t.shape()[i]);
  return out;
}

}  // namespace

Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index) {
  const int d = normalize_dim(dim, t.dim(), "index_select");
  const Tensor idx = checked_indices(index, t.shape()[d], "index_select", dim);
  const int64_t* ip = idx.data<int64_t>();
  Tensor out = Tensor::empty(index_select_shape(t, d, index), t.dtype());
  // Copy slice by slice: out[o, j, :] = t[o, idx[j], :].
  const int64_t n = idx.numel();
  const Tensor src = t.contiguous();
  int64_t outer = 1, slice = 1;
  for (int i = 0; i < d; ++i) outer *= t.shape()[i];
  for (int i = d + 1; i < t.dim(); ++i) slice *= t.shape()[i];
  const int64_t size = t.shape()[d];
  dispatch_any(t.dtype(), [&]<class T>() {
    const T* ps = src.data<T>();
    T* po = out.data<T>();
    parallel_for(0, outer * n, grain_for(slice), [&](int64_t lo, int64_t hi) {
      for (int64_t k = lo; k < hi; ++k) {
        const int64_t o = k / n, j = k % n;
        std::copy_n(ps + (o * size + ip[j]) * slice, slice, po + k * slice);
      }
    });
  });
  return out;
}

void index_add_(Tensor& dst, int64_t dim, const Tensor& index, const Tensor& src) {
  const int d = normalize_dim(dim, dst.dim(), "index_add_");
  const Tensor idx = checked_indices(index, dst.shape()[d], "index_add_", dim);
  if (src.shape() != index_select_shape(dst, d, index))
    throw ShapeError(
        message("index_add_: src has shape ", src.shape(), ", expected ", index_select_shape(dst, d, index)));
  if (src.dtype() != dst.dtype())
    throw DTypeError(message("index_add_: dtypes differ: ", dst.dtype(), " and ", src.dtype()));
  if (!dst.is_contiguous()) throw ValueError("index_add_: the destination must be contiguous");
  const int64_t* ip = idx.data<int64_t>();
  const int64_t n = idx.numel(), size = dst.shape()[d];
  int64_t outer = 1, slice = 1;
  for (int i = 0; i < d; ++i) outer *= dst.shape()[i];
  for (int i = d + 1; i < dst.dim(); ++i) slice *= dst.shape()[i];
  const Tensor s = src.contiguous();
  dispatch_numeric(dst.dtype(), "index_add_", [&]<class T>() {
    const T* ps = s.data<T>();
    T* pd = dst.data<T>();
    // Serial over the index so that repeated rows accumulate in a fixed order; parallel over outer
    // (each outer item adds n rows of slice elements).
    parallel_for(0, outer, grain_for(n * slice), [&](int64_t lo, int64_t hi) {
      for (int64_t o = lo; o < hi; ++o)
        for (int64_t j = 0; j < n; ++j) {
          T* row = pd + (o * size + ip[j]) * slice;
          const T* from = ps + (o * n + j) * slice;
          for (int64_t i = 0; i < slice; ++i) row[i] += from[i];
        }
    });
  });
}

// Shared checks of gather and scatter_add_: index has t's rank and fits inside t except along dim.
static void check_gather_shapes(const Tensor& t, int d, const Tensor& index, const char* op) {
  if (index.dim() != t.dim())
    throw ShapeError(message(op, ": index has rank ", index.dim(), " but the tensor has rank ", t.dim(), " (shapes ",
                             index.shape(), " and ", t.shape(), ")"));
  for (int i = 0; i < t.dim(); ++i)
    if (i != d && index.shape()[i] > t.shape()[i])
      throw ShapeError(
          message(op, ": index shape ", index.shape(), " exceeds tensor shape ", t.shape(), " in dimension ", i));
}

Tensor gather(const Tensor& t, int64_t dim, const Tensor& index) {
  const int d = normalize_dim(dim, t.dim(), "gather");
  check_gather_shapes(t, d, index, "gather");
  const Tensor idx = checked_indices(index, t.shape()[d], "gather", dim);
  // Walk index and out together; t is addressed through its strides, with dim d's stride zeroed
  // (the index supplies that coordinate).
  Shape t_strides = t.strides();
  t_strides[d] = 0;
  const int64_t step = t.strides()[d];
  return dispatch_any(t.dtype(), [&]<class T>() {
    Tensor out = Tensor::empty(index.shape(), t.dtype());
    T* po = out.data<T>();
    const T* pt = t.data<T>();
    const int64_t* pi = idx.data<int64_t>();
    for_each_row<3>(index.shape(), {out.strides(), idx.strides(), t_strides},
                    [&](const auto& off, const auto& st, int64_t n) {
                      for (int64_t i = 0; i < n; ++i)
                        po[off[0] + i * st[0]] = pt[off[2] + i * st[2] + pi[off[1] + i * st[1]] * step];
                    });
    return out;
  });
}

void scatter_add_(Tensor& dst, int64_t dim, const Tensor& index, const Tensor& src) {
  const int d = normalize_dim(dim, dst.dim(), "scatter_add_");
  check_gather_shapes(dst, d, index, "scatter_add_");
  if (src.shape() != index.shape())
    throw ShapeError(message("scatter_add_: src has shape ", src.shape(), " but index has shape ", index.shape()));
  if (src.dtype() != dst.dtype())
    throw DTypeError(message("scatter_add_: dtypes differ: ", dst.dtype(), " and ", src.dtype()));
  const Tensor idx = checked_indices(index, dst.shape()[d], "scatter_add_", dim);
  Shape d_strides = dst.strides();
  d_strides[d] = 0;
  const int64_t step = dst.strides()[d];
  dispatch_numeric(dst.dtype(), "scatter_add_", [&]<class T>() {
    T* pd = dst.data<T>();
    const T* ps = src.data<T>();
    const int64_t* pi = idx.data<int64_t>();
    // Serial (grain = everything): two index entries may hit the same destination element.
    for_each_row<3>(
        index.shape(), {src.strides(), idx.strides(), d_strides},
        [&](const auto& off, const auto& st, int64_t n) {
          for (int64_t i = 0; i < n; ++i)
            pd[off[2] + i * st[2] + pi[off[1] + i * st[1]] * step] += ps[off[0] + i * st[0]];
        },
        index.numel() + 1);
  });
}

Tensor concat(const std::vector<Tensor>& tensors, int64_t dim) {
  if (tensors.empty()) throw ValueError("concat: no tensors given");
  const Tensor& first = tensors[0];
  const int d = normalize_dim(dim, first.dim(), "concat");
  Shape shape = first.shape();
  shape[d] = 0;
  for (size_t k = 0; k < tensors.size(); ++k) {
    const Tensor& t = tensors[k];
    if (t.dtype() != first.dtype())
      throw DTypeError(message("concat: tensor ", k, " is ", t.dtype(), ", tensor 0 is ", first.dtype()));
    bool fits = t.dim() == first.dim();
    for (int i = 0; fits && i < t.dim(); ++i) fits = i == d || t.shape()[i] == first.shape()[i];
    if (!fits)
      throw ShapeError(message("concat: tensor ", k, " has shape ", t.shape(), ", which does not match tensor 0's ",
                               first.shape(), " outside dimension ", dim));
    shape[d] += t.shape()[d];
  }
  Tensor out = Tensor::empty(shape, first.dtype());
  int64_t at = 0;
  for (const Tensor& t : tensors) {
    out.narrow(d, at, t.shape()[d]).copy_(t);
    at += t.shape()[d];
  }
  return out;
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  if (tensors.empty()) throw ValueError("stack: no tensors given");
  const int d = normalize_dim(dim, tensors[0].dim() + 1, "stack");
  std::vector<Tensor> expanded;
  for (size_t k = 0; k < tensors.size(); ++k) {
    if (tensors[k].shape() != tensors[0].shape())
      throw ShapeError(
          message("stack: tensor ", k, " has shape ", tensors[k].shape(), ", tensor 0 has ", tensors[0].shape()));
    expanded.push_back(tensors[k].unsqueeze(d));
  }
  return concat(expanded, d);
}

}  // namespace gradformer
