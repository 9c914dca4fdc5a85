// gradformer train: every hyperparameter of the reference copy-task setup is a flag, with the
// task's defaults; --resume continues a saved run exactly.
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "transformer/cli/commands.h"
#include "transformer/cli/flags.h"
#include "transformer/cli/run_output.h"
#include "transformer/train/encoder_only_checkpoint.h"
#include "transformer/train/run_directory.h"
#include "transformer/train/trainer.h"

namespace gradformer {

// A flag's value before the flags are declared ("" if absent).
static std::string early_value(int argc, char** argv, const std::string& flag) {
  for (int i = 2; i < argc; ++i) {
    if (argv[i] == flag && i + 1 < argc) return argv[i + 1];
    if (!std::strncmp(argv[i], (flag + "=").c_str(), flag.size() + 1)) return argv[i] + flag.size() + 1;
  }
  return "";
}

// The architecture and the task decide the defaults the help shows, so find them before declaring the flags.
static Architecture arch_in(int argc, char** argv) {
  const std::string arch = early_value(argc, argv, "--arch");
  try {
    return arch.empty() ? Architecture::EncoderDecoder : parse_architecture(arch);
  } catch (const ValueError&) {
    throw UsageError(message("train: --arch must be encoder-decoder, decoder-only or encoder-only, got '", arch, "'"));
  }
}

static std::string task_in(int argc, char** argv, Architecture arch) {
  const std::string task = early_value(argc, argv, "--task");
  if (!task.empty()) return task;
  for (int i = 2; i < argc; ++i)
    if (!std::strcmp(argv[i], "--data") || !std::strncmp(argv[i], "--data=", 7)) return "corpus";
  const std::vector<std::string> tasks = architecture_tasks(arch);
  return tasks.empty() ? "" : tasks.front();
}

static std::string joined(const std::vector<std::string>& words, const char* separator) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : separator) + w;
  return out;
}

// The flag that sets a TrainOptions field: its name with dashes, but for the paths and the output directory.
static std::string flag_of(const std::string& field) {
  if (field == "data_path") return "--data";
  if (field == "valid_path") return "--valid";
  if (field == "test_path") return "--test";
  if (field == "out_dir") return "--out";
  if (field == "metrics_path") return "--metrics";
  if (field == "profile_path") return "--profile";
  std::string flag = "--" + field;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

// Every flag of an encoder-decoder or decoder-only run, with the defaults `d` of one of its tasks.
static void declare_train_flags(Flags& f, Architecture arch, const std::string& task, const TrainOptions& d) {
  auto str = [](auto v) { return message(v); };
  const std::vector<std::string> tasks = architecture_tasks(arch);
  f.add("--arch", architecture_name(arch),
        "encoder-decoder (tasks copy, toy-translation, corpus with --data), decoder-only (tasks toy-lm, "
        "toy-translation as one sequence 'source <sep> target'), encoder-only (tasks: " +
            (architecture_tasks(Architecture::EncoderOnly).empty()
                 ? std::string("none in this build")
                 : joined(architecture_tasks(Architecture::EncoderOnly), ", ")) +
            ")");
  f.add("--task", task == "corpus" ? "" : task,
        joined(tasks, ", ") + (arch == Architecture::EncoderDecoder ? " (or give --data for your own corpus)" : ""));
  f.add("--data", "", "training pairs, source<TAB>target per line, whitespace tokens");
  f.add("--valid", "", "validation pairs (same format)");
  f.add("--test", "", "test pairs, translated and scored with BLEU at the end");
  f.add("--d-model", str(d.d_model), "model width");
  f.add("--layers", str(d.layers), "encoder and decoder layers (N)");
  f.add("--heads", str(d.heads), "attention heads (h)");
  f.add("--d-ff", str(d.d_ff), "feed-forward width (4 x d-model when only --d-model is given)");
  f.add("--dropout", str(d.dropout), "dropout probability");
  f.add("--norm", d.norm == NormPlacement::Pre ? "pre" : "post",
        "post (the paper's LayerNorm(x + Sublayer(x))) or pre");
  f.add("--activation", d.activation == Activation::GELU ? "gelu" : "relu",
        "feed-forward nonlinearity: relu (the paper) or gelu (GPT, BERT)");
  f.add("--positions", d.positions == Positions::Learned ? "learned" : "sinusoidal",
        "sinusoidal (the paper) or learned (GPT-2, BERT: a trained [max-len, d] matrix)");
  if (d.tie_embeddings)
    f.add("--tie-embeddings", "true", "share the embedding and the output projection: true or false");
  else
    f.add_switch("--tie-embeddings", "share the embeddings and the output projection (same vocabulary size needed)");
  f.add("--max-len", str(d.max_len), "longest sentence, in tokens, the model takes");
  f.add("--batch-size", str(d.batch_size), "sentences per batch");
  f.add("--max-tokens", str(d.max_tokens), "corpus: padded tokens per batch (0: no budget)");
  f.add("--batching", batching_name(d.batching),
        "corpus: random (each batch a random sample of the sentences) or length (sentences of similar "
        "length share a batch: least padding, but where length tells what a sentence is, e.g. one kind "
        "of sentence is short, it learns far less per epoch; chapter 11)");
  f.add("--pieces", str(d.pieces),
        "corpus: pad each batch as this many length-sorted pieces, whose gradients add up to the "
        "batch's (same learning, less padding; 1: one padded rectangle)");
  f.add("--epochs", str(d.epochs), "epochs");
  f.add("--batches-per-epoch", str(d.batches_per_epoch), "copy task: batches per epoch");
  f.add("--lr", str(d.lr), "factor in front of the paper's schedule d^-0.5 min(step^-0.5, step warmup^-1.5)");
  f.add("--warmup", str(d.warmup), "warmup steps");
  f.add("--label-smoothing", str(d.label_smoothing), "label smoothing epsilon");
  f.add("--clip", str(d.clip), "clip gradients to this global norm (0: off)");
  f.add("--threads", "0", "threads (0: GRADFORMER_THREADS or all cores)");
  f.add("--seed", str(d.seed), "seed of the initialisation, the data order and dropout");
  f.add("--out", "",
        "output directory (default runs/<task>, with --data runs/<the data file's name without its extension>; "
        "with --resume, the checkpoint's folder)");
  f.add_switch("--force", "replace the run already in the output directory (only the files gradformer wrote there)");
  f.add("--metrics", "", "also write the run's settings and one JSON object per logging step to this file");
  f.add("--log-every", str(d.log_every), "steps between progress reports");
  f.add("--eval-every", str(d.eval_every), "steps between validation losses (0: at the end only)");
  f.add("--save-every", str(d.save_every), "steps between checkpoints (0: at the end only)");
  f.add("--keep-last", "0",
        "also keep the last this many checkpoints as OUT/model-step-N.safetensors, for gradformer average "
        "(0: none)");
  f.add("--stop-after", "0", "stop after this step, as if interrupted (then --resume)");
  f.add("--beam", str(d.beam), "beam size of the final translation evaluation (1: greedy)");
  declare_profile_flag(f);
  f.add("--resume", "",
        "continue the run saved in this checkpoint (then only --epochs, --out, --force, --metrics, --log-every, "
        "--stop-after, --keep-last, --threads, --quiet, --profile)");
  f.add_switch("--quiet", "print no progress, only the results");
}

// Each task's defaults where they differ, from the tables train() uses (default_train_options).
static std::string task_defaults(Architecture arch) {
  std::vector<std::pair<std::string, Flags>> columns;
  for (const std::string& task : architecture_tasks(arch)) {
    Flags column("train", "");
    declare_train_flags(column, arch, task, default_train_options(task, arch));
    columns.emplace_back(task == "corpus" ? "--data (corpus)" : task, column);
  }
  return message("\nthe defaults of each ", architecture_name(arch), " task, where they differ:\n",
                 defaults_table(columns, {"--task"}));
}

int train_command(int argc, char** argv) {
  const Architecture arch = arch_in(argc, argv);
  // The encoder-only runs have flags of their own (--steps, --init, --labelled): asked for by --arch,
  // or by a checkpoint resumed without it.
  const std::string resume_path = early_value(argc, argv, "--resume");
  if (arch == Architecture::EncoderOnly ||
      (early_value(argc, argv, "--arch").empty() && !resume_path.empty() &&
       checkpoint_arch(load_safetensors(resume_path).metadata) == kEncoderOnlyArch))
    return encoder_only_train_command(argc, argv, early_value(argc, argv, "--task"));
  const std::vector<std::string> tasks = architecture_tasks(arch);
  const std::string task = task_in(argc, argv, arch);
  const bool known = std::find(tasks.begin(), tasks.end(), task) != tasks.end();
  const TrainOptions d = tasks.empty() ? TrainOptions{} : default_train_options(known ? task : tasks.front(), arch);
  Flags f("train",
          "Train a Transformer and evaluate it. Writes OUT/model.safetensors (every --save-every steps and at the\n"
          "end), OUT/loss.svg and (encoder-decoder) OUT/attention/*.svg, then prints the command that uses the\n"
          "model. Defaults shown are those of the architecture and task given (--task, or --data); the table\n"
          "at the end gives each task's.");
  declare_train_flags(f, arch, task, d);
  if (!f.parse(argc, argv)) {
    std::cout << f.help() << (tasks.empty() ? "" : task_defaults(arch));
    return 0;
  }

  if (tasks.empty()) throw UsageError(message("train: --arch ", architecture_name(arch), " has no task in this build"));
  // A resumed run continues as it began: only the flags below may differ from the original run's;
  // any other is refused rather than silently ignored.
  const std::string resume = f.text("--resume");
  if (!resume.empty()) {
    const std::vector<std::string> allowed = {"--resume",  "--epochs",    "--out",        "--force",
                                              "--metrics", "--log-every", "--stop-after", "--keep-last",
                                              "--threads", "--quiet",     "--profile"};
    for (const std::string& flag : f.given_names())
      if (std::find(allowed.begin(), allowed.end(), flag) == allowed.end())
        throw UsageError(
            message("train: ", flag,
                    " cannot change when resuming (the run goes on with its checkpoint's); "
                    "with --resume only --epochs, --out, --force, --metrics, --log-every, --stop-after, --keep-last, "
                    "--threads, --quiet and --profile"));
  }

  TrainOptions o = d;
  o.arch = arch;
  o.task = f.has("--data") && !f.given("--task") ? "corpus" : f.choice("--task", tasks);
  if (arch != Architecture::EncoderDecoder && f.has("--data"))
    throw UsageError(
        message("train: --data (your own corpus) is for --arch encoder-decoder, not ", architecture_name(arch)));
  if (o.task == "corpus" && !f.has("--data")) throw UsageError("train: --task corpus needs --data TRAIN.tsv");
  if (o.task != "corpus" && f.has("--data"))
    throw UsageError(message("train: --data is for your own corpus, not --task ", o.task));
  o.data_path = f.text("--data"), o.valid_path = f.text("--valid"), o.test_path = f.text("--test");
  o.d_model = f.integer("--d-model"), o.layers = f.integer("--layers"), o.heads = f.integer("--heads");
  // 4 x d_model only for a d_model in range: 4 x 2^62 would overflow before the check names --d-model.
  const bool sane_width = o.d_model > 0 && o.d_model <= TransformerConfig::max_d_model;
  o.d_ff = f.given("--d-ff") ? f.integer("--d-ff") : !sane_width ? 1 : o.d_model == d.d_model ? d.d_ff : 4 * o.d_model;
  o.dropout = f.number("--dropout");
  o.norm = f.choice("--norm", {"post", "pre"}) == "pre" ? NormPlacement::Pre : NormPlacement::Post;
  o.tie_embeddings =
      d.tie_embeddings ? f.choice("--tie-embeddings", {"true", "false"}) == "true" : f.on("--tie-embeddings");
  o.activation = f.choice("--activation", {"relu", "gelu"}) == "gelu" ? Activation::GELU : Activation::ReLU;
  o.positions =
      f.choice("--positions", {"sinusoidal", "learned"}) == "learned" ? Positions::Learned : Positions::Sinusoidal;
  o.max_len = f.integer("--max-len");
  o.batch_size = f.integer("--batch-size"), o.max_tokens = f.integer("--max-tokens");
  o.batching = parse_batching(f.choice("--batching", {"random", "length"}));
  o.pieces = f.integer("--pieces");
  o.epochs = f.integer("--epochs"), o.batches_per_epoch = f.integer("--batches-per-epoch");
  o.lr = f.number("--lr"), o.warmup = f.integer("--warmup");
  o.label_smoothing = f.number("--label-smoothing"), o.clip = f.number("--clip");
  o.seed = static_cast<uint64_t>(f.integer("--seed"));
  // Resumed, the run writes where its checkpoint is, whatever its task, unless told otherwise.
  const std::string resume_dir = std::filesystem::path(resume).parent_path().string();
  o.out_dir = f.has("--out")       ? f.text("--out")
              : !resume.empty()    ? (resume_dir.empty() ? "." : resume_dir)
              : o.task == "corpus" ? run_directory_for_data(o.data_path)
                                   : default_train_options(o.task, arch).out_dir;
  if (!resume.empty() && f.given("--epochs")) {
    o.resume_epochs = f.integer("--epochs");
    if (o.resume_epochs < 1) throw UsageError(message("train: --epochs must be at least 1, got ", o.resume_epochs));
  }
  o.metrics_path = f.text("--metrics");
  o.log_every = f.integer("--log-every"), o.eval_every = f.integer("--eval-every"),
  o.save_every = f.integer("--save-every");
  o.stop_after = f.integer("--stop-after"), o.beam = f.integer("--beam"), o.keep_last = f.integer("--keep-last");
  o.quiet = f.on("--quiet");
  refuse_to_replace_run(o.out_dir, resume, f.on("--force"));
  o.profile_path = profile_path(f, o.out_dir);
  apply_threads(f, "train");
  TrainReport report;
  try {
    report = train(o, resume);
  } catch (const TrainOptionError& e) {
    // A value from the command line is a usage error, named as the user typed it. When resuming,
    // only the output options come from the command line; the others are the checkpoint's.
    const bool from_flags = resume.empty() || e.field() == "log_every" || e.field() == "stop_after" ||
                            e.field() == "epochs" || e.field() == "keep_last";
    if (!from_flags) throw;
    throw UsageError(message("train: ", flag_of(e.field()), " ", e.requirement()));
  }
  print_trained(report.summary, o.quiet, report.checkpoint_path);
  return 0;
}

}  // namespace gradformer
