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
#include "transformer/train/evaluate.h"
#include "transformer/train/options.h"
#include "transformer/train/task.h"

namespace gradformer {

/// A training step whose loss or gradient norm is NaN or infinite: the run has diverged. Raised
/// before the optimizer's update, so the parameters are still those of the step before.
struct NonFiniteError : Error {
  using Error::Error;
};

struct TrainReport {
  Architecture arch = Architecture::EncoderDecoder;
  std::string task;                   // what the model learnt, for the command that uses it
  int64_t first_step = 1, steps = 0;  // steps run in this call: first_step .. first_step + steps - 1
  double train_seconds = 0;           // the steps alone, without evaluation and saving
  int64_t scored_tokens = 0;          // the tokens (sentences, for a classifier) the loss counted
  double tokens_per_second = 0;       // of those
  double padding = 0;          // of the token slots computed (encoder-decoder: both sides), the fraction that was padding
  std::vector<double> losses;  // each step's training loss (label-smoothed if smoothing is on)
  double valid_loss = 0;       // per scored token, without label smoothing (0: no validation data)
  std::optional<double> entropy_floor;  // decoder-only toy-lm: the grammar's entropy on the validation sentences
  int64_t copy_exact_match = -1;        // of 100 fresh sequences (copy task)
  std::optional<TranslationReport> valid_translation, test_translation;
  double valid_accuracy = 0, test_accuracy = 0;  // encoder-only: MLM tokens recovered, or labels right
  std::string checkpoint_path;
  /// The lines the run prints once trained (where it saved, the validation loss, BLEU and exact
  /// match, ...), kept also when quiet: what a front end shows when it hides the progress.
  std::vector<std::string> summary;
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
/// but the output ones (out_dir, metrics_path, log_every, quiet, stop_after, keep_last,
/// profile_path), so the losses that follow equal those the uninterrupted run would have had;
/// resume_epochs or resume_steps, if not 0, move the end of the run (a TrainOptionError if the
/// checkpoint is already past it). A TrainOptionError for an option out of range or not used by
/// the task, or a model too small for the task's data, and a DataError for a malformed data file,
/// before any training. NonFiniteError naming the step and the first op when training diverges.
TrainReport train(const TrainOptions& options, const std::string& resume_path = "");

}  // namespace gradformer
