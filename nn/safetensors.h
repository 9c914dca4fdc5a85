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
#include <memory>
#include <string>
#include <vector>

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
/// Reads every tensor at once: SafetensorsReader(path) and each tensor's read().
SafetensorsFile load_safetensors(const std::filesystem::path& path);

/// A safetensors file whose header is read, parsed once and checked (every rule load_safetensors
/// checks but the BOOL bytes, checked as each tensor is read) and whose tensors are still in the
/// file, to be read where they are wanted: into a model's own parameters, with no second copy.
/// Copies share the open file.
class SafetensorsReader {
 public:
  explicit SafetensorsReader(const std::filesystem::path& path);
  const std::map<std::string, std::string>& metadata() const;
  /// Every tensor's name, shape and dtype (as read: F16 as float32, ...), in name order.
  std::vector<ParameterSpec> tensor_specs() const;
  /// The tensor `name`, read into a new tensor.
  Tensor read(const std::string& name) const;
  /// The tensor `name` read with one read() into `destination`'s elements (widened first for a
  /// widened dtype). CheckpointError naming the file and the tensor for a name the file lacks, a
  /// destination of another shape or dtype or not contiguous, a file that changed since its header
  /// was read, a BOOL byte other than 0 or 1.
  void read_into(const std::string& name, const Tensor& destination) const;
  /// The tensor `name` as a view of the file's bytes, mapped into memory: no copy, and the file
  /// stays as it is when the tensor is written to (copy-on-write; see MappedFile). An undefined
  /// tensor when the bytes are not the elements as they are (a widened dtype, BOOL, a big-endian
  /// machine), are misaligned for the dtype, or the file cannot be mapped: read() it instead. The
  /// tensor keeps the mapping alive. CheckpointError for a name the file lacks.
  Tensor view(const std::string& name) const;

 private:
  struct State;
  void read_header(uint64_t header_length, uint64_t file_size);
  std::shared_ptr<State> state_;
};

}  // namespace gradformer
