// Tensor: a cheap-to-copy handle to shared storage, plus the shape, strides and offset that say
// where each element lives:   element[i0, i1, ...] = storage[offset + i0*strides[0] + i1*strides[1] + ...]
// Views (transpose, slice, expand, ...) make a new handle to the same storage with other strides;
// only contiguous() and clone() copy.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "tensor/dtype.h"
#include "tensor/shape.h"

namespace gradformer {

/// A block of bytes that one or more tensors view: 64-byte-aligned memory of its own, or a window
/// into memory another object owns (a mapped file's bytes).
class Storage {
  struct Key {  // only allocate() and borrow() can make one
    explicit Key() = default;
  };

 public:
  /// `bytes` bytes in one allocation with the Storage and the shared_ptr's counts: uninitialised,
  /// or zeros when `zeroed` (calloc's: pages fresh from the kernel are zero already, and cost nothing
  /// until written). std::bad_alloc when there is not enough memory.
  static std::shared_ptr<Storage> allocate(size_t bytes, bool zeroed = false);
  /// The `bytes` bytes at `data`, which `owner` keeps alive: no allocation and no copy. The storage
  /// holds `owner` for as long as a tensor views it.
  static std::shared_ptr<Storage> borrow(std::byte* data, size_t bytes, std::shared_ptr<const void> owner);
  /// The bytes the storages allocate() made hold now, all threads' (borrowed ones not counted).
  static int64_t bytes_held();
  /// The most they may hold: the machine's physical memory, or a container's limit (cgroup v2's
  /// memory.max) if lower. allocate() refuses, with std::bad_alloc, a storage that would take
  /// bytes_held() past it: Linux would promise the memory and kill the process once it was touched.
  static int64_t memory();
  Storage(Key, std::byte* const& data, size_t bytes, std::shared_ptr<const void> owner = nullptr)
      : data_(data), bytes_(bytes), owner_(std::move(owner)) {}
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  std::byte* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  std::byte* data_;
  size_t bytes_;
  std::shared_ptr<const void> owner_;  // a borrowed window's owner; null for memory of its own
};

class Tensor {
 public:
  /// An undefined tensor (defined() is false); every operation on it throws.
  Tensor() = default;
  /// A new contiguous tensor whose elements are not initialised.
  static Tensor empty(const Shape& shape, DType dtype = DType::Float32);
  /// A contiguous tensor of `shape` over the bytes `storage` already holds, from its first byte.
  /// ValueError when the storage is too small for the shape, or its data is not aligned to the
  /// dtype's size.
  static Tensor from_storage(std::shared_ptr<Storage> storage, const Shape& shape, DType dtype);

  // ---- what it is -------------------------------------------------------------------------
  bool defined() const { return storage_ != nullptr; }
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }  // in elements, not bytes
  int64_t offset() const { return offset_; }         // in elements
  int dim() const { return shape_.rank(); }
  int64_t size(int64_t dim) const;  // negative counts from the end
  int64_t numel() const { return shape_.numel(); }
  DType dtype() const { return dtype_; }
  bool is_contiguous() const;
  bool shares_storage_with(const Tensor& other) const { return storage_ == other.storage_; }
  const std::shared_ptr<Storage>& storage() const { return storage_; }

  /// Pointer to element [0, 0, ...]; DTypeError unless T matches the dtype.
  template <class T>
  T* data() const;
  /// The single element of a one-element tensor, converted to double.
  double item() const;
  /// One element by index, bounds-checked, converted to double: t.at({1, 2}).
  double at(std::initializer_list<int64_t> index) const;
  /// All elements in row-major order, converted to T.
  template <class T>
  std::vector<T> to_vector() const;

  // ---- views: same storage, new shape/strides/offset --------------------------------------
  Tensor view(const Shape& shape) const;     // ShapeError if the strides cannot express it; one -1 allowed
  Tensor reshape(const Shape& shape) const;  // a view when possible, else a contiguous copy
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor permute(const std::vector<int64_t>& order) const;
  Tensor slice(int64_t dim, int64_t start, int64_t end, int64_t step = 1) const;  // Python's [start:end:step]
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor select(int64_t dim, int64_t index) const;  // removes `dim`: t.select(0, i) is t[i]
  Tensor squeeze(int64_t dim) const;
  Tensor unsqueeze(int64_t dim) const;
  Tensor expand(const Shape& shape) const;  // broadcast_to: size-1 dims get stride 0

  // ---- copies ----------------------------------------------------------------------------
  Tensor contiguous() const;  // *this if already contiguous, else a row-major copy
  Tensor clone() const;       // always a copy
  Tensor to(DType dtype) const;

  // ---- in place: the tensor's own elements change (for optimizer updates) ------------------
  Tensor& fill_(double value);
  Tensor& copy_(const Tensor& src);                       // src broadcasts to this shape; dtype may differ
  Tensor& add_(const Tensor& other, double alpha = 1.0);  // this += alpha * other
  Tensor& sub_(const Tensor& other);
  Tensor& mul_(const Tensor& other);
  Tensor& div_(const Tensor& other);
  Tensor& add_(double value);
  Tensor& mul_(double value);

 private:
  Tensor(std::shared_ptr<Storage> storage, Shape shape, Shape strides, int64_t offset, DType dtype);
  Tensor with_layout(Shape shape, Shape strides, int64_t offset) const;
  void check_defined(const char* op) const {
    if (!defined()) undefined(op);
  }
  static Tensor allocated(const Shape& shape, DType dtype, bool zeroed, const char* op);  // empty's and zeros'
  friend Tensor zeros(const Shape& shape, DType dtype);
  [[noreturn]] static void undefined(const char* op);
  [[noreturn]] void wrong_data_request(DType asked) const;  // data<T>()'s errors, out of the inlined path

  std::shared_ptr<Storage> storage_;
  Shape shape_;
  Shape strides_;
  int64_t offset_ = 0;
  DType dtype_ = DType::Float32;
};

// ---- creation ------------------------------------------------------------------------------
/// Zeros that cost nothing until written when the memory is fresh from the kernel (calloc).
Tensor zeros(const Shape& shape, DType dtype = DType::Float32);
Tensor ones(const Shape& shape, DType dtype = DType::Float32);
Tensor full(const Shape& shape, double value, DType dtype = DType::Float32);
Tensor scalar(double value, DType dtype = DType::Float32);  // rank 0
/// start, start+step, ... up to but excluding end.
Tensor arange(double start, double end, double step = 1.0, DType dtype = DType::Float32);
Tensor arange(int64_t end, DType dtype = DType::Float32);
/// Copies `values` (row-major) into a new tensor of `shape`; ShapeError if the counts differ.
template <class T>
Tensor from_vector(const std::vector<T>& values, const Shape& shape);
Tensor tensor(std::initializer_list<double> values, const Shape& shape, DType dtype = DType::Float32);
Tensor zeros_like(const Tensor& t);

// ---- template definitions ------------------------------------------------------------------
template <class T>
T* Tensor::data() const {
  if (!defined() || dtype_of<T> != dtype_) wrong_data_request(dtype_of<T>);
  return reinterpret_cast<T*>(storage_->data()) + offset_;
}

}  // namespace gradformer
