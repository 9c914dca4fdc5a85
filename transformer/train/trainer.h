// The training loop, written once for every architecture and task: the warmup schedule, the
// optimisation step (pieces, clipping, Adam), the stop on a non-finite loss or gradient, progress,
// metrics, the loss curve, checkpoints that resume bit for bit, profiling, and the report at the
// end. What differs between architectures and tasks is behind TrainingTask (task.h).
// `gradformer train` is a thin layer over train().
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "nn/adam.h"
#include "transformer/train/options.h"
#include "transformer/train/task.h"

namespace gradformer {

/// A training step whose loss or gradient norm is NaN or infinite: the run has diverged. Raised
/// before the optimizer's update, so the parameters are still those of the step before.
struct NonFiniteError : Error {
  using Error::Error;
};

/// One optimisation step (the paper's section 5; clipping is not in the paper): zero the
/// gradients; for each piece of the batch, its loss (forward) weighted by its share of the scored
/// tokens, and backward, so the gradients add up to the whole batch's; clip to a global norm of
/// `clip` (0: no clipping); Adam's step at rate `lr`. Returns the batch's loss (label-smoothed if
/// smoothing is on), measured before the update. NonFiniteError, before the update, if a loss or
/// the gradients' global norm is not finite.
double train_step(Adam& adam, const TrainBatch& batch, double lr, double clip);

/// Trains, evaluating at the end (and every eval_every steps), saving out_dir/model.safetensors
/// at the end (and every save_every steps). With resume_path, continues the run saved there (any
/// architecture): the checkpoint's model, optimizer, data position and generators, and its options
/// but the output ones (out_dir, metrics_path, log_every, quiet, stop_after, profile_path), so
/// the losses that follow equal those the uninterrupted run would have had; resume_epochs or
/// resume_steps, if not 0, move the end of the run (a TrainOptionError if the checkpoint is already
/// past it), and resume_keep_last, if set, how many saves it keeps. A TrainOptionError for an option out of range or
/// not used by the task, or a model too small for the task's data, and a DataError for a malformed data file, before
/// any training. NonFiniteError naming the step and the first op when training diverges.
TrainReport train(const TrainOptions& options, const std::string& resume_path = "");

}  // namespace gradformer
