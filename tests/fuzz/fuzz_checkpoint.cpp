// Fuzzes load_checkpoint (transformer/train/checkpoint.h) on arbitrary files: the bytes go to a
// scratch file, which must load or be a gradformer::Error. Seeded with small valid checkpoints,
// so mutations reach past the safetensors layer into the metadata, the vocabularies and the
// model's tensors. A checkpoint that loads must survive a save/load round trip.
#include <cstdint>
#include <string>

#include "fuzz/checkpoint_checks.h"
#include "fuzz/fuzz.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gradformer;
  static const std::string path = [] {
    const std::string p = fuzz::scratch_path("checkpoint");
    fuzz::remove_at_exit(p);
    return p;
  }();
  fuzz::write_file(path, std::string_view(reinterpret_cast<const char*>(data), size));
  LoadedCheckpoint loaded;
  bool ok = false;
  fuzz::guarded([&] {
    loaded = load_checkpoint(path);
    ok = true;
  });
  if (ok) fuzz::check_round_trip(loaded, path);
  return 0;
}
