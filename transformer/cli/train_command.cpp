// gradformer train: every hyperparameter of the reference copy-task setup is a flag, with the
// task's defaults; --resume continues a saved run exactly.
#include <algorithm>
#include <cstring>
#include <iostream>

#include "transformer/cli/commands.h"
#include "transformer/cli/flags.h"
#include "transformer/train/trainer.h"

namespace gradformer {

// The task decides the defaults the help shows, so find it before declaring the flags.
static std::string task_in(int argc, char** argv) {
  for (int i = 2; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--task") && i + 1 < argc) return argv[i + 1];
    if (!std::strncmp(argv[i], "--task=", 7)) return argv[i] + 7;
    if (!std::strcmp(argv[i], "--data") || !std::strncmp(argv[i], "--data=", 7)) return "corpus";
  }
  return "copy";
}

// The flag that sets a TrainOptions field: its name with dashes, but for the paths and the output directory.
static std::string flag_of(const std::string& field) {
  if (field == "data_path") return "--data";
  if (field == "valid_path") return "--valid";
  if (field == "test_path") return "--test";
  if (field == "out_dir") return "--out";
  if (field == "metrics_path") return "--metrics";
  std::string flag = "--" + field;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

// The architecture, --arch: encoder-decoder unless given (the encoder-only one has its own flags).
static std::string arch_in(int argc, char** argv) {
  for (int i = 2; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--arch") && i + 1 < argc) return argv[i + 1];
    if (!std::strncmp(argv[i], "--arch=", 7)) return argv[i] + 7;
  }
  return "encoder-decoder";
}

int train_command(int argc, char** argv) {
  const std::string task = task_in(argc, argv);
  const std::string arch = arch_in(argc, argv);
  if (arch == "encoder-only") return encoder_only_train_command(argc, argv, task);
  const TrainOptions d = default_train_options(task == "corpus" || task == "copy" || task == "toy-translation" ? task : "copy");
  auto str = [](auto v) { return message(v); };
  Flags f("train",
          "Train an encoder-decoder Transformer and evaluate it. Writes OUT/model.safetensors (every --save-every\n"
          "steps and at the end), OUT/loss.svg and OUT/attention/*.svg. Defaults shown are those of the task given.");
  f.add("--arch", "encoder-decoder", "encoder-decoder (this help) or encoder-only (--arch encoder-only --help)");
  f.add("--task", task == "corpus" ? "" : task, "copy, toy-translation (or give --data for your own corpus)");
  f.add("--data", "", "training pairs, source<TAB>target per line, whitespace tokens");
  f.add("--valid", "", "validation pairs (same format)");
  f.add("--test", "", "test pairs, translated and scored with BLEU at the end");
  f.add("--d-model", str(d.d_model), "model width");
  f.add("--layers", str(d.layers), "encoder and decoder layers (N)");
  f.add("--heads", str(d.heads), "attention heads (h)");
  f.add("--d-ff", "", "feed-forward width (default 4 x d-model)");
  f.add("--dropout", str(d.dropout), "dropout probability");
  f.add("--norm", "post", "post (the paper's LayerNorm(x + Sublayer(x))) or pre");
  f.add_switch("--tie-embeddings", "share the embeddings and the output projection (same vocabulary size needed)");
  f.add("--max-len", str(d.max_len), "longest sentence, in tokens, the model takes");
  f.add("--batch-size", str(d.batch_size), "sentences per batch");
  f.add("--max-tokens", str(d.max_tokens), "corpus: padded tokens per batch (0: no budget)");
  f.add("--epochs", str(d.epochs), "epochs");
  f.add("--batches-per-epoch", str(d.batches_per_epoch), "copy task: batches per epoch");
  f.add("--lr", str(d.lr), "factor in front of the paper's schedule d^-0.5 min(step^-0.5, step warmup^-1.5)");
  f.add("--warmup", str(d.warmup), "warmup steps");
  f.add("--label-smoothing", str(d.label_smoothing), "label smoothing epsilon");
  f.add("--clip", str(d.clip), "clip gradients to this global norm (0: off)");
  f.add("--threads", "0", "threads (0: GRADFORMER_THREADS or all cores)");
  f.add("--seed", str(d.seed), "seed of the initialisation, the data order and dropout");
  f.add("--out", "", "output directory (default runs/<task>)");
  f.add("--metrics", "", "also write one JSON object per logging step to this file");
  f.add("--log-every", str(d.log_every), "steps between progress reports");
  f.add("--eval-every", str(d.eval_every), "steps between validation losses (0: at the end only)");
  f.add("--save-every", str(d.save_every), "steps between checkpoints (0: at the end only)");
  f.add("--stop-after", "0", "stop after this step, as if interrupted (then --resume)");
  f.add("--beam", str(d.beam), "beam size of the final translation evaluation (1: greedy)");
  f.add("--resume", "", "continue the run saved in this checkpoint");
  f.add_switch("--quiet", "print nothing while training");
  if (!f.parse(argc, argv)) {
    std::cout << f.help();
    return 0;
  }

  f.choice("--arch", {"encoder-decoder", "encoder-only"});
  TrainOptions o = d;
  o.task = f.has("--data") && !f.given("--task") ? "corpus" : f.choice("--task", {"copy", "toy-translation", "corpus"});
  if (o.task == "corpus" && !f.has("--data")) throw UsageError("train: --task corpus needs --data TRAIN.tsv");
  if (o.task != "corpus" && f.has("--data")) throw UsageError(message("train: --data is for your own corpus, not --task ", o.task));
  o.data_path = f.text("--data"), o.valid_path = f.text("--valid"), o.test_path = f.text("--test");
  o.d_model = f.integer("--d-model"), o.layers = f.integer("--layers"), o.heads = f.integer("--heads");
  o.d_ff = f.has("--d-ff") ? f.integer("--d-ff") : 4 * o.d_model;
  o.dropout = f.number("--dropout");
  o.norm = f.choice("--norm", {"post", "pre"}) == "pre" ? NormPlacement::Pre : NormPlacement::Post;
  o.tie_embeddings = f.on("--tie-embeddings");
  o.max_len = f.integer("--max-len");
  o.batch_size = f.integer("--batch-size"), o.max_tokens = f.integer("--max-tokens");
  o.epochs = f.integer("--epochs"), o.batches_per_epoch = f.integer("--batches-per-epoch");
  o.lr = f.number("--lr"), o.warmup = f.integer("--warmup");
  o.label_smoothing = f.number("--label-smoothing"), o.clip = f.number("--clip");
  o.seed = static_cast<uint64_t>(f.integer("--seed"));
  o.out_dir = f.has("--out") ? f.text("--out") : "runs/" + o.task;
  o.metrics_path = f.text("--metrics");
  o.log_every = f.integer("--log-every"), o.eval_every = f.integer("--eval-every"), o.save_every = f.integer("--save-every");
  o.stop_after = f.integer("--stop-after"), o.beam = f.integer("--beam");
  o.quiet = f.on("--quiet");
  apply_threads(f, "train");
  const std::string resume = f.text("--resume");
  try {
    train(o, resume);
  } catch (const TrainOptionError& e) {
    // A value from the command line is a usage error, named as the user typed it. When resuming,
    // only the output options come from the command line; the others are the checkpoint's.
    const bool from_flags = resume.empty() || e.field() == "log_every" || e.field() == "stop_after";
    if (!from_flags) throw;
    throw UsageError(message("train: ", flag_of(e.field()), " ", e.requirement()));
  }
  return 0;
}

}  // namespace gradformer
