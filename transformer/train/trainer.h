// Training a Transformer end to end: the task's data, the model, Adam with the paper's warmup
// schedule, label smoothing, gradient clipping, evaluation, checkpoints that resume exactly, a loss
// curve and attention maps. `gradformer train` is a thin layer over train().
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "autograd/fused.h"
#include "nn/adam.h"
#include "transformer/data/batch_plan.h"
#include "transformer/model/encoder_decoder.h"
#include "transformer/train/evaluate.h"

namespace gradformer {

struct TrainOptions {
  /// Which member of the family: encoder-decoder (tasks copy, toy-translation, corpus), decoder-only
  /// (tasks toy-lm, toy-translation as one sequence; lm_trainer.h), encoder-only (its own tasks;
  /// train_encoder_only). Ignored when resuming: the checkpoint's config.arch wins.
  Architecture arch = Architecture::EncoderDecoder;
  std::string task =
      "copy";  // "copy", "toy-translation", "toy-lm", or "corpus" (pairs from data_path, valid_path, test_path)
  std::string data_path, valid_path, test_path;  // TSV files, source<TAB>target per line

  // The model (ignored when resuming: the checkpoint's configuration wins).
  int64_t d_model = 128, d_ff = 512, heads = 8, layers = 2;
  double dropout = 0.1;
  NormPlacement norm = NormPlacement::Post;
  bool tie_embeddings = false;
  int64_t max_len = 128;
  Activation activation = Activation::ReLU;  // of the feed-forward network
  Positions positions = Positions::Sinusoidal;

  // Optimisation: Adam(0.9, 0.98, 1e-9), lr = this lr * NoamSchedule(d_model, warmup).
  int64_t batch_size = 80;  // sequences per batch (copy task), at most this many sentences (corpus)
  int64_t max_tokens = 0;   // corpus: padded tokens per batch, 0 for no budget
  // Corpus: which sentences share a batch (batch_plan.h), and in how many length-sorted pieces a
  // batch is padded (the pieces' gradients add up to the batch's). Random batches in 4 pieces learn
  // as random batches do with a fraction of their padding; length batches pad least but, where
  // length tells what a sentence is, learn far less per epoch (chapter 11).
  Batching batching = Batching::Random;
  int64_t pieces = 4;
  // The Annotated Transformer runs the copy task for 20 epochs (400 steps) with a 400-step warmup,
  // so the rate is still rising at the last step: it (in PyTorch) and gradformer then copy 94-96 of
  // 100 fresh sequences. 30 epochs with a 200-step warmup (the rate peaks, then decays) copy 100.
  int64_t epochs = 30;
  int64_t batches_per_epoch = 20;  // copy task; a corpus epoch is the whole corpus
  double lr = 0.5;
  int64_t warmup = 200;
  double label_smoothing = 0;
  double clip = 0;  // global gradient-norm clip, 0 for none
  uint64_t seed = 1;

  // Output.
  std::string out_dir = "runs/copy";                       // model.safetensors, loss.svg, attention/*.svg
  std::string metrics_path;                                // one JSON object per logging step
  int64_t log_every = 20, eval_every = 0, save_every = 0;  // 0: evaluate / save only at the end
  int64_t keep_last = 0;      // also keep the last this many saves as model-step-N.safetensors (average.h)
  int64_t stop_after = 0;     // stop after this step, as an interruption would (0: run to the end)
  int64_t resume_epochs = 0;  // resuming: train to this many epochs instead of the checkpoint's (0: its own)
  int64_t beam = 1;           // for the final translation evaluation
  bool quiet = false;         // no progress output
  // Profile a few steps after warm-up (transformer/train/step_profile.h), print the profiler's table
  // and write the Chrome trace here ("": no profiling).
  std::string profile_path;
};

/// A TrainOptions field train() cannot use. what(): "train: <field> <requirement>", e.g.
/// "train: epochs must be at least 1, got 0"; field() and requirement() separately, so a front end
/// can say it in its own terms (the program names its flag, --epochs).
class TrainOptionError : public ValueError {
 public:
  TrainOptionError(const std::string& field, const std::string& requirement)
      : ValueError("train: " + field + " " + requirement), field_(field), requirement_(requirement) {}
  const std::string& field() const { return field_; }
  const std::string& requirement() const { return requirement_; }

 private:
  std::string field_, requirement_;
};

/// A training step whose loss or gradient norm is NaN or infinite: the run has diverged. Raised
/// before the optimizer's update, so the parameters are still those of the step before.
struct NonFiniteError : Error {
  using Error::Error;
};

/// The defaults of a task: the copy task as the Annotated Transformer sets it up (N 2, h 8,
/// batch 80, 20 batches an epoch, lr 0.5, no label smoothing) at d_model 128, with 30 epochs and
/// warmup 200 rather than 20 and 400 (see TrainOptions::epochs); toy
/// translation with label smoothing 0.1. ValueError for an unknown task.
TrainOptions default_train_options(const std::string& task, Architecture arch = Architecture::EncoderDecoder);

/// The tasks an architecture trains on, the first its default: encoder-decoder {copy, toy-translation,
/// corpus}, decoder-only {toy-lm, toy-translation}, encoder-only (filled in by its trainer).
std::vector<std::string> architecture_tasks(Architecture arch);

struct TrainReport {
  int64_t first_step = 1, steps = 0;  // steps run in this call: first_step .. first_step + steps - 1
  double train_seconds = 0;           // the steps alone, without evaluation and saving
  int64_t target_tokens = 0;
  double tokens_per_second = 0;
  double padding = 0;          // of the token slots computed (source and target), the fraction that was padding
  std::vector<double> losses;  // each step's training loss (label-smoothed if smoothing is on)
  double valid_loss = 0;
  std::optional<double> entropy_floor;  // decoder-only toy-lm: the grammar's entropy on the validation sentences
  int64_t copy_exact_match = -1;        // of 100 fresh sequences (copy task)
  std::optional<TranslationReport> valid_translation, test_translation;
  std::string checkpoint_path;
  /// The lines the run prints once trained (where it saved, the validation loss, BLEU and exact
  /// match, ...), kept also when quiet: what a front end shows when it hides the progress.
  std::vector<std::string> summary;
};

/// The settings of one optimisation step (the paper's section 5; clipping is not in the paper):
struct StepOptions {
  double lr = 0;             // this step's learning rate (the warmup schedule's value)
  CrossEntropyOptions loss;  // padding ignored, label smoothing (section 5.4)
  double clip = 0;           // global gradient-norm clip, 0 for none
};

/// Zero the gradients; for each piece of the batch forward (teacher-forced), loss, backward; clip,
/// Adam's update. The pieces (split_by_length) are one batch padded in parts: piece i's mean loss
/// per target token counts with weight ntokens_i / sum of ntokens, so the step's loss and gradient
/// are those of the whole batch, the mean over all its target tokens. Returns that loss
/// (label-smoothed if smoothing is on), measured before the update. NonFiniteError, before the
/// update, if a loss or the gradients' global norm is not finite.
double train_step(EncoderDecoder& model, Adam& adam, const std::vector<Batch>& pieces, const StepOptions& options);

/// Trains, evaluating at the end (and every eval_every steps), saving out_dir/model.safetensors
/// at the end (and every save_every steps). With resume_path, continues the run saved there: the
/// checkpoint's model, optimizer, data position and generators, and its options except the
/// output ones (out_dir, metrics_path, log_every, quiet, stop_after), so the losses that follow
/// equal those the uninterrupted run would have had; resume_epochs, if not 0, moves the end of the
/// run (a TrainOptionError for "epochs" if the checkpoint is already past it). A TrainOptionError
/// for an option out of range, or for a model option (d_model, ..., max_len) too small for the
/// task's data (max_len below its longest sentence), before any training.
/// Dispatches on the architecture (options.arch, or the resumed checkpoint's config.arch):
/// decoder-only to train_decoder_only (lm_trainer.h), encoder-only to train_encoder_only.
TrainReport train(const TrainOptions& options, const std::string& resume_path = "");

/// The encoder-only (BERT-style) trainer: the hook its branch fills in (encoder_only_trainer.cpp).
TrainReport train_encoder_only(const TrainOptions& options, const std::string& resume_path);
/// A TrainOptionError for an option out of range (every architecture's trainer checks with it).
void validate_train_options(const TrainOptions& options);
/// The decoder-only (GPT-style) trainer (lm_trainer.cpp).
TrainReport train_decoder_only(const TrainOptions& options, const std::string& resume_path);

/// TrainOptions as checkpoint state entries ("options.lr", ...) and back. The entries hold every
/// option, the output ones too (out_dir, metrics_path, log_every, stop_after, quiet), and the
/// thread count in use ("options.threads"); reading back takes those a resumed run keeps.
std::map<std::string, std::string> options_to_state(const TrainOptions& options);
TrainOptions options_from_state(const std::map<std::string, std::string>& state, const std::string& source);

}  // namespace gradformer
