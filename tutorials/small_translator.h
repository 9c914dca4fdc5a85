// A small trained translator for the chapters that look at a trained model before chapter 11 explains
// training (9, the decoder, and 12, decoding): chapter 14's toy French -> English task
// (transformer/data/toy_corpus.h) at a fraction of its size, trained by the library's loop
// (transformer/train/trainer.h) in a few seconds, the same model in both chapters.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "transformer/store/checkpoint.h"
#include "transformer/train/trainer.h"

namespace tutorial {

struct SmallTranslator {
  gradformer::LoadedCheckpoint loaded;                    // loaded.model, and loaded.info's two vocabularies
  gradformer::TrainReport report;                         // what the run measured (test_translation: BLEU, exact match)
  std::map<int64_t, gradformer::LoadedCheckpoint> early;  // the same run at each step asked for
};

/// d_model 64, one encoder and one decoder layer, 4 heads, d_ff 128; 600 steps of 64 sentence pairs,
/// the learning rate warming up for 200 of them. Chapter 14's model is 2 layers at d_model 128, 1884 steps.
/// With early_steps, also the model as it was at each of those steps (saving changes nothing in the run).
inline SmallTranslator train_small_translator(const std::vector<int64_t>& early_steps = {}) {
  using namespace gradformer;
  TrainOptions options = default_train_options("toy-translation");
  options.d_model = 64, options.d_ff = 128, options.heads = 4, options.layers = 1;
  options.steps = 600, options.warmup = 200, options.eval_every = 0, options.quiet = true;
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("gradformer-small-" + std::to_string(std::random_device{}()));
  options.out_dir = dir.string();
  int64_t every = 0;  // a checkpoint every `every` steps, all kept: every step asked for is a multiple
  for (int64_t step : early_steps) every = std::gcd(every, step);
  if (every > 0) options.save_every = every, options.keep_last = options.steps / every;
  TrainReport report = train(options);  // writes the checkpoint, which we read back
  SmallTranslator translator{load_checkpoint(report.checkpoint_path), std::move(report), {}};
  for (int64_t step : early_steps)
    translator.early.emplace(step,
                             load_checkpoint((dir / ("model-step-" + std::to_string(step) + ".safetensors")).string()));
  std::filesystem::remove_all(dir);
  return translator;
}

}  // namespace tutorial
