// What nn/safetensors.cpp (the reader) and nn/safetensors_write.cpp (the writer) share: the
// format's names of gradformer's dtypes, the byte order of elements, and the parts of messages.
#pragma once

#include <algorithm>
#include <bit>
#include <optional>
#include <string>

#include "tensor/dtype.h"

namespace gradformer::safetensors_format {

struct DTypeName {
  DType dtype;
  const char* name;
};
constexpr DTypeName kDTypes[] = {
    {DType::Float32, "F32"}, {DType::Float64, "F64"}, {DType::Int64, "I64"}, {DType::Bool, "BOOL"}};

inline const char* safetensors_name(DType dtype) {
  for (const auto& d : kDTypes)
    if (d.dtype == dtype) return d.name;
  return "?";
}

inline std::optional<DType> dtype_from_name(const std::string& name) {
  for (const auto& d : kDTypes)
    if (name == d.name) return d.dtype;
  return std::nullopt;
}

/// The file stores little-endian elements; on a big-endian machine swap each element's bytes
/// (the same operation converts both ways). A no-op on little-endian machines.
inline void swap_to_little_endian(char* bytes, size_t count, size_t itemsize) {
  if constexpr (std::endian::native == std::endian::big) {
    for (size_t i = 0; i < count; ++i) std::reverse(bytes + i * itemsize, bytes + (i + 1) * itemsize);
  } else {
    (void)bytes, (void)count, (void)itemsize;
  }
}

inline std::string quoted(const std::string& s) { return "\"" + s + "\""; }

}  // namespace gradformer::safetensors_format
