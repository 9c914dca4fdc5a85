// gradformer train --arch encoder-only, gradformer classify, and the bert-base preset of params.
#include <cstdio>
#include <iostream>

#include "transformer/cli/commands.h"
#include "transformer/cli/flags.h"
#include "transformer/cli/run_output.h"
#include "transformer/train/encoder_only_checkpoint.h"
#include "transformer/train/encoder_only_trainer.h"
#include "transformer/train/evaluate.h"
#include "transformer/train/trainer.h"

namespace gradformer {

// Every flag of an encoder-only run, with the defaults `d` of one of its tasks.
static void declare_encoder_only_flags(Flags& f, const EncoderOnlyTrainOptions& d) {
  auto str = [](auto v) { return message(v); };
  f.add("--arch", "encoder-only", "encoder-decoder, decoder-only or encoder-only (this help)");
  f.add("--task", d.task, "mlm or classify");
  f.add("--init", "", "classify: start from this pre-trained encoder-only checkpoint");
  f.add("--labelled", str(d.labelled), "classify: labelled training sentences (the first of the train split)");
  f.add("--d-model", str(d.d_model), "model width");
  f.add("--layers", str(d.layers), "encoder layers (N)");
  f.add("--heads", str(d.heads), "attention heads (h)");
  f.add("--d-ff", "", "feed-forward width (default 4 x d-model)");
  f.add("--dropout", str(d.dropout), "dropout probability");
  f.add("--norm", "post", "post or pre");
  f.add("--positions", "sinusoidal", "sinusoidal (the paper) or learned (BERT)");
  f.add("--activation", "gelu", "feed-forward nonlinearity: gelu (BERT) or relu (the paper)");
  f.add_switch("--untied", "a separate MLM output matrix (default: tied to the token embedding)");
  f.add("--max-len", str(d.max_len), "longest sequence, in tokens, <s> and </s> included");
  f.add("--steps", str(d.steps), "optimisation steps");
  f.add("--batch-size", str(d.batch_size), "sentences per batch");
  f.add("--lr", str(d.lr), "factor in front of the schedule d^-0.5 min(step^-0.5, step warmup^-1.5)");
  f.add("--warmup", str(d.warmup), "warmup steps");
  f.add("--clip", str(d.clip), "clip gradients to this global norm (0: off)");
  f.add("--threads", "0", "threads (0: GRADFORMER_THREADS or all cores)");
  f.add("--seed", str(d.seed), "seed of the initialisation, the data, the masking and dropout");
  f.add("--out", "", "output directory (default runs/encoder-only-<task>)");
  f.add_switch("--force", "replace the run already in the output directory (only the files gradformer wrote there)");
  f.add("--log-every", str(d.log_every), "steps between progress lines");
  f.add("--save-every", "0", "steps between checkpoints (0: at the end only)");
  f.add("--keep-last", "0",
        "also keep the last this many checkpoints as OUT/model-step-N.safetensors, for gradformer average "
        "(0: none)");
  f.add("--stop-after", "0", "stop after this step, as if interrupted (then --resume)");
  f.add("--resume", "", "continue the run saved in this checkpoint");
  f.add_switch("--quiet", "print no progress, only the results");
  declare_profile_flag(f);
}

int encoder_only_train_command(int argc, char** argv, const std::string& task) {
  const EncoderOnlyTrainOptions d = default_encoder_only_options(task == "classify" ? task : "mlm");
  Flags f(
      "train",
      "Train an encoder-only (BERT-style) Transformer on the toy corpus's French sentences: --task mlm pre-trains\n"
      "with the masked-LM objective (15% of words chosen; 80% <mask>, 10% random, 10% kept), --task classify\n"
      "fine-tunes a classifier (is the sentence negated?) from scratch or from --init. Writes OUT/model.safetensors,\n"
      "then prints the command that uses the model. Defaults shown are the --task given's; the table at the\n"
      "end gives each task's.");
  declare_encoder_only_flags(f, d);
  if (!f.parse(argc, argv)) {
    // Each task's defaults where they differ, from the table the trainer uses (default_encoder_only_options).
    std::vector<std::pair<std::string, Flags>> columns;
    for (const std::string& t : architecture_tasks(Architecture::EncoderOnly)) {
      Flags column("train", "");
      declare_encoder_only_flags(column, default_encoder_only_options(t));
      columns.emplace_back(t, column);
    }
    std::cout << f.help() << "\nthe defaults of each encoder-only task, where they differ:\n"
              << defaults_table(columns, {"--task"});
    return 0;
  }
  EncoderOnlyTrainOptions o = d;
  o.task = f.choice("--task", {"mlm", "classify"});
  o.init_path = f.text("--init");
  if (!o.init_path.empty() && o.task != "classify") throw UsageError("train: --init is for --task classify");
  o.labelled = f.integer("--labelled");
  o.d_model = f.integer("--d-model"), o.layers = f.integer("--layers"), o.heads = f.integer("--heads");
  o.d_ff = f.has("--d-ff") ? f.integer("--d-ff") : 4 * o.d_model;
  o.dropout = f.number("--dropout");
  o.norm = f.choice("--norm", {"post", "pre"}) == "pre" ? NormPlacement::Pre : NormPlacement::Post;
  o.positions =
      f.choice("--positions", {"sinusoidal", "learned"}) == "learned" ? Positions::Learned : Positions::Sinusoidal;
  o.activation = f.choice("--activation", {"gelu", "relu"}) == "gelu" ? Activation::GELU : Activation::ReLU;
  o.tie_embeddings = !f.on("--untied");
  o.max_len = f.integer("--max-len");
  o.steps = f.integer("--steps"), o.batch_size = f.integer("--batch-size");
  o.lr = f.number("--lr"), o.warmup = f.integer("--warmup"), o.clip = f.number("--clip");
  o.seed = static_cast<uint64_t>(f.integer("--seed"));
  o.out_dir = f.has("--out") ? f.text("--out") : "runs/encoder-only-" + o.task;
  o.log_every = f.integer("--log-every"), o.save_every = f.integer("--save-every"),
  o.stop_after = f.integer("--stop-after"), o.keep_last = f.integer("--keep-last");
  o.quiet = f.on("--quiet");
  o.profile_path = profile_path(f, o.out_dir);
  apply_threads(f, "train");
  const std::string resume = f.text("--resume");
  refuse_to_replace_run(o.out_dir, resume, f.on("--force"));
  // The model's sizes are checked before any work, as the flags the user typed.
  if (resume.empty() && o.init_path.empty()) {
    try {
      EncoderOnlyConfig{.vocab = 6,
                        .d_model = o.d_model,
                        .d_ff = o.d_ff,
                        .heads = o.heads,
                        .layers = o.layers,
                        .dropout = o.dropout,
                        .max_len = o.max_len,
                        .positions = o.positions}
          .validate();
    } catch (const ValueError& e) {
      throw UsageError(message("train: ", e.what()));
    }
  }
  EncoderOnlyReport report;
  try {
    report = train_encoder_only(o, resume);
  } catch (const TrainOptionError& e) {
    const bool from_flags = resume.empty() || e.field() == "log_every" || e.field() == "stop_after";
    if (!from_flags) throw;
    std::string flag = "--" + e.field();
    for (char& c : flag) c = c == '_' ? '-' : c;
    if (e.field() == "init_path") flag = "--init";
    if (e.field() == "out_dir") flag = "--out";
    throw UsageError(message("train: ", flag, " ", e.requirement()));
  }
  print_trained(report.summary, o.quiet, report.checkpoint_path);
  return 0;
}

int classify_command(int argc, char** argv) {
  Flags f("classify",
          "Classify each line of standard input (whitespace-separated tokens) with an encoder-only checkpoint\n"
          "fine-tuned by gradformer train --arch encoder-only --task classify; print one label per line.");
  f.add("--checkpoint", "", "an encoder-only classifier checkpoint (required)");
  f.add("--threads", "0", "threads (0: all cores)");
  if (!f.parse(argc, argv)) {
    std::cout << f.help();
    return 0;
  }
  f.require("--checkpoint");
  apply_threads(f, "classify");
  const std::string path = f.text("--checkpoint");
  LoadedEncoderOnly ckpt = load_encoder_only_checkpoint(path, "classify");
  const auto task = ckpt.info.state.find("options.task");
  if (task != ckpt.info.state.end() && task->second != "classify")
    throw CheckpointError(message(path, " was trained with --task ", task->second,
                                  ", so its classifier is untrained: fine-tune it with --task classify --init ", path));
  for (std::string line; std::getline(std::cin, line);) {
    const std::vector<std::string> words = split_words(line);
    if (words.empty()) {
      std::cout << "\n";
      continue;
    }
    if (static_cast<int64_t>(words.size()) + 2 > ckpt.info.config.max_len)
      throw ValueError(message("classify: a sentence of ", words.size(), " words (", words.size() + 2,
                               " tokens with <s> and </s>) is longer than the model's max_len ",
                               ckpt.info.config.max_len));
    const int64_t label = classify(*ckpt.model, ckpt.info.vocab, {words}).front();
    std::cout << ckpt.info.labels[static_cast<size_t>(label)] << "\n" << std::flush;
  }
  return 0;
}

int bert_base_params() {
  const EncoderOnlyConfig c = EncoderOnlyConfig::bert_base();
  const EncoderOnlyCount n = parameter_count(c);
  auto line = [](const char* what, int64_t count, const char* formula) {
    std::printf("  %-12s %12lld   %s\n", what, static_cast<long long>(count), formula);
  };
  std::printf(
      "preset bert-base: d_model 768, d_ff 3072, heads 12, layers 12, vocabulary 30522, 512 learned positions,\n"
      "2 token types, embedding LayerNorm, post-LN, GELU\n");
  line("embeddings", n.embeddings, "V d + 512 d + 2 d + 2 d");
  line("encoder", n.encoder, "12 (4 d^2 + 4 d + 2 d d_ff + d_ff + d + 4 d)");
  line("pooler", n.pooler, "d^2 + d");
  std::printf("parameters: %lld (%.1fM; BERT's paper: 110M)\n", static_cast<long long>(n.body_and_pooler()),
              static_cast<double>(n.body_and_pooler()) / 1e6);
  line("+ mlm head", n.mlm_head, "d^2 + d + 2 d + V (output tied to the embedding)");
  line("+ classifier", n.classifier, "2 d + 2");
  std::printf("with the pre-training and classification heads: %lld\n", static_cast<long long>(n.total()));
  return 0;
}

}  // namespace gradformer
