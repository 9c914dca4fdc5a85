#include "transformer/train/lm_trainer.h"

namespace gradformer {

TrainOptions default_decoder_only_options(const std::string& task) {
  if (task != "toy-lm" && task != "toy-translation")
    throw ValueError(message("train: decoder-only has no task '", task, "' (toy-lm, toy-translation)"));
  TrainOptions o;
  o.arch = Architecture::DecoderOnly;
  o.task = task;
  o.out_dir = "runs/" + task + (task == "toy-translation" ? "-decoder-only" : "");
  o.norm = NormPlacement::Pre;
  o.tie_embeddings = true;
  o.heads = 4;
  o.batch_size = 64;
  o.lr = 1.0;
  o.warmup = 400;
  o.clip = 1.0;
  o.log_every = 50;
  o.eval_every = 500;
  return o;
}

TrainReport train_decoder_only(const TrainOptions&, const std::string&) {
  throw TrainOptionError("arch", "decoder-only training is being built on this branch");
}

}  // namespace gradformer
