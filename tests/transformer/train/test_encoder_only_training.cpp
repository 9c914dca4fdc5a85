// Encoder-only training (train() in transformer/train/trainer.h, with arch encoder-only; the task in
// transformer/train/encoder_only_task.cpp) and its checkpoints: an interrupted MLM or classification
// run resumed from its checkpoint continues bit for bit, a fine-tuning run starts from the
// pre-trained body, and a checkpoint of the wrong kind is refused.
#include <cmath>
#include <filesystem>

#include "catch.h"
#include "training_helpers.h"
#include "transformer/data/mlm.h"
#include "transformer/store/checkpoint.h"
#include "transformer/train/trainer.h"

using namespace gradformer;
using test::TempDir;

namespace {

// d 16, 1 layer, 8 sentences a batch, 6 steps; dropout and clipping on, so their state must survive.
TrainOptions tiny(const std::string& task, const TempDir& dir, const std::string& name) {
  TrainOptions o = default_train_options(task, Architecture::EncoderOnly);
  o.d_model = 16, o.d_ff = 32, o.heads = 2, o.layers = 1, o.dropout = 0.1, o.clip = 1.0;
  o.steps = 6, o.batch_size = 8, o.warmup = 3, o.seed = 5, o.quiet = true;
  o.out_dir = dir / name;
  return o;
}

std::vector<double> tail(const std::vector<double>& v, size_t from) {
  return {v.begin() + static_cast<long>(from), v.end()};
}

}  // namespace

TEST_CASE("train: encoder-only MLM and classification runs resumed from a checkpoint continue bit for bit") {
  TempDir dir("resume-encoder-only");
  const TrainReport pre = train(tiny("mlm", dir, "pre"));
  for (const std::string task : {"mlm", "classify"})
    for (const bool from_pretrained : {false, true}) {
      if (task == "mlm" && from_pretrained) continue;
      INFO(task << (from_pretrained ? " from the pre-trained checkpoint" : ""));
      TrainOptions o = tiny(task, dir, task + "-full");
      if (from_pretrained) o.init_path = pre.checkpoint_path;
      const TrainReport full = train(o);
      REQUIRE(full.losses.size() == 6);
      o.out_dir = dir / (task + "-part"), o.stop_after = 2;
      const TrainReport part = train(o);
      REQUIRE(part.steps == 2);
      CHECK(test::same_bits(part.losses, {full.losses[0], full.losses[1]}));
      TrainOptions again = tiny(task, dir, task + "-resumed");
      again.seed = 99;  // the checkpoint's options win
      const TrainReport resumed = train(again, part.checkpoint_path);
      CHECK(resumed.first_step == 3);
      CHECK(test::same_bits(resumed.losses, tail(full.losses, 2)));
      CHECK(resumed.valid_accuracy == full.valid_accuracy);
      const LoadedEncoderOnly a = load_encoder_only_checkpoint(full.checkpoint_path),
                              b = load_encoder_only_checkpoint(resumed.checkpoint_path);
      for (const auto& [name, t] : a.model->state_dict()) CHECK(test::bitwise_equal(t, b.model->state_dict().at(name)));
    }
}

TEST_CASE(
    "train: encoder-only fine-tuning starts from the pre-trained body, with the classifier drawn from its own seed") {
  TempDir dir("init-encoder-only");
  const TrainReport pre = train(tiny("mlm", dir, "pre"));
  TrainOptions o = tiny("classify", dir, "fine");
  o.init_path = pre.checkpoint_path, o.steps = 1, o.stop_after = 0;
  // lr tiny: one step leaves the body within 1e-3 of the pre-trained one, which a fresh draw is not.
  o.lr = 1e-9;
  const TrainReport fine = train(o);
  const LoadedEncoderOnly p = load_encoder_only_checkpoint(pre.checkpoint_path),
                          f = load_encoder_only_checkpoint(fine.checkpoint_path);
  const Tensor a = p.model->tok_embed->weight.value(), b = f.model->tok_embed->weight.value();
  CHECK(max(maximum(sub(a, b), sub(b, a))).item() < 1e-3);
  CHECK(f.info.vocab == p.info.vocab);
  CHECK(f.info.labels == negation_labels());
}

TEST_CASE("checkpoints: each loader refuses the other architecture by name") {
  TempDir dir("arch-encoder-only");
  const TrainReport enc = train(tiny("mlm", dir, "enc"));
  CHECK_THROWS_MSG(load_checkpoint(enc.checkpoint_path), CheckpointError,
                   "model.safetensors: an encoder-only checkpoint (config.arch), but this needs an encoder-decoder or "
                   "decoder-only one");
  TrainOptions copy = default_train_options("copy");
  copy.d_model = 16, copy.d_ff = 32, copy.heads = 2, copy.layers = 1, copy.epochs = 1, copy.batches_per_epoch = 1;
  copy.quiet = true, copy.out_dir = dir / "copy";
  const TrainReport ed = train(copy);
  CHECK_THROWS_MSG(
      load_encoder_only_checkpoint(ed.checkpoint_path, "classify"), CheckpointError,
      "model.safetensors: an encoder-decoder checkpoint (config.arch), but classify needs an encoder-only one");
}

TEST_CASE("checkpoints: an encoder-only checkpoint with a NaN parameter is refused, as the others are") {
  TempDir dir("nan-encoder-only");
  TrainOptions o = tiny("classify", dir, "cls");
  o.steps = 1;
  const TrainReport cls = train(o);
  SafetensorsFile file = load_safetensors(cls.checkpoint_path);
  Tensor& weight = file.tensors.at("classifier.weight");
  weight = full(weight.shape(), std::nan(""));
  const std::string bad = dir / "nan.safetensors";
  save_safetensors(bad, file.tensors, file.metadata);
  CHECK_THROWS_MSG(load_encoder_only_checkpoint(bad, "classify"), CheckpointError,
                   bad + ": a non-finite parameter (classifier.weight holds nan): the model is unusable");
}

TEST_CASE("train: encoder-only options out of range or not used by the task are TrainOptionErrors naming the field") {
  TempDir dir("options-encoder-only");
  TrainOptions o = tiny("classify", dir, "x");
  o.labelled = 0;
  CHECK_THROWS_MSG(train(o), TrainOptionError, "train: labelled must be at least 1, got 0");
  o = tiny("mlm", dir, "x"), o.init_path = "a.safetensors";  // the program says "--init is for --task classify"
  CHECK_THROWS_MSG(train(o), TrainOptionError, "train: init_path is not used by encoder-only mlm");
  o = tiny("mlm", dir, "x"), o.labelled = 8;  // only classify on the toy corpus reads it
  CHECK_THROWS_MSG(train(o), TrainOptionError, "train: labelled is not used by encoder-only mlm");
  o = tiny("mlm", dir, "x"), o.steps = -1;  // 0 now means epochs x batches per epoch
  CHECK_THROWS_MSG(train(o), TrainOptionError, "train: steps must be at least 0, got -1");
  CHECK(!std::filesystem::exists(dir / "x"));  // nothing written
}

TEST_CASE("train: the options with arch encoder-only train the encoder-only model, and so does a resume") {
  TempDir dir("dispatch-encoder-only");
  TrainOptions o = default_train_options("mlm", Architecture::EncoderOnly);
  o.d_model = 16, o.d_ff = 32, o.heads = 2, o.layers = 1, o.batch_size = 8, o.warmup = 3;
  o.quiet = true, o.out_dir = dir / "run", o.stop_after = 2;
  const TrainReport part = train(o);
  CHECK(part.arch == Architecture::EncoderOnly);
  CHECK(part.steps == 2);
  CHECK(load_encoder_only_checkpoint(part.checkpoint_path).info.state.at("options.task") == "mlm");
  // The options of another architecture: the architecture comes from the checkpoint.
  TrainOptions again = default_train_options("copy");
  again.stop_after = 3, again.quiet = true, again.out_dir = dir / "resumed";
  const TrainReport resumed = train(again, part.checkpoint_path);
  CHECK(resumed.arch == Architecture::EncoderOnly);
  CHECK(resumed.task == "mlm");
  CHECK(resumed.first_step == 3);
  CHECK(resumed.steps == 1);
}
