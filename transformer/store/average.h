// Checkpoint averaging (the paper's section 6.1: "for the base models, we used a single model
// obtained by averaging the last 5 checkpoints, which were written at 10-minute intervals. For the
// big models, we averaged the last 20 checkpoints."):
//
//   theta_avg = (1/K) sum_k theta_k        over the parameters of K checkpoints of one run
//
// The weights late in a run wander around a minimum with the noise of the last steps; their mean
// sits closer to its centre than any one of them, for the cost of reading K files.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gradformer {

/// Where a run keeps the checkpoint of a step when asked to (TrainOptions::keep_last):
/// OUT/model-step-STEP.safetensors.
std::string kept_checkpoint_path(const std::string& out_dir, int64_t step);

/// The checkpoints kept in `run_dir` (model-step-N.safetensors), oldest step first. Other files are
/// ignored; DataError if the directory cannot be read.
std::vector<std::string> kept_checkpoints(const std::string& run_dir);

/// Copies `checkpoint` (just saved at `step`) to kept_checkpoint_path(out_dir, step), then deletes
/// the kept checkpoints older than the newest `keep_last` (0: keeps nothing, deletes nothing).
void keep_checkpoint(const std::string& checkpoint, const std::string& out_dir, int64_t step, int64_t keep_last);

/// Writes to `out_path` a checkpoint whose every parameter is the elementwise mean of that
/// parameter in `paths` (computed in float64, stored in the parameter's own dtype), as the
/// checkpoint writer writes (save_checkpoint_parameters: a temporary file renamed into place). The
/// output holds the parameters, the configuration and the vocabularies, and "state.averaged" (the
/// files' names, one a line); no optimizer state and no training state, so it translates and
/// scores but cannot be resumed. Each input is read and checked as every loader reads one
/// (read_checkpoint_file: the configuration, the vocabularies, every tensor against the
/// configuration, no non-finite parameter), its CheckpointError prefixed "average: ". Checkpoints
/// of any architecture average, but all must agree: CheckpointError "average: B differs from A in
/// config.d_model (256, not 128)" for a differing configuration, vocabulary or architecture.
/// ValueError for an empty list, and for an `out_path` that is one of `paths` (the average, which
/// has no training state, would replace a resumable checkpoint).
void average_checkpoints(const std::vector<std::string>& paths, const std::string& out_path);

}  // namespace gradformer
