#include "tensor/shape.h"

#include <sstream>

#include "tensor/support/error.h"

namespace gradformer {

Shape::Shape(std::initializer_list<int64_t> dims) : Shape(std::span<const int64_t>(dims.begin(), dims.size())) {}

Shape::Shape(std::span<const int64_t> dims) {
  for (int64_t d : dims) push_back(d);
}

void Shape::too_many_dimensions() { throw ShapeError(message("Shape: more than ", kMaxRank, " dimensions")); }

void Shape::insert(int at, int64_t d) {
  push_back(0);
  for (int i = rank_ - 1; i > at; --i) (*this)[i] = (*this)[i - 1];
  (*this)[at] = d;
}

void Shape::erase(int at) {
  for (int i = at; i + 1 < rank_; ++i) (*this)[i] = (*this)[i + 1];
  --rank_;
}

void Shape::numel_overflow() const {
  throw ShapeError(message("shape ", *this, " has more elements than a 64-bit count holds"));
}

bool operator==(const Shape& a, const Shape& b) {
  if (a.rank_ != b.rank_) return false;
  for (int i = 0; i < a.rank_; ++i)
    if (a[i] != b[i]) return false;
  return true;
}

std::ostream& operator<<(std::ostream& out, const Shape& shape) {
  out << '[';
  for (int i = 0; i < shape.rank(); ++i) out << (i ? ", " : "") << shape[i];
  return out << ']';
}

std::string to_string(const Shape& shape) {
  std::ostringstream out;
  out << shape;
  return out.str();
}

Shape contiguous_strides(const Shape& shape) {
  Shape strides = shape;
  int64_t stride = 1;
  for (int i = shape.rank() - 1; i >= 0; --i) {
    strides[i] = stride;
    // [0, 2^62, 4] has no elements, yet its first stride would be 2^64
    if (__builtin_mul_overflow(stride, shape[i], &stride))
      throw ShapeError(message("shape ", shape, ": its strides do not fit in 64 bits"));
  }
  return strides;
}

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const int rank = std::max(a.rank(), b.rank());
  Shape out;
  for (int i = 0; i < rank; ++i) {
    // Align from the right: a missing leading dimension counts as size 1.
    const int ia = i - (rank - a.rank()), ib = i - (rank - b.rank());
    const int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1) throw ShapeError(message(op, ": shapes ", a, " and ", b, " do not broadcast"));
    out.push_back(da == 1 ? db : da);
  }
  return out;
}

bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.rank() > to.rank()) return false;
  const int lead = to.rank() - from.rank();
  for (int d = 0; d < from.rank(); ++d)
    if (from[d] != 1 && from[d] != to[d + lead]) return false;
  return true;
}

int normalize_dim(int64_t dim, int rank, const char* op) {
  const int64_t d = dim < 0 ? dim + rank : dim;
  if (d < 0 || d >= rank)
    throw IndexError(message(op, ": dimension ", dim, " is out of range for a tensor of rank ", rank));
  return static_cast<int>(d);
}

}  // namespace gradformer
