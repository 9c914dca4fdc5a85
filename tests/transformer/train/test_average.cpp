// Checkpoint averaging (transformer/store/average.h): the mean of each parameter over a run's last
// checkpoints, the refusals of checkpoints that do not belong together, and the kept checkpoints
// a run leaves for it.
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "catch.h"
#include "tensor/support/files.h"
#include "training_helpers.h"
#include "transformer/evaluate/evaluate.h"
#include "transformer/model/decoder_only.h"
#include "transformer/store/average.h"
#include "transformer/store/checkpoint.h"
#include "transformer/train/trainer.h"

using namespace gradformer;
using test::TempDir;

namespace {

const Vocab kFrench = Vocab::build({split_words("le chat noir dort")});
const Vocab kEnglish = Vocab::build({split_words("the black cat sleeps")});

TransformerConfig tiny_config(int64_t d_model = 8) {
  return {.src_vocab = kFrench.size(),
          .tgt_vocab = kEnglish.size(),
          .d_model = d_model,
          .d_ff = 16,
          .heads = 2,
          .layers = 1,
          .dropout = 0.1,
          .max_len = 16};
}

// A checkpoint of a tiny model drawn with `seed`, with optimizer and training state of its own, as a
// run would have written it at `step`.
std::string tiny_checkpoint(const TempDir& dir, const std::string& name, uint64_t seed, int64_t step,
                            const TransformerConfig& config = tiny_config(), const Vocab& english = kEnglish) {
  const EncoderDecoder model(config, seed);
  const StateDict optimizer = {{"adam.m.0", full({3}, static_cast<double>(step))}};
  const std::string path = dir / name;
  save_checkpoint(path, model, optimizer, {config, kFrench, english, {{"train.step", std::to_string(step)}}});
  return path;
}

}  // namespace

TEST_CASE("average_checkpoints: each parameter is the elementwise mean of the checkpoints', no optimizer state") {
  TempDir dir("average");
  const std::vector<std::string> paths = {tiny_checkpoint(dir, "a.safetensors", 1, 100),
                                          tiny_checkpoint(dir, "b.safetensors", 2, 200),
                                          tiny_checkpoint(dir, "c.safetensors", 3, 300)};
  average_checkpoints(paths, dir / "avg.safetensors");

  std::vector<SafetensorsFile> inputs;
  for (const std::string& path : paths) inputs.push_back(load_safetensors(path));
  const SafetensorsFile avg = load_safetensors(dir / "avg.safetensors");
  // Every parameter, none of the optimizer's.
  size_t parameters = 0;
  for (const auto& [name, t] : inputs[0].tensors) parameters += name.rfind("optimizer.", 0) != 0;
  CHECK(avg.tensors.size() == parameters);
  CHECK(avg.tensors.count("optimizer.adam.m.0") == 0);
  // The mean, element by element, from the files' floats (a sum of three floats is exact in double).
  for (const auto& [name, mean] : avg.tensors) {
    INFO(name);
    REQUIRE(mean.dtype() == DType::Float32);
    const std::vector<float> got = mean.to_vector<float>();
    const std::vector<float> a = inputs[0].tensors.at(name).to_vector<float>(),
                             b = inputs[1].tensors.at(name).to_vector<float>(),
                             c = inputs[2].tensors.at(name).to_vector<float>();
    REQUIRE(got.size() == a.size());
    size_t wrong = 0;
    for (size_t i = 0; i < got.size(); ++i)
      wrong += got[i] != static_cast<float>((static_cast<double>(a[i]) + b[i] + c[i]) / 3);
    CHECK(wrong == 0);
  }
  // The seeds drew different weights: the mean is none of them.
  CHECK_FALSE(test::bitwise_equal(avg.tensors.at("generator.weight"), inputs[0].tensors.at("generator.weight")));
  // The configuration and vocabularies kept, each file's training state dropped, the sources named.
  CHECK(avg.metadata.at("config.d_model") == "8");
  CHECK(avg.metadata.at("vocab.target") == inputs[0].metadata.at("vocab.target"));
  CHECK(avg.metadata.count("state.train.step") == 0);
  CHECK(avg.metadata.at("state.averaged") == "a.safetensors\nb.safetensors\nc.safetensors\n");
}

TEST_CASE("average_checkpoints: hand values, and the average of a checkpoint with itself is that checkpoint") {
  TempDir dir("average-hand");
  // generator.bias all 1 in one checkpoint and all 4 in the other: the mean is 2.5 everywhere.
  for (const auto& [name, bias] : {std::pair{"one.safetensors", 1.0}, std::pair{"four.safetensors", 4.0}}) {
    EncoderDecoder model(tiny_config(), 1);
    StateDict state = model.state_dict();
    state.at("generator.bias") = full({kEnglish.size()}, bias);
    model.load_state_dict(state);
    save_checkpoint(dir / name, model, {}, {tiny_config(), kFrench, kEnglish, {}});
  }
  average_checkpoints({dir / "one.safetensors", dir / "four.safetensors"}, dir / "mean.safetensors");
  const std::vector<float> bias =
      load_safetensors(dir / "mean.safetensors").tensors.at("generator.bias").to_vector<float>();
  CHECK(bias == std::vector<float>(static_cast<size_t>(kEnglish.size()), 2.5f));

  // It loads and translates; averaged with itself, a checkpoint translates as it did.
  const std::string a = tiny_checkpoint(dir, "a.safetensors", 5, 10);
  average_checkpoints({a, a}, dir / "same.safetensors");
  LoadedCheckpoint original = load_checkpoint(a), same = load_checkpoint(dir / "same.safetensors");
  for (const auto& [name, t] : original.model->state_dict())
    CHECK(test::bitwise_equal(t, same.model->state_dict().at(name)));
  CHECK(same.optimizer_state.empty());
  const std::vector<std::string> source = split_words("le chat noir dort");
  CHECK(translate(*same.model, source, kFrench, kEnglish) == translate(*original.model, source, kFrench, kEnglish));
  CHECK(translate(*same.model, source, kFrench, kEnglish, /*beam=*/3) ==
        translate(*original.model, source, kFrench, kEnglish, 3));
  // A resumed run needs the training state the average does not have.
  CHECK_THROWS_AS(train(default_train_options("copy"), dir / "same.safetensors"), CheckpointError);
}

TEST_CASE("average_checkpoints refuses checkpoints of other configurations, vocabularies or architectures by name") {
  TempDir dir("average-refuse");
  const std::string base = tiny_checkpoint(dir, "base.safetensors", 1, 10);
  const std::string wider = tiny_checkpoint(dir, "wider.safetensors", 1, 10, tiny_config(/*d_model=*/16));
  CHECK_THROWS_MSG(average_checkpoints({base, wider}, dir / "out.safetensors"), CheckpointError,
                   "average: " + wider + " differs from " + base + " in config.d_model (16, not 8)");
  // Same sizes, other words: the vocabulary differs, not its size.
  const Vocab other = Vocab::build({split_words("a white dog runs")});
  REQUIRE(other.size() == kEnglish.size());
  const std::string renamed = tiny_checkpoint(dir, "renamed.safetensors", 1, 10, tiny_config(), other);
  CHECK_THROWS_MSG(average_checkpoints({base, renamed}, dir / "out.safetensors"), CheckpointError,
                   "in vocab.target (as many lines, other entries)");
  const Vocab longer = Vocab::build({split_words("the black cat sleeps well")});
  TransformerConfig longer_config = tiny_config();
  longer_config.tgt_vocab = longer.size();
  const std::string bigger = tiny_checkpoint(dir, "bigger.safetensors", 1, 10, longer_config, longer);
  CHECK_THROWS_MSG(average_checkpoints({base, bigger}, dir / "out.safetensors"), CheckpointError,
                   "in config.tgt_vocab (9, not 8)");

  // A decoder-only model of the same sizes: the architecture is the first difference.
  TransformerConfig lm = tiny_config();
  lm.arch = Architecture::DecoderOnly;
  lm.src_vocab = lm.tgt_vocab = kEnglish.size();
  const DecoderOnly decoder_only(lm, 1);
  save_checkpoint(dir / "lm.safetensors", decoder_only, lm, {}, {lm, kEnglish, kEnglish, {}});
  CHECK_THROWS_MSG(average_checkpoints({base, dir / "lm.safetensors"}, dir / "out.safetensors"), CheckpointError,
                   "in config.arch (decoder-only, not encoder-decoder)");

  save_safetensors(dir / "plain.safetensors", {{"w", full({2}, 1.0)}});
  CHECK_THROWS_MSG(average_checkpoints({dir / "plain.safetensors", base}, dir / "out.safetensors"), CheckpointError,
                   "plain.safetensors: not a gradformer checkpoint");
  CHECK_THROWS_MSG(average_checkpoints({}, dir / "out.safetensors"), ValueError, "average: no checkpoints to average");
  CHECK_FALSE(std::filesystem::exists(dir / "out.safetensors"));
}

TEST_CASE("keep_checkpoint keeps the newest keep_last by step number, and train() keeps its last saves") {
  TempDir dir("keep");
  const std::string model = tiny_checkpoint(dir, "model.safetensors", 1, 9);
  for (const int64_t step : {9, 10, 100}) keep_checkpoint(model, dir.path().string(), step, /*keep_last=*/2);
  // 100 after 10: by number, not by name ("100" < "9" as text).
  CHECK(kept_checkpoints(dir.path().string()) ==
        std::vector<std::string>{dir / "model-step-10.safetensors", dir / "model-step-100.safetensors"});
  keep_checkpoint(model, dir.path().string(), 101, /*keep_last=*/0);
  CHECK_FALSE(std::filesystem::exists(dir / "model-step-101.safetensors"));

  // A run of 5 steps saving every 2 steps: saves at 2, 4 and 5 (the end); the last two are kept, the
  // last of them the run's final checkpoint.
  TrainOptions o = default_train_options("copy");
  o.d_model = 16, o.d_ff = 32, o.heads = 2, o.layers = 1, o.max_len = 16, o.batch_size = 8;
  o.epochs = 1, o.batches_per_epoch = 5, o.save_every = 2, o.keep_last = 2, o.quiet = true;
  o.out_dir = dir / "run";
  train(o);
  CHECK(kept_checkpoints(o.out_dir) ==
        std::vector<std::string>{dir / "run/model-step-4.safetensors", dir / "run/model-step-5.safetensors"});
  CHECK(test::read_bytes(dir / "run/model-step-5.safetensors") == test::read_bytes(dir / "run/model.safetensors"));
  CHECK(load_checkpoint(dir / "run/model-step-4.safetensors").info.state.at("train.step") == "4");
  CHECK(load_checkpoint(dir / "run/model.safetensors").info.state.at("options.keep_last") == "2");
  average_checkpoints(kept_checkpoints(o.out_dir), dir / "run/average.safetensors");
  CHECK(load_checkpoint(dir / "run/average.safetensors").model->config().d_model == 16);
}

TEST_CASE("average_checkpoints refuses to write over one of its inputs, however the path is spelled") {
  TempDir dir("average-over");
  const std::string a = tiny_checkpoint(dir, "a.safetensors", 1, 10), b = tiny_checkpoint(dir, "b.safetensors", 2, 20);
  const std::string before = test::read_bytes(a);
  const std::string dotted = (dir.path() / "." / "a.safetensors").string(),
                    climbed = (dir.path() / "sub" / ".." / "a.safetensors").string();
  std::filesystem::create_directories(dir.path() / "sub");
  for (const std::string& out : {a, dotted, climbed}) {
    INFO(out);
    CHECK_THROWS_MSG(average_checkpoints({a, b}, out), ValueError,
                     "average: the output " + out + " is the checkpoint " + a +
                         " being averaged; writing the average there would replace it");
  }
  // A link to an input is that input too.
  std::filesystem::create_symlink(a, dir / "link.safetensors");
  CHECK_THROWS_MSG(average_checkpoints({b, a}, dir / "link.safetensors"), ValueError, "is the checkpoint " + a);
  CHECK(input_written_over({a, b}, dotted) == a);
  CHECK(input_written_over({a, b}, dir / "c.safetensors").empty());
  // The resumable checkpoint is as it was: its optimizer and training state are still there.
  CHECK(test::read_bytes(a) == before);
}

TEST_CASE("average_checkpoints reads its inputs as the loaders do: what translate refuses, average refuses") {
  TempDir dir("average-checked");
  const std::string good = tiny_checkpoint(dir, "good.safetensors", 1, 10);
  const SafetensorsFile file = load_safetensors(good);
  auto crafted = [&](const std::string& name, auto change) {
    SafetensorsFile edited = file;
    change(edited);
    save_safetensors(dir / name, edited.tensors, edited.metadata);
    return dir / name;
  };
  // Metadata claiming a model far larger than the tensors: refused from the header, as translate does.
  const std::string huge =
      crafted("huge.safetensors", [](SafetensorsFile& f) { f.metadata["config.d_model"] = "8192"; });
  CHECK_THROWS_MSG(average_checkpoints({huge, huge}, dir / "out.safetensors"), CheckpointError,
                   "average: " + huge +
                       ": the tensors do not fit the stored configuration:\n  mismatched: src_embed.weight is [8, "
                       "8192] float32 by the configuration, [8, 8] float32 in the file");
  // A non-finite parameter, a vocabulary of another size, a tensor the model does not have.
  const std::string nan = crafted("nan.safetensors", [](SafetensorsFile& f) {
    f.tensors.at("generator.bias") = full({kEnglish.size()}, std::nan(""));
  });
  CHECK_THROWS_MSG(average_checkpoints({good, nan}, dir / "out.safetensors"), CheckpointError,
                   "average: " + nan + ": a non-finite parameter (generator.bias holds nan)");
  const std::string vocab =
      crafted("vocab.safetensors", [](SafetensorsFile& f) { f.metadata["vocab.target"] = Vocab().to_text(); });
  CHECK_THROWS_MSG(average_checkpoints({vocab, good}, dir / "out.safetensors"), CheckpointError,
                   "average: " + vocab + ": vocabularies of 8 and 4 tokens do not match the model's 8 and 8");
  const std::string extra = crafted("extra.safetensors", [](SafetensorsFile& f) { f.tensors["junk"] = zeros({2}); });
  CHECK_THROWS_MSG(average_checkpoints({good, extra}, dir / "out.safetensors"), CheckpointError,
                   "average: " + extra + ": the tensors do not fit the stored configuration:\n  unexpected: junk [2]");
  CHECK_FALSE(std::filesystem::exists(dir / "out.safetensors"));
}

TEST_CASE("average_checkpoints averages decoder-only and encoder-only checkpoints, which their loaders load") {
  TempDir dir("average-family");
  TransformerConfig lm = tiny_config();
  lm.arch = Architecture::DecoderOnly, lm.src_vocab = lm.tgt_vocab = kEnglish.size();
  for (const uint64_t seed : {1, 2})
    save_checkpoint(dir / message("lm", seed, ".safetensors"), DecoderOnly(lm, seed), lm, {},
                    {lm, kEnglish, kEnglish, {}});
  average_checkpoints({dir / "lm1.safetensors", dir / "lm2.safetensors"}, dir / "lm.safetensors");
  const LoadedDecoderOnly averaged_lm = load_decoder_only_checkpoint(dir / "lm.safetensors");
  const Tensor lm1 = load_decoder_only_checkpoint(dir / "lm1.safetensors").model->state_dict().at("embed.weight"),
               lm2 = load_decoder_only_checkpoint(dir / "lm2.safetensors").model->state_dict().at("embed.weight");
  CHECK(averaged_lm.model->state_dict().at("embed.weight").to_vector<float>() ==
        ((lm1.to(DType::Float64) + lm2.to(DType::Float64)) / 2.0).to(DType::Float32).to_vector<float>());

  EncoderOnlyConfig eo;
  eo.vocab = kEnglish.size(), eo.d_model = 8, eo.d_ff = 16, eo.heads = 2, eo.layers = 1, eo.max_len = 16;
  eo.classes = 2;
  for (const uint64_t seed : {1, 2})
    save_encoder_only_checkpoint(dir / message("eo", seed, ".safetensors"), EncoderOnly(eo, seed), {},
                                 {eo, kEnglish, {"no", "yes"}, {}});
  average_checkpoints({dir / "eo1.safetensors", dir / "eo2.safetensors"}, dir / "eo.safetensors");
  const LoadedEncoderOnly averaged_eo = load_encoder_only_checkpoint(dir / "eo.safetensors");
  CHECK(averaged_eo.info.labels == std::vector<std::string>{"no", "yes"});
  CHECK(averaged_eo.info.state.at("averaged") == "eo1.safetensors\neo2.safetensors\n");
  CHECK(averaged_eo.optimizer_state.empty());
}
