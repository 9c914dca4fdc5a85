#include "transformer/train/encoder_only_trainer.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

#include "autograd/all.h"
#include "nn/schedule.h"
#include "tensor/parallel.h"
#include "tensor/saved_state.h"
#include "transformer/data/data_error.h"
#include "transformer/data/toy_corpus.h"
#include "transformer/train/average.h"
#include "transformer/train/encoder_only_checkpoint.h"
#include "transformer/train/run_directory.h"
#include "transformer/train/step_profile.h"
#include "transformer/train/trainer.h"

namespace gradformer {

EncoderOnlyTrainOptions default_encoder_only_options(const std::string& task) {
  EncoderOnlyTrainOptions o;
  o.task = task;
  o.out_dir = "runs/encoder-only-" + task;
  if (task == "mlm") return o;
  if (task != "classify") throw ValueError(message("train: unknown encoder-only task '", task, "' (mlm or classify)"));
  o.steps = 20, o.lr = 0.5, o.warmup = 10, o.batch_size = 16, o.labelled = 16, o.log_every = 10;
  return o;
}

std::vector<std::string> negation_labels() { return {"affirmative", "negated"}; }

namespace {

std::map<std::string, std::string> to_state(const EncoderOnlyTrainOptions& o) {
  return {{"options.task", o.task},
          {"options.init_path", o.init_path},
          {"options.steps", message(o.steps)},
          {"options.batch_size", message(o.batch_size)},
          {"options.lr", exact_text(o.lr)},
          {"options.warmup", message(o.warmup)},
          {"options.clip", exact_text(o.clip)},
          {"options.labelled", message(o.labelled)},
          {"options.seed", message(o.seed)},
          {"options.save_every", message(o.save_every)},
          {"options.out_dir", o.out_dir},
          {"options.log_every", message(o.log_every)},
          {"options.stop_after", message(o.stop_after)},
          {"options.quiet", o.quiet ? "true" : "false"},
          {"options.threads", message(num_threads())}};
}

// Resuming takes the checkpoint's options but the output ones from the caller (as train() does).
EncoderOnlyTrainOptions from_state(const std::map<std::string, std::string>& s, const std::string& source,
                                   const EncoderOnlyTrainOptions& requested) {
  const SavedState saved(s, source);
  EncoderOnlyTrainOptions o = requested;
  o.task = saved.text("options.task"), o.init_path = saved.text("options.init_path");
  o.steps = saved.integer("options.steps"), o.batch_size = saved.integer("options.batch_size");
  o.lr = saved.number("options.lr"), o.warmup = saved.integer("options.warmup"), o.clip = saved.number("options.clip");
  o.labelled = saved.integer("options.labelled"), o.seed = static_cast<uint64_t>(saved.integer("options.seed"));
  o.save_every = saved.integer("options.save_every");
  return o;
}

void validate(const EncoderOnlyTrainOptions& o) {
  if (o.task != "mlm" && o.task != "classify")
    throw TrainOptionError("task", message("must be mlm or classify, got '", o.task, "'"));
  const std::pair<const char*, int64_t> at_least_one[] = {
      {"steps", o.steps}, {"batch_size", o.batch_size}, {"warmup", o.warmup}, {"log_every", o.log_every}};
  for (const auto& [field, value] : at_least_one)
    if (value < 1) throw TrainOptionError(field, message("must be at least 1, got ", value));
  if (o.task == "classify" && (o.labelled < 1 || o.labelled > 10000))
    throw TrainOptionError("labelled",
                           message("must be in [1, 10000] (the toy corpus's train split), got ", o.labelled));
  if (o.save_every < 0) throw TrainOptionError("save_every", message("must be at least 0, got ", o.save_every));
  if (o.keep_last < 0) throw TrainOptionError("keep_last", message("must be at least 0, got ", o.keep_last));
  if (o.stop_after < 0) throw TrainOptionError("stop_after", message("must be at least 0, got ", o.stop_after));
  require_utf8_path("out_dir", o.out_dir);
  require_utf8_path("init_path", o.init_path);
  if (!(o.lr > 0 && std::isfinite(o.lr))) throw TrainOptionError("lr", message("must be positive, got ", o.lr));
  if (!(o.clip >= 0 && std::isfinite(o.clip)))
    throw TrainOptionError("clip", message("must be at least 0 (0: no clipping), got ", o.clip));
  if (!o.init_path.empty() && o.task != "classify")
    throw TrainOptionError("init_path", "is for --task classify (fine-tuning a pre-trained checkpoint)");
}

std::vector<std::vector<std::string>> french(const std::vector<SentencePair>& pairs) {
  std::vector<std::vector<std::string>> out;
  for (const SentencePair& p : pairs) out.push_back(p.source);
  return out;
}

// The classifier's two layers drawn afresh from the run's seed, with or without pre-training, so
// the two start from the same head (the MLM objective never trains the pooler).
void reset_classifier(EncoderOnly& model, uint64_t seed) {
  Generator gen(seed, 4);
  xavier_uniform_(model.pooler->weight, gen), fill_(model.pooler->bias, 0.0);
  xavier_uniform_(model.classifier->weight, gen), fill_(model.classifier->bias, 0.0);
}

std::vector<int64_t> draw_indices(int64_t count, int64_t n, Generator& gen) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < count; ++i) out.push_back(gen.integer(0, n));
  return out;
}

// Loss and accuracy of the MLM over sentences, masked with a fixed generator (the same draw every time).
std::pair<double, double> mlm_evaluate(const EncoderOnly& model, const Vocab& vocab,
                                       const std::vector<std::vector<std::string>>& sentences, uint64_t seed) {
  InferenceGuard guard(const_cast<EncoderOnly&>(model));
  Generator gen(seed, 3);
  double loss = 0, right = 0, chosen = 0;
  for (size_t start = 0; start < sentences.size(); start += 100) {
    std::vector<std::vector<int64_t>> ids;
    for (size_t i = start; i < std::min(sentences.size(), start + 100); ++i) ids.push_back(vocab.encode(sentences[i]));
    const MlmBatch b = mask_tokens(encode_sequences(ids), vocab.size(), gen);
    const Variable logits = model.mlm_logits(model.encode(b.input));  // [B, S, V]
    loss += cross_entropy(logits, b.labels, {.ignore_index = Vocab::pad}).item() * static_cast<double>(b.chosen);
    const Tensor hit = logical_and(eq(argmax(logits.value(), -1), b.labels), ne(b.labels, scalar(0.0, DType::Int64)));
    right += sum(hit.to(DType::Float64)).item(), chosen += static_cast<double>(b.chosen);
  }
  return {loss / chosen, right / chosen};
}

}  // namespace

std::vector<int64_t> classify(const EncoderOnly& model, const Vocab& vocab,
                              const std::vector<std::vector<std::string>>& sentences) {
  InferenceGuard guard(const_cast<EncoderOnly&>(model));
  std::vector<int64_t> out;
  for (size_t start = 0; start < sentences.size(); start += 100) {
    std::vector<std::vector<int64_t>> ids;
    for (size_t i = start; i < std::min(sentences.size(), start + 100); ++i) ids.push_back(vocab.encode(sentences[i]));
    const Tensor predicted = argmax(model.class_logits(model.encode(encode_sequences(ids))).value(), -1);  // [B]
    for (int64_t p : predicted.to_vector<int64_t>()) out.push_back(p);
  }
  return out;
}

double classify_accuracy(const EncoderOnly& model, const Vocab& vocab, const std::vector<LabelledSentence>& examples) {
  std::vector<std::vector<std::string>> sentences;
  for (const auto& e : examples) sentences.push_back(e.tokens);
  const std::vector<int64_t> predicted = classify(model, vocab, sentences);
  int64_t right = 0;
  for (size_t i = 0; i < examples.size(); ++i) right += predicted[i] == examples[i].label;
  return static_cast<double>(right) / static_cast<double>(examples.size());
}

EncoderOnlyReport train_encoder_only(const EncoderOnlyTrainOptions& requested, const std::string& resume_path) {
  std::optional<LoadedEncoderOnly> resumed;
  if (!resume_path.empty()) resumed = load_encoder_only_checkpoint(resume_path, "train --resume");
  const EncoderOnlyTrainOptions o = resumed ? from_state(resumed->info.state, resume_path, requested) : requested;
  validate(o);

  const ToyCorpus corpus = make_toy_corpus();
  const auto train_sentences = french(corpus.train), valid_sentences = french(corpus.valid);
  std::optional<LoadedEncoderOnly> init;
  if (!resumed && !o.init_path.empty()) init = load_encoder_only_checkpoint(o.init_path, "train --init");
  LoadedEncoderOnly* from = resumed ? &*resumed : init ? &*init : nullptr;
  const Vocab vocab = from ? from->info.vocab : encoder_only_vocab(train_sentences);
  check_encoder_only_vocab(vocab, "train");
  std::unique_ptr<EncoderOnly> model;
  if (from) {
    model = std::move(from->model);
  } else {
    EncoderOnlyConfig c{.vocab = vocab.size(),
                        .d_model = o.d_model,
                        .d_ff = o.d_ff,
                        .heads = o.heads,
                        .layers = o.layers,
                        .dropout = o.dropout,
                        .norm = o.norm,
                        .max_len = o.max_len,
                        .positions = o.positions,
                        .activation = o.activation,
                        .tie_embeddings = o.tie_embeddings,
                        .classes = 2};
    model = std::make_unique<EncoderOnly>(c, o.seed);
  }
  model->train();
  if (!resumed && o.task == "classify") reset_classifier(*model, o.seed);
  if (!resumed) *model->dropout_generator() = Generator(o.seed, 1);

  Adam adam(model->parameters(), {.lr = 0, .beta1 = 0.9, .beta2 = 0.98, .eps = 1e-9});
  Generator data_gen(o.seed, 2);
  int64_t step = 0;
  if (resumed) {
    adam.load_state(resumed->optimizer_state);
    const SavedState saved(resumed->info.state, resume_path);
    restore_generator(data_gen, saved.text("train.data_generator"), resume_path);
    restore_generator(*model->dropout_generator(), saved.text("train.dropout_generator"), resume_path);
    step = saved.integer("train.step");
  }
  const std::vector<LabelledSentence> labelled =
      o.task == "classify" ? negation_task({corpus.train.begin(), corpus.train.begin() + o.labelled})
                           : std::vector<LabelledSentence>{};
  const NoamSchedule schedule(model->config().d_model, o.warmup, o.lr);
  const int64_t last_step = o.stop_after > 0 ? std::min(o.stop_after, o.steps) : o.steps;

  EncoderOnlyReport report;
  report.first_step = step + 1;
  prepare_run_directory(o.out_dir, resume_path);
  report.checkpoint_path = run_checkpoint_path(o.out_dir);
  auto save = [&] {
    EncoderOnlyCheckpointInfo info{model->config(), vocab, negation_labels(), to_state(o)};
    info.state["train.step"] = std::to_string(step);
    info.state["train.data_generator"] = generator_state_text(data_gen);
    info.state["train.dropout_generator"] = generator_state_text(*model->dropout_generator());
    save_encoder_only_checkpoint(report.checkpoint_path, *model, adam.state(), info);
    keep_checkpoint(report.checkpoint_path, o.out_dir, step, o.keep_last);
  };
  auto say = [&](const std::string& line) {
    if (!o.quiet) std::cout << line << "\n" << std::flush;
  };
  // A line of the results: printed unless quiet, and kept in the report either way.
  auto result = [&](const std::string& line) { report.summary.push_back(line), say(line); };
  say(message("training encoder-only ", o.task, ": ", model->parameter_count(), " parameters (d_model ",
              model->config().d_model, ", ", counted(model->config().layers, "layer"), ", ",
              counted(model->config().heads, "head"), "), ", o.steps, " steps of ", o.batch_size, " sentences",
              o.task == "classify" ? message(" from ", o.labelled, " labelled") : "",
              o.init_path.empty() ? "" : message(", from ", o.init_path)));
  double window = 0;
  StepProfile profile(o.profile_path, /*first_step=*/step + 1, last_step);
  while (step < last_step) {
    ++step;
    profile.before(step);
    const auto t0 = std::chrono::steady_clock::now();
    std::optional<profiler::Scope> step_region(std::in_place, "train step", profiler::Phase::Other,
                                               profiler::Kind::Region);
    adam.set_lr(schedule.rate(step));
    std::optional<profiler::Scope> data(std::in_place, "sentence batch", profiler::Phase::Data);
    std::optional<profiler::Scope> forward;  // from the batch's model input to the loss
    Variable loss;
    if (o.task == "mlm") {
      std::vector<std::vector<int64_t>> ids;
      for (int64_t i : draw_indices(o.batch_size, static_cast<int64_t>(train_sentences.size()), data_gen))
        ids.push_back(vocab.encode(train_sentences[static_cast<size_t>(i)]));
      const MlmBatch b = mask_tokens(encode_sequences(ids), vocab.size(), data_gen);
      data.reset();
      forward.emplace("forward", profiler::Phase::Forward, profiler::Kind::Region);
      // "T_i will be used to predict the original token with cross entropy loss": only chosen positions count
      loss = cross_entropy(model->mlm_logits(model->encode(b.input)), b.labels, {.ignore_index = Vocab::pad});
    } else {
      const ClassifyBatch b = collate_labelled(labelled, draw_indices(o.batch_size, o.labelled, data_gen), vocab);
      data.reset();
      forward.emplace("forward", profiler::Phase::Forward, profiler::Kind::Region);
      loss = cross_entropy(model->class_logits(model->encode(b.ids)), b.labels);  // [B, C] against [B]
    }
    forward.reset();
    backward_and_update(loss, adam, o.clip);
    step_region.reset();
    report.train_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (const auto table = profile.after(step)) say(*table);
    report.losses.push_back(loss.item());
    window += loss.item();
    if (step % o.log_every == 0 || step == last_step) {
      say(message("step ", step, ": loss ", window / static_cast<double>((step - 1) % o.log_every + 1), ", lr ",
                  adam.lr()));
      window = 0;
    }
    if (o.save_every > 0 && step % o.save_every == 0 && step != last_step) save();
  }
  report.steps = step - report.first_step + 1;
  save();
  if (o.task == "mlm") {
    const std::vector<std::vector<std::string>> valid(valid_sentences.begin(), valid_sentences.begin() + 500);
    std::tie(report.valid_loss, report.valid_accuracy) = mlm_evaluate(*model, vocab, valid, o.seed);
    result(message("valid (500 sentences): MLM loss ", report.valid_loss, " per chosen token, ",
                   100 * report.valid_accuracy, "% of chosen tokens recovered"));
  } else {
    report.valid_accuracy = classify_accuracy(*model, vocab, negation_task(corpus.valid));
    report.test_accuracy = classify_accuracy(*model, vocab, negation_task(corpus.test));
    result(message("accuracy: valid ", 100 * report.valid_accuracy, "%, test ", 100 * report.test_accuracy,
                   "% (1000 sentences each)"));
  }
  result(message("trained ", report.steps, " steps in ", report.train_seconds, " s; saved ", report.checkpoint_path));
  return report;
}

// The hook train() dispatches to (trainer.h): the shared options mapped onto the encoder-only ones.
TrainReport train_encoder_only(const TrainOptions& shared, const std::string& resume_path) {
  EncoderOnlyTrainOptions o = default_encoder_only_options(shared.task == "classify" ? "classify" : "mlm");
  if (shared.task != "mlm" && shared.task != "classify" && resume_path.empty())
    throw TrainOptionError("task", message("must be mlm or classify for encoder-only, got '", shared.task, "'"));
  o.d_model = shared.d_model, o.d_ff = shared.d_ff, o.heads = shared.heads, o.layers = shared.layers;
  o.dropout = shared.dropout, o.norm = shared.norm, o.positions = shared.positions, o.activation = shared.activation;
  o.max_len = shared.max_len, o.batch_size = shared.batch_size, o.lr = shared.lr, o.warmup = shared.warmup;
  o.clip = shared.clip, o.seed = shared.seed, o.out_dir = shared.out_dir, o.log_every = shared.log_every;
  o.save_every = shared.save_every, o.stop_after = shared.stop_after, o.quiet = shared.quiet;
  o.keep_last = shared.keep_last, o.profile_path = shared.profile_path;
  const EncoderOnlyReport r = train_encoder_only(o, resume_path);
  TrainReport report;
  report.first_step = r.first_step, report.steps = r.steps, report.losses = r.losses;
  report.train_seconds = r.train_seconds, report.valid_loss = r.valid_loss, report.checkpoint_path = r.checkpoint_path;
  report.summary = r.summary;
  return report;
}

}  // namespace gradformer
