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

#include "autograd/fused.h"
#include "autograd/variable.h"
#include "nn/module.h"
#include "tensor/random.h"
#include "transformer/data/batch.h"
#include "transformer/data/batch_stream.h"
#include "transformer/data/lm_batch.h"
#include "transformer/train/checkpoint.h"
#include "transformer/train/options.h"

namespace gradformer {

struct TrainReport;

/// One padded rectangle of a batch: its forward pass, and the tokens its loss counts.
struct Piece {
  std::function<Variable()> loss;  // the mean loss per scored token (label smoothing as the task was asked)
  int64_t scored = 0;              // tokens scored (for a classifier: sentences)
};

/// One optimisation step's data: one piece, or several length-sorted ones whose gradients add up
/// to the whole batch's (trainer.h, train_step).
struct TrainBatch {
  std::vector<Piece> pieces;
  int64_t slots = 0, real = 0;  // the token slots computed, and how many of them held real tokens
};

class TrainingTask {
 public:
  virtual ~TrainingTask() = default;
  virtual Module& model() = 0;
  virtual Generator& dropout_generator() = 0;
  virtual int64_t d_model() const = 0;  // for the warmup schedule
  /// "22443 parameters (d_model 32, 1 layer, 2 heads)"
  virtual std::string describe() = 0;
  /// Batches in one epoch (a pass over the training data, or the task's fixed count of fresh batches).
  virtual int64_t batches_per_epoch() const = 0;
  virtual TrainBatch next_batch() = 0;
  /// Where the data stands ("data.*" entries), and its inverse (resuming).
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

// ---- each architecture's training forward pass ---------------------------------------------------

/// The batch through the encoder-decoder, teacher-forced: logits [B, T, V_tgt] for tgt_out, with
/// the source masked where it is padding (Vocab::pad) and the target also where it is the future:
///   model.forward(src, tgt_in, padding_mask(src), target_mask(tgt_in))
Variable teacher_forced_logits(const EncoderDecoder& model, const Batch& batch);
/// An encoder-decoder batch, padded as `pieces`, for train_step: each piece's loss the
/// cross-entropy of its target tokens (padding ignored, label smoothing as `loss` says, section
/// 5.4), its token slots counted on both sides.
TrainBatch translation_batch(const EncoderDecoder& model, const std::vector<Batch>& pieces,
                             const CrossEntropyOptions& loss);
/// The causal language-modelling loss: mean cross-entropy of the scored targets (label smoothing
/// optional), the model run under the causal mask AND the padding mask of the inputs.
Variable lm_loss(const DecoderOnly& model, const LmBatch& batch, double label_smoothing = 0);

/// "N parameters (d_model D, L layers, H heads)".
std::string model_summary(const Module& model, int64_t d_model, int64_t layers, int64_t heads);

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
  std::string describe() override {
    return model_summary(*model_, model_->config().d_model, model_->config().layers, model_->config().heads);
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
