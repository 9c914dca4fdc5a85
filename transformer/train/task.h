// What differs between the architectures and their tasks, behind the one interface the training
// loop (trainer.h) drives: the model, its batches and their loss, the validation loss, the
// evaluation at the end, and what its checkpoint holds besides the parameters. One implementation
// per architecture: encoder_decoder_task.cpp, decoder_only_task.cpp, encoder_only_task.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "autograd/variable.h"
#include "nn/module.h"
#include "tensor/random.h"
#include "transformer/data/batch_stream.h"
#include "transformer/evaluate/evaluate.h"
#include "transformer/store/checkpoint.h"
#include "transformer/train/forward.h"
#include "transformer/train/options.h"

namespace gradformer {

/// What a run did and measured: the training loop fills the first part, the task its own measures.
struct TrainReport {
  Architecture arch = Architecture::EncoderDecoder;
  std::string task;                   // what the model learnt, for the command that uses it
  bool own_data = false;              // trained on the user's files (data_path)
  int64_t first_step = 1, steps = 0;  // steps run in this call: first_step .. first_step + steps - 1
  double train_seconds = 0;           // the steps alone, without evaluation and saving
  int64_t scored_tokens = 0;          // the tokens (sentences, for a classifier) the loss counted
  double tokens_per_second = 0;       // of those
  double padding = 0;  // of the token slots computed (encoder-decoder: both sides), the fraction that was padding
  std::vector<double> losses;           // each step's training loss (label-smoothed if smoothing is on)
  double valid_loss = 0;                // per scored token, without label smoothing (0: no validation data)
  std::optional<double> entropy_floor;  // decoder-only toy-lm: the grammar's entropy on the validation sentences
  int64_t copy_exact_match = -1;        // of 100 fresh sequences (copy task)
  std::optional<TranslationReport> valid_translation, test_translation;
  double valid_accuracy = 0, test_accuracy = 0;  // encoder-only: MLM tokens recovered, or labels right
  std::string checkpoint_path;
  /// The lines the run prints once trained (where it saved, the validation loss, BLEU and exact
  /// match, ...), kept also when quiet: what a front end shows when it hides the progress.
  std::vector<std::string> summary;
};

class TrainingTask {
 public:
  virtual ~TrainingTask() = default;
  virtual Module& model() = 0;
  virtual Generator& dropout_generator() = 0;
  virtual int64_t d_model() const = 0;  // for the warmup schedule
  /// The model's configuration as the checkpoint's config.* entries.
  virtual std::map<std::string, std::string> configuration() const = 0;
  /// "22443 parameters (d_model 32, 1 layer, 2 heads)"
  virtual std::string describe() = 0;
  /// Batches in one epoch (a pass over the training data, or the task's fixed count of fresh batches).
  virtual int64_t batches_per_epoch() const = 0;
  virtual TrainBatch next_batch() = 0;
  /// Where the data stands (entries for the checkpoint's state), and its inverse (resuming).
  virtual std::map<std::string, std::string> data_state() const = 0;
  virtual void restore_data(const std::map<std::string, std::string>& state, const std::string& source) = 0;
  /// The mean loss per scored token of the validation data, without label smoothing, in eval mode
  /// (nullopt: the task has none).
  virtual std::optional<double> valid_loss() = 0;
  /// The end of the run: the task's measures (BLEU, accuracy, ...) and pictures, each line given to `result`.
  virtual void evaluate(TrainReport& report, const std::function<void(const std::string&)>& result) = 0;
  /// Writes the checkpoint: the parameters, `optimizer_state` and the `state` entries (options.*,
  /// train.*, data.*), with what the task adds (configuration, vocabularies, labels).
  virtual void save(const std::string& path, const StateDict& optimizer_state,
                    const std::map<std::string, std::string>& state) = 0;
};

/// What every task of one model type answers the same way: the model, its dropout generator and
/// sizes, and (for a task that sets them) the batches in an epoch and where its data stream stands.
template <class Model>
class ModelTask : public TrainingTask {
 public:
  int64_t batches_per_epoch() const override { return batches_per_epoch_; }
  std::map<std::string, std::string> data_state() const override { return stream_->state(); }
  void restore_data(const std::map<std::string, std::string>& state, const std::string& source) override {
    stream_->restore(state, source);
  }
  Module& model() override { return *model_; }
  Generator& dropout_generator() override { return *model_->dropout_generator(); }
  int64_t d_model() const override { return model_->config().d_model; }
  std::map<std::string, std::string> configuration() const override { return config_to_metadata(model_->config()); }
  std::string describe() override {
    const auto& c = model_->config();
    return message(model_->parameter_count(), " parameters (d_model ", c.d_model, ", ", counted(c.layers, "layer"),
                   ", ", counted(c.heads, "head"), ")");
  }

 protected:
  std::unique_ptr<Model> model_;
  Resumable* stream_ = nullptr;  // the task's stream of batches
  int64_t batches_per_epoch_ = 0;
};

/// The task of `options` (its architecture), with a new model, or with the model, vocabularies and
/// labels of `resumed` (whose data position the loop restores).
std::unique_ptr<TrainingTask> make_encoder_decoder_task(const TrainOptions& options, const CheckpointFile* resumed);
std::unique_ptr<TrainingTask> make_decoder_only_task(const TrainOptions& options, const CheckpointFile* resumed);
std::unique_ptr<TrainingTask> make_encoder_only_task(const TrainOptions& options, const CheckpointFile* resumed);

}  // namespace gradformer
