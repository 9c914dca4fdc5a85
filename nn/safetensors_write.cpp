// save_safetensors: a StateDict and its metadata written as one safetensors file, atomically and
// durably (a reader sees the old file or the new one, never a torn one).
#include <vector>

#include "nn/safetensors.h"
#include "nn/safetensors_format.h"
#include "tensor/support/files.h"
#include "tensor/support/json.h"

namespace gradformer {

namespace fs = std::filesystem;
using namespace safetensors_format;

// ---- writing --------------------------------------------------------------------------------

void save_safetensors(const fs::path& path, const StateDict& tensors,
                      const std::map<std::string, std::string>& metadata) {
  const std::string where = "save_safetensors: " + path.string() + ": ";
  // The header: __metadata__ first, then each tensor with its byte range in the data part.
  Json::Members header;
  if (!metadata.empty()) {
    Json::Members entries;
    for (const auto& [key, value] : metadata) entries.emplace_back(key, Json::string(value));
    header.emplace_back("__metadata__", Json::object(std::move(entries)));
  }
  std::vector<Tensor> data;  // contiguous, in the order of the header
  int64_t offset = 0;
  for (const auto& [name, tensor] : tensors) {
    if (name == "__metadata__") throw CheckpointError(where + "\"__metadata__\" is reserved and cannot name a tensor");
    if (!tensor.defined()) throw CheckpointError(where + "tensor " + quoted(name) + " is undefined");
    std::vector<Json> shape;
    for (const int64_t d : tensor.shape()) shape.push_back(Json::integer(d));
    const int64_t bytes = tensor.numel() * static_cast<int64_t>(itemsize(tensor.dtype()));
    header.emplace_back(
        name, Json::object({{"dtype", Json::string(safetensors_name(tensor.dtype()))},
                            {"shape", Json::array(std::move(shape))},
                            {"data_offsets", Json::array({Json::integer(offset), Json::integer(offset + bytes)})}}));
    offset += bytes;
    data.push_back(tensor.contiguous());
  }
  std::string text;
  try {
    text = Json::object(std::move(header)).dump();
  } catch (const JsonError& e) {
    throw CheckpointError(where + "a name or metadata entry is not valid UTF-8 (" + e.what() + ")");
  }
  // Padding to a multiple of 8 keeps the data 8-byte aligned when the file is memory-mapped.
  text.append((8 - text.size() % 8) % 8, ' ');

  // Written whole (tensor/support/files.h): the target is always the old file or the new one.
  char length[8];
  const uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) length[i] = static_cast<char>((n >> (8 * i)) & 0xFF);  // little-endian
  auto write = [&](int fd) {
    bool written = write_all(fd, length, 8) && write_all(fd, text.data(), text.size());
    for (const Tensor& t : data) {
      const size_t bytes = static_cast<size_t>(t.numel()) * itemsize(t.dtype());
      const char* begin =
          reinterpret_cast<const char*>(t.storage()->data()) + t.offset() * static_cast<int64_t>(itemsize(t.dtype()));
      if constexpr (std::endian::native == std::endian::big) {
        std::vector<char> swapped(begin, begin + bytes);
        swap_to_little_endian(swapped.data(), static_cast<size_t>(t.numel()), itemsize(t.dtype()));
        written = written && write_all(fd, swapped.data(), bytes);
      } else {
        written = written && write_all(fd, begin, bytes);
      }
    }
    return written;
  };
  try {
    write_file_whole(path.string(), write);
  } catch (const OutputError& e) {
    throw CheckpointError(std::string("save_safetensors: ") + e.what());
  }
}

}  // namespace gradformer
