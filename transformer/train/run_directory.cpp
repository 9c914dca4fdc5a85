#include "transformer/train/run_directory.h"

#include <filesystem>

#include "nn/safetensors.h"
#include "tensor/error.h"
#include "tensor/utf8.h"
#include "transformer/data/data_error.h"
#include "transformer/inspect/attention_maps.h"
#include "transformer/train/average.h"
#include "transformer/train/evaluate.h"

namespace gradformer {

namespace fs = std::filesystem;

std::string run_directory_for_data(const std::string& data_path) {
  const std::string stem = fs::path(data_path).stem().string();
  std::string name;
  for (const char c : stem) {
    const auto byte = static_cast<unsigned char>(c);
    const bool kept = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                      c == '-' || c == '_' || byte >= 0x80;
    const char out = kept ? c : '-';
    if (out == '-' && !name.empty() && name.back() == '-') continue;  // one '-' for a run of them
    name += out;
  }
  const size_t first = name.find_first_not_of("-."), last = name.find_last_not_of("-.");
  name = first == std::string::npos ? "corpus" : name.substr(first, last - first + 1);
  return "runs/" + name;
}

std::string run_checkpoint_path(const std::string& out_dir) { return out_dir + "/model.safetensors"; }

namespace {

// The metrics file the run saved in out_dir said it wrote, if it lies inside out_dir ("" if none).
fs::path metrics_written_inside(const fs::path& out_dir) {
  std::string metrics;
  try {
    const auto metadata = load_safetensors(run_checkpoint_path(out_dir.string())).metadata;
    const auto it = metadata.find("state.options.metrics_path");  // the run's options, as save_checkpoint stores them
    if (it != metadata.end()) metrics = it->second;
  } catch (const Error&) {
    return {};  // not a checkpoint this could read: it names no metrics file
  }
  if (metrics.empty()) return {};
  std::error_code error;
  const fs::path inside = fs::weakly_canonical(metrics, error).lexically_relative(fs::weakly_canonical(out_dir, error));
  if (error || inside.empty() || *inside.begin() == ".." || inside == ".") return {};
  return out_dir / inside;
}

}  // namespace

std::vector<std::string> remove_run_outputs(const std::string& out_dir) {
  const fs::path dir(out_dir);
  std::vector<fs::path> doomed;
  if (const fs::path metrics = metrics_written_inside(dir); !metrics.empty()) doomed.push_back(metrics);
  doomed.push_back(dir / "model.safetensors");
  doomed.push_back(dir / "loss.svg");
  std::error_code error;
  if (fs::is_directory(dir, error))
    for (const std::string& kept : kept_checkpoints(out_dir)) doomed.push_back(kept);  // train --keep-last's
  const fs::path attention = dir / "attention";
  if (fs::is_directory(attention, error))
    for (const fs::directory_entry& entry : fs::directory_iterator(attention, error))
      if (entry.is_regular_file(error) && is_attention_map_name(entry.path().filename().string()))
        doomed.push_back(entry.path());
  std::vector<std::string> removed;
  for (const fs::path& path : doomed) {
    if (!fs::is_regular_file(path, error)) continue;
    if (!fs::remove(path, error) || error)
      throw DataError(message("train: cannot remove ", path.string(), " of the run it replaces: ", error.message()));
    removed.push_back(path.string());
  }
  if (fs::is_directory(attention, error) && fs::is_empty(attention, error)) fs::remove(attention, error);
  return removed;
}

void prepare_run_directory(const std::string& out_dir, const std::string& resume_path) {
  std::error_code error;
  const bool continues_here = !resume_path.empty() && fs::equivalent(resume_path, run_checkpoint_path(out_dir), error);
  if (!continues_here) remove_run_outputs(out_dir);
  fs::create_directories(out_dir, error);
  if (error) throw DataError(message("train: output directory ", out_dir, ": cannot create: ", error.message()));
}

}  // namespace gradformer
