// Training the encoder-only model: pre-training with the masked-LM objective on the toy corpus's
// French sentences (no labels needed), and fine-tuning a classifier on a labelled few of them
// (is the sentence negated?), from scratch or from a pre-trained checkpoint.
// `gradformer train --arch encoder-only --task mlm|classify` is a thin layer over this.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "nn/adam.h"
#include "transformer/data/mlm.h"
#include "transformer/model/encoder_only.h"

namespace gradformer {

struct EncoderOnlyTrainOptions {
  std::string task = "mlm";  // "mlm" (pre-training) or "classify" (fine-tuning)
  std::string init_path;     // classify: start from this encoder-only checkpoint (empty: from scratch)

  // The model (ignored with init_path or when resuming: the checkpoint's configuration wins).
  int64_t d_model = 64, d_ff = 256, heads = 4, layers = 2;
  double dropout = 0.1;
  NormPlacement norm = NormPlacement::Post;
  Positions positions = Positions::Sinusoidal;
  Activation activation = Activation::GELU;
  bool tie_embeddings = true;
  int64_t max_len = 64;

  // Optimisation: Adam(0.9, 0.98, 1e-9) with the warmup schedule lr * d^-0.5 min(s^-0.5, s w^-1.5).
  int64_t steps = 1500;
  int64_t batch_size = 32;
  double lr = 1.0;
  int64_t warmup = 300;
  double clip = 1.0;
  int64_t labelled = 16;  // classify: the labelled training sentences (the first of the train split)
  uint64_t seed = 1;

  std::string out_dir = "runs/encoder-only-mlm";
  int64_t log_every = 100, save_every = 0, stop_after = 0;
  int64_t keep_last = 0;  // also keep the last this many saves as model-step-N.safetensors (average.h)
  bool quiet = false;
  // profile a few steps after warm-up (step_profile.h), print the table, write the Chrome trace here
  std::string profile_path;
};

/// The task's defaults: mlm as above; classify 20 steps of 16 sentences drawn from 16 labelled ones, lr 0.5,
/// warmup 10: few enough labels that pre-training shows (chapter 15).
/// ValueError for an unknown task.
EncoderOnlyTrainOptions default_encoder_only_options(const std::string& task);

struct EncoderOnlyReport {
  int64_t first_step = 1, steps = 0;
  std::vector<double> losses;  // each step's training loss
  double train_seconds = 0;
  double valid_loss = 0;      // mlm: over the chosen positions of the valid split; classify: cross-entropy
  double valid_accuracy = 0;  // mlm: original token recovered at chosen positions; classify: labels right
  double test_accuracy = 0;   // classify only
  std::string checkpoint_path;
  std::vector<std::string> summary;  // the lines printed once trained, kept also when quiet
};

/// Trains and evaluates, saving out_dir/model.safetensors at the end (and every save_every steps).
/// With resume_path, continues that run exactly (model, Adam, generators, step). TrainOptionError
/// (trainer.h) for an option out of range.
EncoderOnlyReport train_encoder_only(const EncoderOnlyTrainOptions& options, const std::string& resume_path = "");

/// Accuracy of the classifier on labelled sentences (eval mode, batches of 100).
double classify_accuracy(const EncoderOnly& model, const Vocab& vocab, const std::vector<LabelledSentence>& examples);
/// The predicted class of each sentence (tokens split on whitespace).
std::vector<int64_t> classify(const EncoderOnly& model, const Vocab& vocab,
                              const std::vector<std::vector<std::string>>& sentences);

/// The class names of the negation task, in label order.
std::vector<std::string> negation_labels();

}  // namespace gradformer
