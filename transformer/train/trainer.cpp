#include "transformer/train/trainer.h"

#include <chrono>
#include <filesystem>
#include <iostream>
#include <sstream>

#include "nn/all.h"
#include "tensor/saved_state.h"
#include "nn/clip.h"
#include "nn/optimizer.h"
#include "nn/schedule.h"
#include "transformer/data/batch_stream.h"
#include "transformer/train/checkpoint.h"
#include "transformer/train/progress.h"
#include "transformer/train/svg.h"
#include "transformer/data/toy_corpus.h"

namespace gradformer {

TrainOptions default_train_options(const std::string& task) {
  TrainOptions o;
  o.task = task;
  o.out_dir = "runs/" + task;
  if (task == "copy") return o;  // the struct's defaults are the copy task's
  if (task != "toy-translation" && task != "corpus")
    throw ValueError(message("train: unknown task '", task, "' (copy, toy-translation, or --data for your own corpus)"));
  o.heads = 4;
  o.batch_size = 64;
  o.epochs = 12;
  o.lr = 1.0;
  o.warmup = 400;
  o.label_smoothing = 0.1;
  o.clip = 1.0;
  o.log_every = 50;
  o.eval_every = 500;
  return o;
}

// ---- options in the checkpoint -----------------------------------------------------------------

// Enough digits that the number reads back as the same double.
static std::string exact(double v) {
  std::ostringstream out;
  out.precision(17);
  out << v;
  return out.str();
}

std::map<std::string, std::string> options_to_state(const TrainOptions& o) {
  auto num = [](auto v) { return message(v); };
  return {{"options.task", o.task},
          {"options.data_path", o.data_path},
          {"options.valid_path", o.valid_path},
          {"options.test_path", o.test_path},
          {"options.batch_size", num(o.batch_size)},
          {"options.max_tokens", num(o.max_tokens)},
          {"options.epochs", num(o.epochs)},
          {"options.batches_per_epoch", num(o.batches_per_epoch)},
          {"options.lr", exact(o.lr)},
          {"options.warmup", num(o.warmup)},
          {"options.label_smoothing", exact(o.label_smoothing)},
          {"options.clip", exact(o.clip)},
          {"options.seed", num(o.seed)},
          {"options.eval_every", num(o.eval_every)},
          {"options.save_every", num(o.save_every)},
          {"options.beam", num(o.beam)}};
}

TrainOptions options_from_state(const std::map<std::string, std::string>& s, const std::string& source) {
  const SavedState saved(s, source);
  auto get = [&](const std::string& key) -> const std::string& { return saved.text("options." + key); };
  auto integer = [&](const std::string& key) { return saved.integer("options." + key); };
  auto number = [&](const std::string& key) { return saved.number("options." + key); };
  TrainOptions o = default_train_options(get("task"));
  o.data_path = get("data_path"), o.valid_path = get("valid_path"), o.test_path = get("test_path");
  o.batch_size = integer("batch_size"), o.max_tokens = integer("max_tokens"), o.epochs = integer("epochs");
  o.batches_per_epoch = integer("batches_per_epoch"), o.warmup = integer("warmup");
  o.lr = number("lr"), o.label_smoothing = number("label_smoothing"), o.clip = number("clip");
  o.seed = static_cast<uint64_t>(integer("seed")), o.eval_every = integer("eval_every");
  o.save_every = integer("save_every"), o.beam = integer("beam");
  return o;
}

// ---- the task's data ----------------------------------------------------------------------------

namespace {

struct TaskData {
  Vocab source_vocab, target_vocab;
  std::unique_ptr<BatchStream> source;
  int64_t batches_per_epoch = 0;
  std::vector<Batch> valid_batches;
  std::vector<SentencePair> valid_pairs, test_pairs;  // translation tasks
};

Vocab copy_task_vocab() {
  std::string text = "<pad>\n<s>\n</s>\n<unk>\n";
  for (int t = 4; t < 11; ++t) text += std::to_string(t) + "\n";
  return Vocab::from_text(text, "the copy task's vocabulary");
}

TaskData make_task(const TrainOptions& o, const CheckpointInfo* resumed) {
  TaskData task;
  if (o.task == "copy") {
    task.source_vocab = task.target_vocab = copy_task_vocab();
    task.source = std::make_unique<CopyTaskStream>(o.batch_size, o.seed);
    task.batches_per_epoch = o.batches_per_epoch;
    Generator valid_gen(o.seed, /*stream=*/2);  // the validation batches never meet the training ones
    for (int i = 0; i < 5; ++i) task.valid_batches.push_back(copy_task_batch(o.batch_size, valid_gen));
    return task;
  }
  std::vector<SentencePair> train;
  const int64_t max_tokens = o.max_len - 1;  // room for the </s> or <s> collate adds
  if (o.task == "toy-translation") {
    ToyCorpus corpus = make_toy_corpus();
    train = std::move(corpus.train), task.valid_pairs = std::move(corpus.valid), task.test_pairs = std::move(corpus.test);
  } else {
    if (o.data_path.empty()) throw ValueError("train: a corpus needs --data TRAIN.tsv (and --valid VALID.tsv)");
    train = read_tsv(o.data_path, max_tokens);
    if (!o.valid_path.empty()) task.valid_pairs = read_tsv(o.valid_path, max_tokens);
    if (!o.test_path.empty()) task.test_pairs = read_tsv(o.test_path, max_tokens);
  }
  if (resumed) {
    task.source_vocab = resumed->source_vocab, task.target_vocab = resumed->target_vocab;
  } else {
    std::vector<std::vector<std::string>> sources, targets;
    for (const SentencePair& p : train) sources.push_back(p.source), targets.push_back(p.target);
    task.source_vocab = Vocab::build(sources);
    task.target_vocab = Vocab::build(targets);
  }
  const BatchingOptions batching{.max_tokens = o.max_tokens, .max_sentences = o.batch_size};
  auto source = std::make_unique<CorpusStream>(encode_pairs(train, task.source_vocab, task.target_vocab), batching, o.seed);
  task.batches_per_epoch = source->batches_per_epoch();
  task.source = std::move(source);
  const std::vector<EncodedPair> valid = encode_pairs(task.valid_pairs, task.source_vocab, task.target_vocab);
  for (const auto& indices : plan_batches(valid, batching, nullptr)) task.valid_batches.push_back(collate(valid, indices));
  return task;
}

void print(const TrainOptions& o, const std::string& line) {
  if (!o.quiet) std::cout << line << "\n" << std::flush;
}

}  // namespace

// ---- training --------------------------------------------------------------------------------------

TrainReport train(const TrainOptions& requested, const std::string& resume_path) {
  std::optional<LoadedCheckpoint> resumed;
  TrainOptions o = requested;
  if (!resume_path.empty()) {
    resumed = load_checkpoint(resume_path);
    o = options_from_state(resumed->info.state, resume_path);
    o.out_dir = requested.out_dir, o.metrics_path = requested.metrics_path, o.log_every = requested.log_every;
    o.quiet = requested.quiet, o.stop_after = requested.stop_after;
  }
  if (o.epochs < 1 || o.batch_size < 1 || o.warmup < 1 || o.log_every < 1)
    throw ValueError(message("train: epochs, batch size, warmup and log interval must be positive, got ", o.epochs, ", ",
                             o.batch_size, ", ", o.warmup, ", ", o.log_every));
  if (o.label_smoothing < 0 || o.label_smoothing >= 1)
    throw ValueError(message("train: label smoothing must be in [0, 1), got ", o.label_smoothing));

  TaskData task = make_task(o, resumed ? &resumed->info : nullptr);
  std::unique_ptr<EncoderDecoder> owned;
  if (resumed) {
    owned = std::move(resumed->model);
  } else {
    TransformerConfig config{.src_vocab = task.source_vocab.size(), .tgt_vocab = task.target_vocab.size(),
                             .d_model = o.d_model, .d_ff = o.d_ff, .heads = o.heads, .layers = o.layers,
                             .dropout = o.dropout, .norm = o.norm, .max_len = o.max_len,
                             .tie_embeddings = o.tie_embeddings};
    config.validate();
    owned = std::make_unique<EncoderDecoder>(config, o.seed);
  }
  EncoderDecoder& model = *owned;
  model.train();
  Adam adam(model.parameters(), {.lr = 0, .beta1 = 0.9, .beta2 = 0.98, .eps = 1e-9});
  const NoamSchedule schedule(model.config().d_model, o.warmup, o.lr);
  const CrossEntropyOptions loss_options{.ignore_index = Vocab::pad, .label_smoothing = o.label_smoothing};
  const int64_t total_steps = o.epochs * task.batches_per_epoch;
  int64_t step = 0;
  if (resumed) {
    adam.load_state(resumed->optimizer_state);
    task.source->restore(resumed->info.state, resume_path);
    const SavedState saved(resumed->info.state, resume_path);
    restore_generator(*model.dropout_generator(), saved.text("train.dropout_generator"), resume_path);
    step = saved.integer("train.step");
    if (step < 0) throw CheckpointError(message(resume_path, ": train.step should be a step number, got ", step));
  }

  std::filesystem::create_directories(o.out_dir);
  TrainReport report;
  report.first_step = step + 1;
  report.checkpoint_path = o.out_dir + "/model.safetensors";
  auto save = [&] {
    CheckpointInfo info{model.config(), task.source_vocab, task.target_vocab, options_to_state(o)};
    for (auto& [k, v] : task.source->state()) info.state[k] = v;
    info.state["train.step"] = std::to_string(step);
    info.state["train.dropout_generator"] = generator_state_text(*model.dropout_generator());
    save_checkpoint(report.checkpoint_path, model, adam.state(), info);
  };

  print(o, message("training ", o.task, ": ", model.parameter_count(), " parameters (d_model ", model.config().d_model,
                   ", ", model.config().layers, " layers, ", model.config().heads, " heads), ", total_steps, " steps of ",
                   task.batches_per_epoch, " batches per epoch, ", num_threads(), " threads"));
  Progress progress(total_steps, o.metrics_path, /*print=*/!o.quiet, /*first_step=*/step + 1);
  // The training loss includes label smoothing (its floor is above 0); the validation loss does not.
  PlotSeries train_curve{o.label_smoothing > 0 ? message("train (label smoothing ", o.label_smoothing, ")") : "train", {}, {}};
  PlotSeries valid_curve{"valid", {}, {}};
  double window_loss = 0;
  int64_t window_tokens = 0, window_steps = 0;
  auto window_start = std::chrono::steady_clock::now();
  const int64_t last_step = o.stop_after > 0 ? std::min(o.stop_after, total_steps) : total_steps;

  while (step < last_step) {
    ++step;
    const auto t0 = std::chrono::steady_clock::now();
    const Batch batch = task.source->next();
    adam.set_lr(schedule.rate(step));
    const Variable logits = teacher_forced_logits(model, batch);
    const Variable loss = cross_entropy(logits, batch.tgt_out, loss_options);
    adam.zero_grad();
    loss.backward();
    if (o.clip > 0) clip_grad_norm(adam.parameters(), o.clip);
    adam.step();
    report.train_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    const double value = loss.item();
    report.losses.push_back(value);
    report.target_tokens += batch.ntokens;
    window_loss += value * static_cast<double>(batch.ntokens), window_tokens += batch.ntokens, ++window_steps;
    if (step % o.log_every == 0 || step == last_step) {
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - window_start).count();
      const double mean = window_loss / static_cast<double>(window_tokens);
      train_curve.x.push_back(static_cast<double>(step)), train_curve.y.push_back(mean);
      progress.report(step, {{"loss", mean}, {"lr", adam.lr()}, {"tokens/s", static_cast<double>(window_tokens) / seconds}});
      window_loss = 0, window_tokens = 0, window_steps = 0;
      window_start = std::chrono::steady_clock::now();
    }
    if (o.eval_every > 0 && step % o.eval_every == 0 && step != last_step && !task.valid_batches.empty()) {
      const double v = teacher_forced_loss(model, task.valid_batches);
      valid_curve.x.push_back(static_cast<double>(step)), valid_curve.y.push_back(v);
      progress.finish();
      print(o, message("step ", step, ": valid loss ", v));
    }
    if (o.save_every > 0 && step % o.save_every == 0 && step != last_step) save();
  }
  progress.finish();
  report.steps = step - report.first_step + 1;
  report.tokens_per_second = report.train_seconds > 0 ? static_cast<double>(report.target_tokens) / report.train_seconds : 0;
  save();
  print(o, message("trained ", report.steps, " steps in ", Progress::format_duration(report.train_seconds), " (",
                   static_cast<int64_t>(report.tokens_per_second), " target tokens/s); saved ", report.checkpoint_path));

  // ---- evaluation at the end ----
  if (!task.valid_batches.empty()) {
    report.valid_loss = teacher_forced_loss(model, task.valid_batches);
    valid_curve.x.push_back(static_cast<double>(step)), valid_curve.y.push_back(report.valid_loss);
    print(o, message("valid loss ", report.valid_loss));
  }
  if (!train_curve.x.empty()) {
    LinePlot plot{.title = o.task + ": loss per target token", .series = {train_curve}};
    if (!valid_curve.x.empty()) plot.series.push_back(valid_curve);
    write_svg(o.out_dir + "/loss.svg", line_plot_svg(plot));
  }
  // One sentence pair to draw the attention of, with a label per position.
  std::optional<Batch> example;
  std::vector<std::string> example_source, example_target;
  if (o.task == "copy") {
    Generator eval_gen(o.seed, /*stream=*/3);
    report.copy_exact_match = copy_task_exact_match(model, 100, eval_gen);
    print(o, message("copy task: ", report.copy_exact_match, "/100 fresh sequences copied exactly (greedy decoding)"));
    example = copy_task_batch(1, eval_gen);
    for (int64_t id : example->src.select(0, 0).to_vector<int64_t>()) example_source.push_back(std::to_string(id));
    example_target.assign(example_source.begin(), example_source.end() - 1);  // tgt_in = src[:-1]
  } else {
    auto evaluate = [&](const std::vector<SentencePair>& pairs, const char* split) {
      TranslationReport r = evaluate_translation(model, pairs, task.source_vocab, task.target_vocab, o.beam);
      print(o, message(split, ": BLEU ", r.bleu.bleu, ", exact match ", 100 * r.exact_match, "% of ", pairs.size(),
                       " sentences (", o.beam == 1 ? "greedy" : message("beam ", o.beam), ")"));
      return r;
    };
    if (!task.valid_pairs.empty()) report.valid_translation = evaluate(task.valid_pairs, "valid");
    if (!task.test_pairs.empty()) report.test_translation = evaluate(task.test_pairs, "test");
    const auto& pairs = task.test_pairs.empty() ? task.valid_pairs : task.test_pairs;
    if (!pairs.empty()) {
      const std::vector<EncodedPair> one = encode_pairs({pairs.front()}, task.source_vocab, task.target_vocab);
      example = collate(one, {0});
      example_source = pairs.front().source, example_target = {"<s>"};
      example_source.push_back("</s>");
      example_target.insert(example_target.end(), pairs.front().target.begin(), pairs.front().target.end());
    }
  }
  if (example) {
    const auto maps = write_attention_maps(model, *example, example_source, example_target, o.out_dir + "/attention");
    print(o, message("wrote ", o.out_dir, "/loss.svg and ", maps.size(), " attention maps in ", o.out_dir, "/attention/"));
  }
  return report;
}

}  // namespace gradformer
