// Checkpoints in the safetensors format (Hugging Face), readable by PyTorch's safetensors package:
//
//   [8 bytes] N, the header length, little-endian unsigned 64-bit
//   [N bytes] UTF-8 JSON: {"__metadata__": {"key": "value", ...},
//                          "name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...}
//             padded with spaces to a multiple of 8 bytes
//   [rest]    each tensor's elements, row-major and little-endian, at [begin, end) of this part
//
// The reader trusts nothing in the file: every rule of the format is checked and each violation is
// a CheckpointError naming the file, the rule and the tensor.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "nn/module.h"
#include "tensor/support/error.h"

namespace gradformer {

/// The largest header the reader accepts, as the reference implementation: 100 MB.
inline constexpr uint64_t kMaxSafetensorsHeader = 100'000'000;

struct SafetensorsFile {
  StateDict tensors;
  std::map<std::string, std::string> metadata;
};

/// Writes the tensors (in name order, contiguous from offset 0) and the metadata to `path`.
/// Dtypes are stored as F32, F64, I64 and BOOL. The file is written under a temporary name in the
/// same directory and renamed over `path` only when complete, so a failed or interrupted save
/// leaves any previous file intact. CheckpointError (naming the path) for an undefined tensor, a
/// tensor named "__metadata__", text that is not UTF-8, or a file that cannot be written.
void save_safetensors(const std::filesystem::path& path, const StateDict& tensors,
                      const std::map<std::string, std::string>& metadata = {});

/// Reads a safetensors file written by this library or any other, checking that:
/// the file holds at least the 8-byte length; 2 <= N <= 100 MB and N <= file size - 8; the header
/// is UTF-8 JSON starting with '{', an object; no name appears twice; "__metadata__", if present,
/// maps strings to strings; each tensor has exactly dtype (F32, F64, I64 or BOOL; F16 and BF16,
/// widened exactly to float32, and U8, I8, U16, I16, U32, I32, widened to int64), shape
/// (non-negative integers) and data_offsets [begin, end] with end - begin = prod(shape) * itemsize;
/// the tensors tile the data from byte 0 with no gap or overlap and no trailing bytes; BOOL bytes are 0 or 1.
SafetensorsFile load_safetensors(const std::filesystem::path& path);

}  // namespace gradformer
