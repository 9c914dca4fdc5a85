#include "transformer/store/average.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <regex>
#include <utility>

#include "autograd/anomaly.h"
#include "tensor/elementwise.h"
#include "tensor/support/files.h"
#include "transformer/data/data_error.h"
#include "transformer/store/checkpoint.h"

namespace gradformer {
namespace fs = std::filesystem;

namespace {

// state.*: the step, the options, the generators: each checkpoint's own, not something to agree on.
bool is_training_state(const std::string& key) { return key.rfind("state.", 0) == 0; }

// A metadata value as an error message shows it: a vocabulary (one token a line) by its size.
std::string shown(const std::map<std::string, std::string>& metadata, const std::string& key) {
  const auto it = metadata.find(key);
  if (it == metadata.end()) return "absent";
  if (it->second.find('\n') == std::string::npos) return it->second;
  return message(std::count(it->second.begin(), it->second.end(), '\n'), " lines");
}

// The first setting (configuration, vocabulary, format) on which two checkpoints disagree.
void require_same_settings(const CheckpointFile& first, const CheckpointFile& other) {
  std::map<std::string, std::string> keys;  // every key either has (the values do not matter here)
  for (const auto* file : {&first, &other})
    for (const auto& entry : file->metadata) keys.insert(entry);
  for (const auto& [key, ignored] : keys) {
    if (is_training_state(key)) continue;
    const auto a = first.metadata.find(key), b = other.metadata.find(key);
    if (a != first.metadata.end() && b != other.metadata.end() && a->second == b->second) continue;
    const std::string a_shown = shown(first.metadata, key), b_shown = shown(other.metadata, key);
    throw CheckpointError(message("average: ", other.path, " differs from ", first.path, " in ", key, " (",
                                  a_shown == b_shown ? "as many lines, other entries" : b_shown + ", not " + a_shown,
                                  "): only checkpoints of one run average"));
  }
}

// An input read as every command reads a checkpoint, so that average accepts exactly what
// translate, generate and classify accept: the configuration, the vocabularies, every tensor
// against the configuration, no non-finite parameter.
CheckpointFile read_input(const std::string& path) {
  try {
    return read_checkpoint_file(path);
  } catch (const CheckpointError& e) {
    throw CheckpointError(message("average: ", e.what()));
  }
}

}  // namespace

std::string kept_checkpoint_path(const std::string& out_dir, int64_t step) {
  return (fs::path(out_dir) / message("model-step-", step, ".safetensors")).string();
}

std::vector<std::string> kept_checkpoints(const std::string& run_dir) {
  static const std::regex kept(R"(model-step-([0-9]{1,18})\.safetensors)");
  std::vector<std::pair<int64_t, std::string>> found;  // (step, path)
  std::error_code error;
  for (fs::directory_iterator it(run_dir, error), end; !error && it != end; it.increment(error)) {
    std::smatch match;
    const std::string name = it->path().filename().string();
    if (std::regex_match(name, match, kept)) found.emplace_back(std::stoll(match[1]), it->path().string());
  }
  if (error) throw DataError(message("kept checkpoints: directory ", run_dir, ": ", error.message()));
  std::sort(found.begin(), found.end());
  std::vector<std::string> paths;
  for (auto& [step, path] : found) paths.push_back(std::move(path));
  return paths;
}

void keep_checkpoint(const std::string& checkpoint, const std::string& out_dir, int64_t step, int64_t keep_last) {
  if (keep_last <= 0) return;
  const std::string kept = kept_checkpoint_path(out_dir, step);
  // Written as the checkpoint is, under a temporary name then renamed, so that a full disk leaves
  // no truncated copy for average to trip on. A hard link costs neither the copy nor the space (the
  // next save renames a new file over the checkpoint, so the link keeps this one's bytes); a copy
  // where the file system has no links.
  const std::string temporary = kept + ".tmp";
  std::error_code error;
  fs::remove(temporary, error);
  fs::create_hard_link(checkpoint, temporary, error);
  if (error) fs::copy_file(checkpoint, temporary, fs::copy_options::overwrite_existing, error);
  if (!error) fs::rename(temporary, kept, error);
  if (error) {
    const std::string reason = error.message();
    fs::remove(temporary, error);
    throw CheckpointError(message(kept, ": cannot keep a copy of ", checkpoint, ": ", reason));
  }
  // An old copy that cannot be deleted stays, and the run goes on.
  const std::vector<std::string> all = kept_checkpoints(out_dir);
  for (size_t i = 0; i + static_cast<size_t>(keep_last) < all.size(); ++i) fs::remove(all[i], error);
}

void average_checkpoints(const std::vector<std::string>& paths, const std::string& out_path) {
  if (paths.empty()) throw ValueError("average: no checkpoints to average");
  if (const std::string input = input_written_over(paths, out_path); !input.empty())
    throw ValueError(message("average: the output ", out_path, " is the checkpoint ", input,
                             " being averaged; writing the average there would replace it"));
  const CheckpointFile first = read_input(paths.front());
  // sum_k theta_k, per parameter, in float64: [any shape]
  StateDict sums;
  for (const auto& [name, t] : first.parameters) sums.emplace(name, t.to(DType::Float64));
  for (size_t k = 1; k < paths.size(); ++k) {
    const CheckpointFile other = read_input(paths[k]);
    // One configuration: the reader checked both files' tensors against it, so they have the same
    // names, shapes and dtypes.
    require_same_settings(first, other);
    for (auto& [name, sum] : sums) sum = sum + other.parameters.at(name).to(DType::Float64);
  }

  // theta_avg = (1/K) sum_k theta_k, back in each parameter's dtype
  const double count = static_cast<double>(paths.size());
  StateDict averaged;
  for (const auto& [name, sum] : sums) {
    averaged.emplace(name, (sum / count).to(first.parameters.at(name).dtype()));
    double value = 0;
    if (first_non_finite(averaged.at(name), &value))
      throw CheckpointError(message("average: the mean of ", name, " holds ", value, ": not saving it"));
  }
  std::map<std::string, std::string> metadata;
  for (const auto& [key, value] : first.metadata)
    if (!is_training_state(key) && !absent_side_entry(first.arch, key)) metadata.emplace(key, value);
  std::string sources;
  for (const std::string& path : paths) sources += fs::path(path).filename().string() + "\n";
  std::map<std::string, std::string> state{{"averaged", sources}};
  // a fine-tuned model's chat template (train --task sft): how its conversations are written
  if (const auto chat = first.state.find("chat.template"); chat != first.state.end()) state.insert(*chat);
  save_checkpoint_parameters(out_path, averaged, /*optimizer_state=*/{}, std::move(metadata), state);
}

}  // namespace gradformer
