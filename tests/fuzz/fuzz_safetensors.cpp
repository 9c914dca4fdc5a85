// Fuzzes the safetensors reader (nn/safetensors.h) on arbitrary files. load_safetensors takes a
// path, so each input is written to a scratch file first (on tmpfs): the reader under test is the
// one a user runs, file size check included. A file must load or be a CheckpointError; a file that
// loads must save and load again to the same tensors (dtype, shape, bytes) and metadata.
#include <cstdint>
#include <cstring>
#include <string>

#include "fuzz/fuzz.h"
#include "nn/safetensors.h"

namespace {

using namespace gradformer;

bool same_bytes(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || !(a.shape() == b.shape())) return false;
  const Tensor x = a.contiguous(), y = b.contiguous();
  const size_t bytes = static_cast<size_t>(x.numel()) * itemsize(x.dtype());
  const auto* px =
      reinterpret_cast<const char*>(x.storage()->data()) + x.offset() * static_cast<int64_t>(itemsize(x.dtype()));
  const auto* py =
      reinterpret_cast<const char*>(y.storage()->data()) + y.offset() * static_cast<int64_t>(itemsize(y.dtype()));
  return bytes == 0 || std::memcmp(px, py, bytes) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = [] {
    const std::string p = fuzz::scratch_path("safetensors");
    fuzz::remove_at_exit(p);
    return p;
  }();
  fuzz::write_file(path, std::string_view(reinterpret_cast<const char*>(data), size));
  SafetensorsFile file;
  bool loaded = false;
  fuzz::guarded([&] {
    file = load_safetensors(path);
    loaded = true;
  });
  if (!loaded) return 0;
  // What loads is a valid file, so saving it must work and give back the same contents.
  try {
    const std::string again = path + ".again";
    save_safetensors(again, file.tensors, file.metadata);
    const SafetensorsFile reread = load_safetensors(again);
    if (reread.metadata != file.metadata) fuzz::fail("the metadata changed in a save/load round trip");
    if (reread.tensors.size() != file.tensors.size()) fuzz::fail("the tensor count changed in a save/load round trip");
    for (const auto& [name, tensor] : file.tensors) {
      const auto it = reread.tensors.find(name);
      if (it == reread.tensors.end() || !same_bytes(tensor, it->second))
        fuzz::fail("tensor \"" + name + "\" changed in a save/load round trip");
    }
  } catch (const std::exception& e) {
    fuzz::fail(std::string("a file that loaded did not survive a save/load round trip: ") + e.what());
  }
  return 0;
}
