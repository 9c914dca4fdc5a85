// The element types a tensor can hold, chosen at run time. Kernels are templates; `dispatch`
// turns the run-time dtype into the compile-time type once per operation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tensor/support/error.h"

namespace gradformer {

enum class DType : uint8_t {
  Float32,  // training
  Float64,  // gradient checks
  Int64,    // indices: token ids, gather/index_select positions
  Bool,     // masks: comparisons, where, masked_fill
};

constexpr std::string_view name(DType dtype) {
  switch (dtype) {
    case DType::Float32:
      return "float32";
    case DType::Float64:
      return "float64";
    case DType::Int64:
      return "int64";
    case DType::Bool:
      return "bool";
  }
  return "?";
}

constexpr size_t itemsize(DType dtype) {
  switch (dtype) {
    case DType::Float32:
      return 4;
    case DType::Float64:
      return 8;
    case DType::Int64:
      return 8;
    case DType::Bool:
      return 1;
  }
  return 0;
}

constexpr bool is_floating(DType dtype) { return dtype == DType::Float32 || dtype == DType::Float64; }

inline std::ostream& operator<<(std::ostream& out, DType dtype) { return out << name(dtype); }

/// The dtype of a C++ element type: dtype_of<float> == DType::Float32.
template <class T>
inline constexpr DType dtype_of = DType::Float32;
template <>
inline constexpr DType dtype_of<double> = DType::Float64;
template <>
inline constexpr DType dtype_of<int64_t> = DType::Int64;
template <>
inline constexpr DType dtype_of<bool> = DType::Bool;

/// Calls fn.template operator()<T>() with T the C++ type of a floating dtype; any other dtype is a
/// DTypeError naming `op`.   dispatch_floating(t.dtype(), "exp", [&]<class T>() { ... });
template <class F>
decltype(auto) dispatch_floating(DType dtype, const char* op, F&& fn) {
  switch (dtype) {
    case DType::Float32:
      return fn.template operator()<float>();
    case DType::Float64:
      return fn.template operator()<double>();
    default:
      throw DTypeError(message(op, ": expected a floating dtype (float32 or float64), got ", dtype));
  }
}

/// As dispatch_floating, and int64 too (arithmetic, comparisons, sums of counts).
template <class F>
decltype(auto) dispatch_numeric(DType dtype, const char* op, F&& fn) {
  if (dtype == DType::Int64) return fn.template operator()<int64_t>();
  if (dtype == DType::Bool) throw DTypeError(message(op, ": expected a numeric dtype, got bool"));
  return dispatch_floating(dtype, op, fn);
}

/// Every dtype (copies, views made contiguous, where, concat).
template <class F>
decltype(auto) dispatch_any(DType dtype, F&& fn) {
  switch (dtype) {
    case DType::Float32:
      return fn.template operator()<float>();
    case DType::Float64:
      return fn.template operator()<double>();
    case DType::Int64:
      return fn.template operator()<int64_t>();
    case DType::Bool:
      break;
  }
  return fn.template operator()<bool>();
}

}  // namespace gradformer
