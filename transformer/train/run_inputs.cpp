#include "transformer/train/run_inputs.h"

#include <filesystem>
#include <optional>
#include <utility>
#include <vector>

#include "tensor/support/files.h"
#include "tensor/support/utf8.h"

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
    // A pipe or a FIFO (--text <(zcat book.gz)) is read once: there is nothing to find again.
    std::error_code error;
    if (path->empty() || !std::filesystem::is_regular_file(*path, error)) continue;
    const std::string absolute = std::filesystem::absolute(*path).lexically_normal().string();
    if (invalid_utf8_at(absolute))  // a checkpoint's entries are UTF-8: refused now, not at the first save
      throw TrainOptionError(option, message("is ", *path, ", whose absolute path ", absolute,
                                             " is not valid UTF-8, so a checkpoint cannot record it: run from "
                                             "a folder whose path is"));
    const std::string key = std::string("input.") + option;
    state[key] = absolute;
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
    // Where the run found the file, else (the project moved, or went to another machine) where its
    // options name it from here, if the bytes there are the same.
    const std::string as_given = *path;
    const auto fingerprint_of = [](const std::string& file) -> std::optional<std::string> {
      std::error_code error;
      if (!std::filesystem::is_regular_file(file, error)) return std::nullopt;
      return file_fingerprint(file);
    };
    *path = recorded->second;
    std::optional<std::string> now = fingerprint_of(*path);
    if (!now && !as_given.empty() && fingerprint_of(as_given) == fingerprint->second) {
      *path = as_given;
      continue;
    }
    if (!now)
      throw TrainOptionError(option, message(*path,
                                             ", the file the run trained on, is not there now: name its new "
                                             "place explicitly"));
    if (*now != fingerprint->second)
      throw TrainOptionError(option, message(*path, " is not the file the run trained on: its bytes changed since ",
                                             checkpoint, " was saved (fingerprint ", *now, ", was ",
                                             fingerprint->second, "); name a file explicitly to go on with it"));
  }
}

}  // namespace gradformer
