// The property both checkpoint harnesses check on a checkpoint that loaded, of any architecture:
// it saves and loads again to the same configuration, vocabularies, state, parameters and
// optimizer state. A file a loader accepts is one train --resume, translate, generate or classify
// will use, so it must be one the library itself could have written.
#pragma once

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "fuzz/fuzz.h"
#include "transformer/store/checkpoint.h"

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

// Saves `loaded` beside the scratch file, reads it back with `load`, and requires the same
// settings (`settings`: the configuration's metadata, the vocabularies, the state, as text),
// parameters and optimizer state.
template <class Loaded, class Save, class Load, class Settings>
void check_round_trip_with(const Loaded& loaded, const std::string& scratch, Save save, Load load, Settings settings) {
  try {
    if (!loaded.model) fail("a loader returned no model");
    const std::string again = scratch + ".again";
    save(again, loaded);
    const Loaded reread = load(again);
    if (settings(reread) != settings(loaded))
      fail("the configuration, a vocabulary or the state changed in a save/load round trip");
    if (!same_tensors(reread.model->state_dict(), loaded.model->state_dict()))
      fail("the parameters changed in a save/load round trip");
    if (!same_tensors(reread.optimizer_state, loaded.optimizer_state))
      fail("the optimizer state changed in a save/load round trip");
  } catch (const std::exception& e) {
    fail(std::string("a checkpoint that loaded did not survive a save/load round trip: ") + e.what());
  }
}

using Settings = std::vector<std::map<std::string, std::string>>;

inline void check_round_trip(const LoadedCheckpoint& loaded, const std::string& scratch) {
  check_round_trip_with(
      loaded, scratch,
      [](const std::string& path, const LoadedCheckpoint& l) {
        save_checkpoint(path, *l.model, l.optimizer_state, l.info);
      },
      [](const std::string& path) { return load_checkpoint(path); },
      [](const LoadedCheckpoint& l) {
        return Settings{config_to_metadata(l.info.config),
                        {{"source", l.info.source_tokenizer.vocab().to_text()},
                         {"target", l.info.target_tokenizer.vocab().to_text()},
                         {"source_eos", l.info.source_eos ? "true" : "false"}},
                        l.info.state};
      });
}

inline void check_round_trip(const LoadedDecoderOnly& loaded, const std::string& scratch) {
  check_round_trip_with(
      loaded, scratch,
      [](const std::string& path, const LoadedDecoderOnly& l) {
        save_checkpoint(path, *l.model, l.model->config(), l.optimizer_state, l.info);
      },
      [](const std::string& path) { return load_decoder_only_checkpoint(path); },
      [](const LoadedDecoderOnly& l) {
        return Settings{config_to_metadata(l.info.config),
                        {{"target", l.info.target_tokenizer.vocab().to_text()}},  // its one side
                        l.info.state};
      });
}

inline void check_round_trip(const LoadedEncoderOnly& loaded, const std::string& scratch) {
  check_round_trip_with(
      loaded, scratch,
      [](const std::string& path, const LoadedEncoderOnly& l) {
        save_encoder_only_checkpoint(path, *l.model, l.optimizer_state, l.info);
      },
      [](const std::string& path) { return load_encoder_only_checkpoint(path); },
      [](const LoadedEncoderOnly& l) {
        std::string labels;
        for (const std::string& label : l.info.labels) labels += label + "\n";
        return Settings{encoder_only_config_to_metadata(l.info.config),
                        {{"vocab", l.info.vocab.to_text()}, {"labels", labels}},
                        l.info.state};
      });
}

}  // namespace gradformer::fuzz
