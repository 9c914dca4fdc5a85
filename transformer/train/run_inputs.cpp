#include "transformer/train/run_inputs.h"

#include <filesystem>
#include <utility>
#include <vector>

#include "tensor/support/files.h"

namespace gradformer {

namespace {

// The options that name a file the run reads its examples from.
std::vector<std::pair<const char*, std::string*>> input_files(TrainOptions& o) {
  return {{"data_path", &o.data_path},
          {"valid_path", &o.valid_path},
          {"test_path", &o.test_path},
          {"text_path", &o.text_path}};
}

}  // namespace

std::map<std::string, std::string> input_identities(const TrainOptions& o) {
  TrainOptions copy = o;
  std::map<std::string, std::string> state;
  for (const auto& [option, path] : input_files(copy)) {
    if (path->empty()) continue;
    const std::string key = std::string("input.") + option;
    state[key] = std::filesystem::absolute(*path).lexically_normal().string();
    state[key + ".fnv1a64"] = file_fingerprint(*path);
  }
  return state;
}

void resume_inputs(TrainOptions& o, const TrainOptions& requested, const std::map<std::string, std::string>& state,
                   const std::string& checkpoint) {
  TrainOptions asked = requested;
  const auto asked_files = input_files(asked);
  const auto files = input_files(o);
  for (size_t i = 0; i < files.size(); ++i) {
    const auto& [option, path] = files[i];
    const std::string& given = *asked_files[i].second;
    if (!given.empty()) {
      if (path->empty())
        throw TrainOptionError(option, message("names ", given, ", but the resumed run read no such file"));
      *path = given;  // the resumer's choice: nothing to compare
      continue;
    }
    const auto recorded = state.find(std::string("input.") + option);
    const auto fingerprint = state.find(std::string("input.") + option + ".fnv1a64");
    if (recorded == state.end() || fingerprint == state.end()) continue;  // saved before inputs were recorded
    *path = recorded->second;
    std::string now;
    try {
      now = file_fingerprint(*path);
    } catch (const Error& e) {
      throw TrainOptionError(option, message(*path, ", the file the run trained on, cannot be read now (", e.what(),
                                             "): name its new place explicitly"));
    }
    if (now != fingerprint->second)
      throw TrainOptionError(option, message(*path, " is not the file the run trained on: its bytes changed since ",
                                             checkpoint, " was saved (fingerprint ", now, ", was ", fingerprint->second,
                                             "); name a file explicitly to go on with it"));
  }
}

}  // namespace gradformer
