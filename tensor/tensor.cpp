#include "tensor/tensor.h"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "tensor/map.h"

namespace gradformer {

// ---- construction ---------------------------------------------------------------------------

Tensor::Tensor(std::shared_ptr<Storage> storage, Shape shape, Shape strides, int64_t offset, DType dtype)
    : storage_(std::move(storage)), shape_(shape), strides_(strides), offset_(offset), dtype_(dtype) {}

static void check_sizes(const Shape& shape, const char* op) {
  for (int64_t d : shape)
    if (d < 0) throw ValueError(message(op, ": negative size ", d, " in shape ", shape));
}

Tensor Tensor::allocated(const Shape& shape, DType dtype, bool zeroed, const char* op) {
  check_sizes(shape, op);
  int64_t bytes = 0;
  if (__builtin_mul_overflow(shape.numel(), static_cast<int64_t>(itemsize(dtype)), &bytes))
    throw ShapeError(
        message(op, ": shape ", shape, " of ", name(dtype), " needs more bytes than a 64-bit count holds"));
  std::shared_ptr<Storage> storage;
  try {
    storage = Storage::allocate(static_cast<size_t>(bytes), zeroed);
  } catch (const std::bad_alloc&) {
    constexpr double kMiB = 1 << 20;
    throw MemoryError(message(op, ": cannot allocate ", bytes, " bytes for a ", name(dtype), " tensor of shape ", shape,
                              " (tensors hold ", std::lround(static_cast<double>(Storage::bytes_held()) / kMiB),
                              " MiB already, of this machine's ",
                              std::lround(static_cast<double>(Storage::memory()) / kMiB), " MiB)"));
  }
  return Tensor(std::move(storage), shape, contiguous_strides(shape), 0, dtype);
}

Tensor Tensor::empty(const Shape& shape, DType dtype) { return allocated(shape, dtype, /*zeroed=*/false, "empty"); }

Tensor Tensor::from_storage(std::shared_ptr<Storage> storage, const Shape& shape, DType dtype) {
  if (!storage) throw ValueError("from_storage: the storage is null");
  check_sizes(shape, "from_storage");
  const auto size = static_cast<size_t>(itemsize(dtype));
  int64_t bytes = 0;
  if (__builtin_mul_overflow(shape.numel(), static_cast<int64_t>(size), &bytes) ||
      static_cast<uint64_t>(bytes) > storage->bytes())
    throw ValueError(message("from_storage: a ", name(dtype), " tensor of shape ", shape, " needs more than the ",
                             storage->bytes(), " bytes of the storage"));
  if (reinterpret_cast<uintptr_t>(storage->data()) % size != 0)
    throw ValueError(
        message("from_storage: the storage's data is not aligned to ", name(dtype), "'s ", size, " bytes"));
  return Tensor(std::move(storage), shape, contiguous_strides(shape), 0, dtype);
}

Tensor Tensor::with_layout(Shape shape, Shape strides, int64_t offset) const {
  return Tensor(storage_, shape, strides, offset, dtype_);
}

void Tensor::undefined(const char* op) {
  throw ValueError(message(op, ": the tensor is undefined (default-constructed)"));
}

void Tensor::wrong_data_request(DType asked) const {
  check_defined("data");
  throw DTypeError(message("data: tensor is ", dtype_, ", asked for ", asked));
}

int64_t Tensor::size(int64_t dim) const { return shape_[normalize_dim(dim, this->dim(), "size")]; }

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (int d = dim() - 1; d >= 0; --d) {
    if (shape_[d] != 1 && strides_[d] != expected) return false;
    expected *= shape_[d];
  }
  return true;
}

// ---- element access -------------------------------------------------------------------------

template <class T>
std::vector<T> Tensor::to_vector() const {
  check_defined("to_vector");
  const Tensor c = to(dtype_of<T>).contiguous();
  const T* p = c.data<T>();
  return std::vector<T>(p, p + c.numel());
}
template std::vector<float> Tensor::to_vector<float>() const;
template std::vector<double> Tensor::to_vector<double>() const;
template std::vector<int64_t> Tensor::to_vector<int64_t>() const;
template std::vector<bool> Tensor::to_vector<bool>() const;

double Tensor::item() const {
  check_defined("item");
  if (numel() != 1) throw ShapeError(message("item: expected one element, the tensor has shape ", shape_));
  return dispatch_any(dtype_, [&]<class T>() { return static_cast<double>(*data<T>()); });
}

double Tensor::at(std::initializer_list<int64_t> index) const {
  check_defined("at");
  if (static_cast<int>(index.size()) != dim())
    throw IndexError(message("at: ", index.size(), " indices for a tensor of shape ", shape_));
  int64_t offset = 0, d = 0;
  for (int64_t i : index) {
    if (i < -shape_[d] || i >= shape_[d])
      throw IndexError(message("at: index ", i, " is out of range for dimension ", d, " of size ", shape_[d]));
    offset += (i < 0 ? i + shape_[d] : i) * strides_[d];
    ++d;
  }
  return dispatch_any(dtype_, [&]<class T>() { return static_cast<double>(data<T>()[offset]); });
}

// ---- views ----------------------------------------------------------------------------------

// Fills in one -1 and checks that the element count is unchanged.
static Shape infer_shape(const Shape& requested, int64_t numel, const char* op) {
  Shape shape = requested;
  int infer = -1;
  int64_t known = 1;
  for (int d = 0; d < shape.rank(); ++d) {
    if (shape[d] == -1) {
      if (infer >= 0) throw ShapeError(message(op, ": only one dimension can be -1, got ", requested));
      infer = d;
    } else if (shape[d] < 0) {
      throw ValueError(message(op, ": negative size ", shape[d], " in shape ", requested));
    } else if (__builtin_mul_overflow(known, shape[d], &known)) {
      throw ShapeError(message(op, ": shape ", requested, " has more elements than a 64-bit count holds"));
    }
  }
  if (infer >= 0 && known != 0 && numel % known == 0) shape[infer] = numel / known;
  if ((infer >= 0 && (known == 0 || shape[infer] == -1)) || shape.numel() != numel)
    throw ShapeError(message(op, ": shape ", requested, " is invalid for ", numel, " elements"));
  return shape;
}

// Strides for viewing (shape, strides) as new_shape without copying, if they exist. Old dimensions
// are taken in chunks that are contiguous in memory (each dimension steps exactly over the next);
// within a chunk the elements are evenly spaced, so the chunk can be re-split into any new
// dimensions with the same element count. Size-1 dimensions fit anywhere.
static bool view_strides(const Shape& shape, const Shape& strides, const Shape& new_shape, Shape& out) {
  out = new_shape;
  int new_d = new_shape.rank() - 1;
  int64_t chunk_stride = strides.back(), chunk_numel = 1, view_numel = 1;
  for (int d = shape.rank() - 1; d >= 0; --d) {
    chunk_numel *= shape[d];
    const bool chunk_ends = d == 0 || (shape[d - 1] != 1 && strides[d - 1] != chunk_numel * chunk_stride);
    if (!chunk_ends) continue;
    while (new_d >= 0 && (view_numel < chunk_numel || new_shape[new_d] == 1)) {
      out[new_d] = view_numel * chunk_stride;
      view_numel *= new_shape[new_d--];
    }
    if (view_numel != chunk_numel) return false;
    if (d > 0) {
      chunk_stride = strides[d - 1];
      chunk_numel = view_numel = 1;
    }
  }
  return new_d == -1;
}

Tensor Tensor::view(const Shape& requested) const {
  check_defined("view");
  const Shape shape = infer_shape(requested, numel(), "view");
  Shape strides;
  if (numel() == 0 || is_contiguous()) return with_layout(shape, contiguous_strides(shape), offset_);
  if (!view_strides(shape_, strides_, shape, strides))
    throw ShapeError(message("view: cannot view a tensor of shape ", shape_, " and strides ", strides_, " as ", shape,
                             "; call reshape() (which copies) or contiguous() first"));
  return with_layout(shape, strides, offset_);
}

Tensor Tensor::reshape(const Shape& requested) const {
  check_defined("reshape");
  const Shape shape = infer_shape(requested, numel(), "reshape");
  Shape strides;
  if (numel() == 0 || is_contiguous()) return with_layout(shape, contiguous_strides(shape), offset_);
  if (view_strides(shape_, strides_, shape, strides)) return with_layout(shape, strides, offset_);
  return contiguous().with_layout(shape, contiguous_strides(shape), 0);
}

Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const {
  check_defined("transpose");
  const int a = normalize_dim(dim0, dim(), "transpose"), b = normalize_dim(dim1, dim(), "transpose");
  Shape shape = shape_, strides = strides_;
  std::swap(shape[a], shape[b]);
  std::swap(strides[a], strides[b]);
  return with_layout(shape, strides, offset_);
}

Tensor Tensor::permute(const std::vector<int64_t>& order) const {
  check_defined("permute");
  if (static_cast<int>(order.size()) != dim())
    throw ShapeError(message("permute: ", order.size(), " dimensions given for a tensor of rank ", dim()));
  Shape shape, strides;
  std::vector<bool> used(static_cast<size_t>(dim()), false);
  for (int64_t o : order) {
    const int d = normalize_dim(o, dim(), "permute");
    if (used[static_cast<size_t>(d)]) throw IndexError(message("permute: dimension ", o, " appears twice"));
    used[static_cast<size_t>(d)] = true;
    shape.push_back(shape_[d]);
    strides.push_back(strides_[d]);
  }
  return with_layout(shape, strides, offset_);
}

Tensor Tensor::slice(int64_t dim, int64_t start, int64_t end, int64_t step) const {
  check_defined("slice");
  const int d = normalize_dim(dim, this->dim(), "slice");
  if (step <= 0) throw ValueError(message("slice: step must be positive, got ", step));
  const int64_t n = shape_[d];
  // Python semantics: negative indices count from the end, out-of-range ones are clamped.
  auto clamp_index = [n](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + n : i, 0, n); };
  const int64_t lo = clamp_index(start), hi = std::max(lo, clamp_index(end));
  Shape shape = shape_, strides = strides_;
  shape[d] = (hi - lo + step - 1) / step;
  strides[d] = strides_[d] * step;
  return with_layout(shape, strides, offset_ + lo * strides_[d]);
}

Tensor Tensor::narrow(int64_t dim, int64_t start, int64_t length) const {
  check_defined("narrow");
  const int d = normalize_dim(dim, this->dim(), "narrow");
  if (start < 0 || length < 0 || start + length > shape_[d])
    throw IndexError(message("narrow: start ", start, " and length ", length, " do not fit in dimension ", dim,
                             " of size ", shape_[d]));
  return slice(d, start, start + length);
}

Tensor Tensor::select(int64_t dim, int64_t index) const {
  check_defined("select");
  const int d = normalize_dim(dim, this->dim(), "select");
  if (index < -shape_[d] || index >= shape_[d])
    throw IndexError(message("select: index ", index, " is out of range for dimension ", dim, " of size ", shape_[d]));
  if (index < 0) index += shape_[d];
  Shape shape = shape_, strides = strides_;
  shape.erase(d);
  strides.erase(d);
  return with_layout(shape, strides, offset_ + index * strides_[d]);
}

Tensor Tensor::squeeze(int64_t dim) const {
  check_defined("squeeze");
  const int d = normalize_dim(dim, this->dim(), "squeeze");
  if (shape_[d] != 1)
    throw ShapeError(message("squeeze: dimension ", dim, " has size ", shape_[d], ", not 1, in shape ", shape_));
  Shape shape = shape_, strides = strides_;
  shape.erase(d);
  strides.erase(d);
  return with_layout(shape, strides, offset_);
}

Tensor Tensor::unsqueeze(int64_t dim) const {
  check_defined("unsqueeze");
  const int d = normalize_dim(dim, this->dim() + 1, "unsqueeze");
  Shape shape = shape_, strides = strides_;
  shape.insert(d, 1);
  strides.insert(d, d < this->dim() ? strides_[d] * shape_[d] : 1);
  return with_layout(shape, strides, offset_);
}

Tensor Tensor::expand(const Shape& shape) const {
  check_defined("expand");
  if (!broadcasts_to(shape_, shape)) throw ShapeError(message("expand: cannot expand shape ", shape_, " to ", shape));
  return with_layout(shape, broadcast_strides(shape_, strides_, shape), offset_);
}

// ---- copies ---------------------------------------------------------------------------------

Tensor Tensor::contiguous() const {
  check_defined("contiguous");
  return is_contiguous() ? *this : clone();
}

Tensor Tensor::clone() const {
  check_defined("clone");
  Tensor out = empty(shape_, dtype_);
  out.copy_(*this);
  return out;
}

Tensor Tensor::to(DType dtype) const {
  check_defined("to");
  if (dtype == dtype_) return *this;
  Tensor out = empty(shape_, dtype);
  out.copy_(*this);
  return out;
}

Tensor& Tensor::copy_(const Tensor& src) {
  check_defined("copy_");
  src.check_defined("copy_");
  dispatch_any(dtype_, [&]<class T>() {
    dispatch_any(src.dtype_,
                 [&]<class S>() { assign<T, S>("copy_", *this, src, [](S s) { return static_cast<T>(s); }); });
  });
  return *this;
}

Tensor& Tensor::fill_(double value) {
  check_defined("fill_");
  // The value as a one-element tensor of this dtype, broadcast over every element.
  dispatch_any(dtype_, [&]<class T>() {
    const T v = static_cast<T>(value);
    const Tensor one(Storage::allocate(sizeof(T)), Shape{}, Shape{}, 0, dtype_);
    *one.data<T>() = v;
    assign<T, T>("fill_", *this, one, [](T x) { return x; });
  });
  return *this;
}

// In-place arithmetic: this and other must share a dtype; other broadcasts to this shape.
template <class F>
static Tensor& update_numeric(Tensor& self, const Tensor& other, const char* op, F fn) {
  if (self.dtype() != other.dtype())
    throw DTypeError(message(op, ": dtypes differ: ", self.dtype(), " and ", other.dtype()));
  dispatch_numeric(self.dtype(), op,
                   [&]<class T>() { update<T, T>(op, self, other, [&](T a, T b) { return fn(a, b); }); });
  return self;
}

Tensor& Tensor::add_(const Tensor& other, double alpha) {
  return update_numeric(*this, other, "add_",
                        [alpha](auto a, auto b) { return a + static_cast<decltype(a)>(alpha) * b; });
}
Tensor& Tensor::sub_(const Tensor& other) {
  return update_numeric(*this, other, "sub_", [](auto a, auto b) { return a - b; });
}
Tensor& Tensor::mul_(const Tensor& other) {
  return update_numeric(*this, other, "mul_", [](auto a, auto b) { return a * b; });
}
Tensor& Tensor::div_(const Tensor& other) {
  return update_numeric(*this, other, "div_", [](auto a, auto b) { return a / b; });
}
Tensor& Tensor::add_(double value) { return add_(scalar(value, dtype_)); }
Tensor& Tensor::mul_(double value) { return mul_(scalar(value, dtype_)); }

// ---- creation -------------------------------------------------------------------------------

Tensor full(const Shape& shape, double value, DType dtype) {
  check_sizes(shape, "full");
  Tensor t = Tensor::empty(shape, dtype);
  t.fill_(value);
  return t;
}
Tensor zeros(const Shape& shape, DType dtype) { return Tensor::allocated(shape, dtype, /*zeroed=*/true, "zeros"); }
Tensor ones(const Shape& shape, DType dtype) { return full(shape, 1.0, dtype); }
Tensor scalar(double value, DType dtype) { return full(Shape{}, value, dtype); }
Tensor zeros_like(const Tensor& t) { return zeros(t.shape(), t.dtype()); }

Tensor arange(double start, double end, double step, DType dtype) {
  if (step == 0 || !std::isfinite(start) || !std::isfinite(end) || !std::isfinite(step))
    throw ValueError(message("arange: need finite start, end and a non-zero step, got ", start, ", ", end, ", ", step));
  const int64_t n = std::max<int64_t>(0, static_cast<int64_t>(std::ceil((end - start) / step)));
  Tensor t = Tensor::empty(Shape{n}, dtype);
  dispatch_any(dtype, [&]<class T>() {
    T* p = t.data<T>();
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(start + static_cast<double>(i) * step);
  });
  return t;
}

Tensor arange(int64_t end, DType dtype) { return arange(0.0, static_cast<double>(end), 1.0, dtype); }

template <class T>
Tensor from_vector(const std::vector<T>& values, const Shape& shape) {
  check_sizes(shape, "from_vector");
  if (static_cast<int64_t>(values.size()) != shape.numel())
    throw ShapeError(message("from_vector: ", values.size(), " values do not fill shape ", shape, " (", shape.numel(),
                             " elements)"));
  Tensor t = Tensor::empty(shape, dtype_of<T>);
  std::copy(values.begin(), values.end(), t.data<T>());
  return t;
}
template Tensor from_vector(const std::vector<float>&, const Shape&);
template Tensor from_vector(const std::vector<double>&, const Shape&);
template Tensor from_vector(const std::vector<int64_t>&, const Shape&);
template <>
Tensor from_vector(const std::vector<bool>& values, const Shape& shape) {  // vector<bool> is packed bits
  return from_vector(std::vector<int64_t>(values.begin(), values.end()), shape).to(DType::Bool);
}

Tensor tensor(std::initializer_list<double> values, const Shape& shape, DType dtype) {
  return from_vector(std::vector<double>(values), shape).to(dtype);
}

}  // namespace gradformer
