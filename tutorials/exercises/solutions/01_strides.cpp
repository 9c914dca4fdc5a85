// The reference solution of tutorials/exercises/01_strides.cpp (what contiguous_strides in
// tensor/shape.cpp and every strided loop of the library compute).
#include "exercises.h"

namespace exercises {

using namespace gradformer;

Shape row_major_strides(const Shape& shape) {
  Shape strides = shape;  // the same rank; every entry is overwritten
  int64_t stride = 1;
  for (int i = shape.rank() - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= shape[i];
  }
  return strides;
}

int64_t element_offset(const Tensor& t, const std::vector<int64_t>& index) {
  int64_t offset = t.offset();
  for (size_t i = 0; i < index.size(); ++i) offset += index[i] * t.strides()[static_cast<int>(i)];
  return offset;
}

}  // namespace exercises
