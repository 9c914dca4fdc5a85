// The property both checkpoint harnesses check on a checkpoint that loaded: it saves and loads
// again to the same configuration, vocabularies, state, parameters and optimizer state. A file
// load_checkpoint accepts is one train --resume and translate will use, so it must be one the
// library itself could have written.
#pragma once

#include <cstring>
#include <string>

#include "fuzz/fuzz.h"
#include "transformer/train/checkpoint.h"

namespace gradformer::fuzz {

inline bool same_tensor(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || !(a.shape() == b.shape())) return false;
  const Tensor x = a.contiguous(), y = b.contiguous();
  const size_t bytes = static_cast<size_t>(x.numel()) * itemsize(x.dtype());
  const auto* px =
      reinterpret_cast<const char*>(x.storage()->data()) + x.offset() * static_cast<int64_t>(itemsize(x.dtype()));
  const auto* py =
      reinterpret_cast<const char*>(y.storage()->data()) + y.offset() * static_cast<int64_t>(itemsize(y.dtype()));
  return bytes == 0 || std::memcmp(px, py, bytes) == 0;
}

inline bool same_tensors(const StateDict& a, const StateDict& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [name, t] : a) {
    const auto it = b.find(name);
    if (it == b.end() || !same_tensor(t, it->second)) return false;
  }
  return true;
}

inline void check_round_trip(const LoadedCheckpoint& loaded, const std::string& scratch) {
  try {
    if (!loaded.model) fail("load_checkpoint returned no model");
    const std::string again = scratch + ".again";
    save_checkpoint(again, *loaded.model, loaded.optimizer_state, loaded.info);
    const LoadedCheckpoint reread = load_checkpoint(again);
    if (config_to_metadata(reread.info.config) != config_to_metadata(loaded.info.config))
      fail("the configuration changed in a save/load round trip");
    if (!(reread.info.source_vocab == loaded.info.source_vocab) ||
        !(reread.info.target_vocab == loaded.info.target_vocab))
      fail("a vocabulary changed in a save/load round trip");
    if (reread.info.state != loaded.info.state) fail("the training state changed in a save/load round trip");
    if (!same_tensors(reread.model->state_dict(), loaded.model->state_dict()))
      fail("the parameters changed in a save/load round trip");
    if (!same_tensors(reread.optimizer_state, loaded.optimizer_state))
      fail("the optimizer state changed in a save/load round trip");
  } catch (const std::exception& e) {
    fail(std::string("a checkpoint that loaded did not survive a save/load round trip: ") + e.what());
  }
}

}  // namespace gradformer::fuzz
