#include "transformer/train/trainer.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <tuple>

#include "autograd/anomaly.h"
#include "nn/all.h"
#include "nn/clip.h"
#include "nn/schedule.h"
#include "tensor/parallel.h"
#include "tensor/saved_state.h"
#include "transformer/data/batch_stream.h"
#include "transformer/data/copy_task.h"
#include "transformer/data/data_error.h"
#include "transformer/data/toy_corpus.h"
#include "transformer/train/average.h"
#include "transformer/train/checkpoint.h"
#include "transformer/train/encoder_only_checkpoint.h"
#include "transformer/train/encoder_only_trainer.h"
#include "transformer/train/lm_trainer.h"
#include "transformer/train/progress.h"
#include "transformer/train/run_directory.h"
#include "transformer/train/step_profile.h"
#include "transformer/train/svg.h"

namespace gradformer {

std::vector<std::string> architecture_tasks(Architecture arch) {
  switch (arch) {
    case Architecture::EncoderDecoder:
      return {"copy", "toy-translation", "corpus"};
    case Architecture::DecoderOnly:
      return {"toy-lm", "toy-translation"};
    case Architecture::EncoderOnly:
      return {"mlm", "classify"};  // encoder_only_trainer.h
  }
  return {};
}

TrainOptions default_train_options(const std::string& task, Architecture arch) {
  if (arch == Architecture::DecoderOnly) return default_decoder_only_options(task);
  if (arch == Architecture::EncoderOnly) {  // the encoder-only defaults, in the shared options' terms
    const EncoderOnlyTrainOptions e = default_encoder_only_options(task);
    TrainOptions o;
    o.arch = arch, o.task = task, o.out_dir = e.out_dir;
    o.d_model = e.d_model, o.d_ff = e.d_ff, o.heads = e.heads, o.layers = e.layers, o.dropout = e.dropout;
    o.max_len = e.max_len, o.activation = e.activation, o.positions = e.positions, o.tie_embeddings = e.tie_embeddings;
    o.batch_size = e.batch_size, o.lr = e.lr, o.warmup = e.warmup, o.clip = e.clip, o.log_every = e.log_every;
    return o;
  }
  TrainOptions o;
  o.arch = arch;
  o.task = task;
  o.out_dir = "runs/" + task;
  if (task == "copy") return o;  // the struct's defaults are the copy task's
  if (task != "toy-translation" && task != "corpus")
    throw ValueError(
        message("train: unknown task '", task, "' (copy, toy-translation, or corpus for pairs from data_path)"));
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
std::map<std::string, std::string> options_to_state(const TrainOptions& o) {
  auto num = [](auto v) { return message(v); };
  return {{"options.arch", architecture_name(o.arch)},
          {"options.task", o.task},
          {"options.data_path", o.data_path},
          {"options.valid_path", o.valid_path},
          {"options.test_path", o.test_path},
          {"options.out_dir", o.out_dir},
          {"options.metrics_path", o.metrics_path},
          {"options.log_every", num(o.log_every)},
          {"options.stop_after", num(o.stop_after)},
          {"options.quiet", o.quiet ? "true" : "false"},
          {"options.threads", num(num_threads())},
          {"options.batch_size", num(o.batch_size)},
          {"options.max_tokens", num(o.max_tokens)},
          {"options.batching", batching_name(o.batching)},
          {"options.pieces", num(o.pieces)},
          {"options.epochs", num(o.epochs)},
          {"options.batches_per_epoch", num(o.batches_per_epoch)},
          {"options.lr", exact_text(o.lr)},
          {"options.warmup", num(o.warmup)},
          {"options.label_smoothing", exact_text(o.label_smoothing)},
          {"options.clip", exact_text(o.clip)},
          {"options.seed", num(o.seed)},
          {"options.eval_every", num(o.eval_every)},
          {"options.save_every", num(o.save_every)},
          {"options.keep_last", num(o.keep_last)},
          {"options.beam", num(o.beam)}};
}

TrainOptions options_from_state(const std::map<std::string, std::string>& s, const std::string& source) {
  const SavedState saved(s, source);
  auto get = [&](const std::string& key) -> const std::string& { return saved.text("options." + key); };
  auto integer = [&](const std::string& key) { return saved.integer("options." + key); };
  auto number = [&](const std::string& key) { return saved.number("options." + key); };
  // Runs saved before the family had architectures were encoder-decoder runs.
  const auto arch = s.find("options.arch");
  TrainOptions o = default_train_options(
      get("task"), arch == s.end() ? Architecture::EncoderDecoder : parse_architecture(arch->second));
  o.data_path = get("data_path"), o.valid_path = get("valid_path"), o.test_path = get("test_path");
  o.batch_size = integer("batch_size"), o.max_tokens = integer("max_tokens"), o.epochs = integer("epochs");
  // Runs saved before the batching could be chosen were planned by length, in one piece.
  const auto batching = s.find("options.batching");
  if (batching != s.end() && batching->second != "random" && batching->second != "length")
    throw CheckpointError(message(source, ": options.batching is '", batching->second, "', not random or length"));
  o.batching = batching == s.end() ? Batching::Length : parse_batching(batching->second);
  o.pieces = batching == s.end() ? 1 : integer("pieces");
  o.batches_per_epoch = integer("batches_per_epoch"), o.warmup = integer("warmup");
  o.lr = number("lr"), o.label_smoothing = number("label_smoothing"), o.clip = number("clip");
  o.seed = static_cast<uint64_t>(integer("seed")), o.eval_every = integer("eval_every");
  o.save_every = integer("save_every"), o.beam = integer("beam");
  return o;
}

// ---- one step -------------------------------------------------------------------------------------

double train_step(EncoderDecoder& model, Adam& adam, const std::vector<Batch>& pieces, const StepOptions& options) {
  using profiler::Kind, profiler::Phase, profiler::Scope;
  adam.set_lr(options.lr);
  int64_t ntokens = 0;
  for (const Batch& piece : pieces) ntokens += piece.ntokens;
  adam.zero_grad();  // the gradients accumulate: clear the last step's before the first backward
  double value = 0;
  for (const Batch& piece : pieces) {
    std::optional<Scope> forward(std::in_place, "forward", Phase::Forward, Kind::Region);
    // loss = sum_i (n_i / n) * mean loss of piece i = the mean over all n target tokens of the batch
    const double weight = static_cast<double>(piece.ntokens) / static_cast<double>(ntokens);
    const Variable loss = cross_entropy(teacher_forced_logits(model, piece), piece.tgt_out, options.loss) * weight;
    const double part = loss.item();
    forward.reset();
    // A NaN would otherwise train on silently (every later loss NaN) and be saved as the model.
    if (!std::isfinite(part))
      throw NonFiniteError(message("the loss is ", std::isnan(part) ? "nan" : part < 0 ? "-inf" : "inf"));
    value += part;
    const Scope region("backward", Phase::Backward, Kind::Region);
    loss.backward();  // adds this piece's share to the gradients
  }
  const Scope region("optimizer", Phase::Optimizer, Kind::Region);
  // The global norm is needed anyway to clip; without clipping, a bound no finite norm exceeds
  // measures it (one pass over the gradients, small beside the backward pass) and changes nothing.
  try {
    clip_grad_norm(adam.parameters(), options.clip > 0 ? options.clip : std::numeric_limits<double>::max());
  } catch (const ValueError& e) {  // clip_grad_norm's only error here: a non-finite norm, naming the parameter
    throw NonFiniteError(message("the gradient norm is not finite (", e.what(), ")"));
  }
  adam.step();
  return value;
}

namespace {

// ---- the options a run goes by ---------------------------------------------------------------------

// Resuming takes the checkpoint's options, so the run continues as it began, but the output ones
// from the caller: where to write and how much to say are the resumer's business.
TrainOptions run_options(const TrainOptions& requested, const LoadedCheckpoint* resumed,
                         const std::string& resume_path) {
  if (!resumed) return requested;
  TrainOptions o = options_from_state(resumed->info.state, resume_path);
  o.out_dir = requested.out_dir, o.metrics_path = requested.metrics_path, o.log_every = requested.log_every;
  o.quiet = requested.quiet, o.stop_after = requested.stop_after, o.profile_path = requested.profile_path;
  o.keep_last = requested.keep_last;
  if (requested.resume_epochs > 0) o.epochs = requested.resume_epochs;
  // The model's options are the checkpoint's configuration (max_len bounds the sentences read).
  const TransformerConfig& c = resumed->info.config;
  o.d_model = c.d_model, o.d_ff = c.d_ff, o.heads = c.heads, o.layers = c.layers, o.dropout = c.dropout;
  o.norm = c.norm, o.tie_embeddings = c.tie_embeddings, o.max_len = c.max_len;
  return o;
}

// Checked before any work, so a bad value does not surface after the training (the beam) or not at all.
void validate(const TrainOptions& o) {
  const std::pair<const char*, int64_t> at_least_one[] = {{"epochs", o.epochs}, {"batch_size", o.batch_size},
                                                          {"warmup", o.warmup}, {"log_every", o.log_every},
                                                          {"beam", o.beam},     {"pieces", o.pieces}};
  for (const auto& [field, value] : at_least_one)
    if (value < 1) throw TrainOptionError(field, message("must be at least 1, got ", value));
  if (o.task == "copy" && o.batches_per_epoch < 1)
    throw TrainOptionError("batches_per_epoch", message("must be at least 1, got ", o.batches_per_epoch));
  // Far beyond any CPU run, and small enough that epochs x batches_per_epoch cannot overflow and
  // a batch of batch_size sentences is no allocation of terabytes.
  constexpr int64_t kMost = int64_t{1} << 30;
  const std::pair<const char*, int64_t> bounded[] = {{"epochs", o.epochs},
                                                     {"batches_per_epoch", o.batches_per_epoch},
                                                     {"batch_size", o.batch_size},
                                                     {"max_tokens", o.max_tokens},
                                                     {"pieces", o.pieces}};
  for (const auto& [field, value] : bounded)
    if (value > kMost) throw TrainOptionError(field, message("must be at most ", kMost, ", got ", value));
  const std::pair<const char*, int64_t> not_negative[] = {{"max_tokens", o.max_tokens},
                                                          {"eval_every", o.eval_every},
                                                          {"save_every", o.save_every},
                                                          {"keep_last", o.keep_last},
                                                          {"stop_after", o.stop_after}};
  for (const auto& [field, value] : not_negative)
    if (value < 0) throw TrainOptionError(field, message("must be at least 0, got ", value));
  // Written so that NaN fails too.
  if (!(o.label_smoothing >= 0 && o.label_smoothing < 1))
    throw TrainOptionError("label_smoothing", message("must be in [0, 1), got ", o.label_smoothing));
  if (!(o.lr > 0 && std::isfinite(o.lr))) throw TrainOptionError("lr", message("must be positive, got ", o.lr));
  if (!(o.clip >= 0 && std::isfinite(o.clip)))
    throw TrainOptionError("clip", message("must be at least 0 (0: no clipping), got ", o.clip));
  for (const auto& [field, path] : {std::pair<const char*, const std::string&>{"data_path", o.data_path},
                                    {"valid_path", o.valid_path},
                                    {"test_path", o.test_path},
                                    {"out_dir", o.out_dir},
                                    {"metrics_path", o.metrics_path}})
    require_utf8_path(field, path);
}

// The model's sizes, checked field by field before the data is read (TransformerConfig::validate
// checks them again, with the vocabularies, but cannot say which option was wrong). A resumed run
// takes its model from the checkpoint, so these apply to a new run only.
void validate_model(const TrainOptions& o) {
  using C = TransformerConfig;
  // max_len from 2: a token and the </s> or <s> collate adds (and max_len - 1 = 0 would mean "no
  // limit" to read_tsv).
  const std::tuple<const char*, int64_t, int64_t, int64_t> ranges[] = {{"d_model", o.d_model, 2, C::max_d_model},
                                                                       {"d_ff", o.d_ff, 1, C::max_d_ff},
                                                                       {"heads", o.heads, 1, C::max_heads},
                                                                       {"layers", o.layers, 1, C::max_layers},
                                                                       {"max_len", o.max_len, 2, C::max_max_len}};
  for (const auto& [field, value, least, most] : ranges)
    if (value < least || value > most)
      throw TrainOptionError(field, message("must be from ", least, " to ", most, ", got ", value));
  if (o.d_model % 2 != 0)
    throw TrainOptionError("d_model", message("must be even (sine and cosine pairs), got ", o.d_model));
  if (o.d_model % o.heads != 0)
    throw TrainOptionError("heads", message("must divide the model width ", o.d_model, ", got ", o.heads));
  if (!(o.dropout >= 0 && o.dropout < 1))
    throw TrainOptionError("dropout", message("must be in [0, 1), got ", o.dropout));
}

// ---- the task's data ----------------------------------------------------------------------------

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

// Resuming keeps the checkpoint's vocabularies: rebuilt from a changed file, the ids would shift.
TaskData make_task(const TrainOptions& o, const CheckpointInfo* resumed) {
  TaskData task;
  if (o.task == "copy") {
    const int64_t length = CopyTaskOptions{}.length;
    if (o.max_len < length)
      throw TrainOptionError("max_len", message("must be at least ", length, " for the copy task (its sequences are ",
                                                length, " tokens), got ", o.max_len));
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
    // A TSV file is checked as it is read (file:line of the first sentence too long); the toy
    // corpus is made in memory, so check it here, before training rather than in the forward pass.
    int64_t longest = 0;
    std::string where;
    for (const auto& [split, pairs] :
         {std::pair{"train", &corpus.train}, {"valid", &corpus.valid}, {"test", &corpus.test}})
      for (size_t i = 0; i < pairs->size(); ++i) {
        const SentencePair& p = (*pairs)[i];
        const int64_t tokens = static_cast<int64_t>(std::max(p.source.size(), p.target.size()));
        if (tokens > longest) longest = tokens, where = message(split, " pair ", i + 1);
      }
    if (longest > max_tokens)
      throw TrainOptionError(
          "max_len",
          message("must be at least ", longest + 1, " for the toy-translation corpus (its longest sentence, ", where,
                  ", has ", longest, " tokens, and </s> or <s> is added), got ", o.max_len));
    train = std::move(corpus.train), task.valid_pairs = std::move(corpus.valid),
    task.test_pairs = std::move(corpus.test);
  } else {
    if (o.data_path.empty())
      throw TrainOptionError("data_path", "is empty: the corpus task trains on the pairs of a TSV file");
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
  const BatchingOptions batching{
      .max_tokens = o.max_tokens, .max_sentences = o.batch_size, .batching = o.batching, .pieces = o.pieces};
  auto source =
      std::make_unique<CorpusStream>(encode_pairs(train, task.source_vocab, task.target_vocab), batching, o.seed);
  task.batches_per_epoch = source->batches_per_epoch();
  task.source = std::move(source);
  const std::vector<EncodedPair> valid = encode_pairs(task.valid_pairs, task.source_vocab, task.target_vocab);
  for (const auto& indices : plan_batches(valid, batching, nullptr))
    task.valid_batches.push_back(collate(valid, indices));
  return task;
}

// ---- the model, the optimizer and where the run stands --------------------------------------------

std::unique_ptr<EncoderDecoder> new_model(const TrainOptions& o, const TaskData& task) {
  TransformerConfig config{.src_vocab = task.source_vocab.size(),
                           .tgt_vocab = task.target_vocab.size(),
                           .d_model = o.d_model,
                           .d_ff = o.d_ff,
                           .heads = o.heads,
                           .layers = o.layers,
                           .dropout = o.dropout,
                           .norm = o.norm,
                           .max_len = o.max_len,
                           .tie_embeddings = o.tie_embeddings,
                           .activation = o.activation,
                           .positions = o.positions};
  config.validate();
  return std::make_unique<EncoderDecoder>(config, o.seed);
}

// Everything the next step depends on besides the parameters: Adam's moments, the data's position
// and the dropout generator. Returns the last step taken.
int64_t restore_training_state(const LoadedCheckpoint& resumed, const std::string& resume_path, Adam& adam,
                               BatchStream& source, EncoderDecoder& model) {
  adam.load_state(resumed.optimizer_state);
  source.restore(resumed.info.state, resume_path);
  const SavedState saved(resumed.info.state, resume_path);
  restore_generator(*model.dropout_generator(), saved.text("train.dropout_generator"), resume_path);
  const int64_t step = saved.integer("train.step");
  if (step < 0) throw CheckpointError(message(resume_path, ": train.step should be a step number, got ", step));
  return step;
}

// The restore above reads back exactly what this writes.
void save_run(const std::string& path, const TrainOptions& o, const TaskData& task, EncoderDecoder& model,
              const Adam& adam, int64_t step) {
  CheckpointInfo info{model.config(), task.source_vocab, task.target_vocab, options_to_state(o)};
  for (auto& [k, v] : task.source->state()) info.state[k] = v;
  info.state["train.step"] = std::to_string(step);
  info.state["train.dropout_generator"] = generator_state_text(*model.dropout_generator());
  save_checkpoint(path, model, adam.state(), info);
  keep_checkpoint(path, o.out_dir, step, o.keep_last);
}

void print(const TrainOptions& o, const std::string& line) {
  if (!o.quiet) std::cout << line << "\n" << std::flush;
}

// A line of the run's results: printed unless quiet, and kept in the report either way.
void result(const TrainOptions& o, TrainReport& report, const std::string& line) {
  report.summary.push_back(line);
  print(o, line);
}

// ---- what the run reports as it goes ----------------------------------------------------------------

// The token slots a step computed, source and target sides, and how many held real tokens.
struct TokenSlots {
  int64_t slots = 0, real = 0, target_tokens = 0;
  TokenSlots& operator+=(const TokenSlots& o) {
    slots += o.slots, real += o.real, target_tokens += o.target_tokens;
    return *this;
  }
  double padding() const { return slots > 0 ? 1.0 - static_cast<double>(real) / static_cast<double>(slots) : 0; }
};

TokenSlots token_slots(const std::vector<Batch>& pieces) {
  TokenSlots t;
  for (const Batch& piece : pieces) {
    const int64_t source_tokens =
        static_cast<int64_t>(sum(padding_mask(piece.src, Vocab::pad).to(DType::Int64)).item());
    t.slots += piece.src.numel() + piece.tgt_out.numel();
    t.real += source_tokens + piece.ntokens, t.target_tokens += piece.ntokens;
  }
  return t;
}

// Every log_every steps the mean training loss per target token since the last report (a
// progress line, a metrics line, a point of the curve); validation losses on a second curve.
class TrainingLog {
 public:
  TrainingLog(const TrainOptions& o, int64_t total_steps, int64_t first_step)
      : o_(o),
        progress_(total_steps, o.metrics_path, /*print=*/!o.quiet, first_step),
        // The training loss includes label smoothing (its floor is above 0); the validation loss does not.
        train_curve_{
            o.label_smoothing > 0 ? message("train (label smoothing ", o.label_smoothing, ")") : "train", {}, {}} {}

  void step(int64_t step, double loss, const TokenSlots& slots, double lr, bool last) {
    window_loss_ += loss * static_cast<double>(slots.target_tokens), window_slots_ += slots;
    if (step % o_.log_every != 0 && !last) return;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - window_start_).count();
    const double mean = window_loss_ / static_cast<double>(window_slots_.target_tokens);
    train_curve_.x.push_back(static_cast<double>(step)), train_curve_.y.push_back(mean);
    // The batching in every line, so each line of a metrics file says how its run was batched.
    progress_.report(
        step, {{"loss", mean}, {"lr", lr}, {"tokens/s", static_cast<double>(window_slots_.target_tokens) / seconds}},
        corpus_ ? std::vector<std::pair<std::string, std::string>>{{"padding", exact_text(window_slots_.padding())},
                                                                   {"batching",
                                                                    message("\"", batching_name(o_.batching), "\"")},
                                                                   {"pieces", std::to_string(o_.pieces)}}
                : std::vector<std::pair<std::string, std::string>>{});
    window_loss_ = 0, window_slots_ = {};
    window_start_ = std::chrono::steady_clock::now();
  }

  void valid_loss(int64_t step, double loss) {
    valid_curve_.x.push_back(static_cast<double>(step)), valid_curve_.y.push_back(loss);
  }

  void settings(const std::map<std::string, std::string>& entries) { progress_.settings(entries); }
  void finish() { progress_.finish(); }

  void write_loss_plot(const std::string& path) const {
    if (train_curve_.x.empty()) return;
    LinePlot plot{.title = o_.task + ": loss per target token", .series = {train_curve_}};
    if (!valid_curve_.x.empty()) plot.series.push_back(valid_curve_);
    write_svg(path, line_plot_svg(plot));
  }

 private:
  const TrainOptions& o_;
  const bool corpus_ = o_.task != "copy";  // batched by plan_batches
  Progress progress_;
  PlotSeries train_curve_, valid_curve_{"valid", {}, {}};
  double window_loss_ = 0;
  TokenSlots window_slots_;
  std::chrono::steady_clock::time_point window_start_ = std::chrono::steady_clock::now();
};

// The validation loss on the way, a point of the curve (in eval mode: dropout's generator is untouched).
void evaluate_midway(const TrainOptions& o, const TaskData& task, EncoderDecoder& model, int64_t step,
                     TrainingLog& log) {
  if (task.valid_batches.empty()) return;
  const double valid_loss = teacher_forced_loss(model, task.valid_batches);
  log.valid_loss(step, valid_loss);
  log.finish();  // end the progress line before printing
  print(o, message("step ", step, ": valid loss ", valid_loss));
}

// ---- evaluation at the end ---------------------------------------------------------------------------

// One sentence pair to draw the attention of, with a label per position of src and tgt_in.
struct AttentionExample {
  Batch batch;
  std::vector<std::string> source, target;
};

// The Annotated Transformer's check: fresh sequences copied exactly. The example is the next fresh one.
AttentionExample evaluate_copy_task(const TrainOptions& o, EncoderDecoder& model, TrainReport& report) {
  Generator eval_gen(o.seed, /*stream=*/3);
  report.copy_exact_match = copy_task_exact_match(model, 100, eval_gen);
  result(o, report,
         message("copy task: ", report.copy_exact_match, "/100 fresh sequences copied exactly (greedy decoding)"));
  AttentionExample example{copy_task_batch(1, eval_gen), {}, {}};
  for (int64_t id : example.batch.src.select(0, 0).to_vector<int64_t>()) example.source.push_back(std::to_string(id));
  example.target.assign(example.source.begin(), example.source.end() - 1);  // tgt_in = src[:-1]
  return example;
}

// BLEU and exact match of the valid and test pairs; the example is the first test (else valid) pair.
std::optional<AttentionExample> evaluate_translation_task(const TrainOptions& o, const TaskData& task,
                                                          EncoderDecoder& model, TrainReport& report) {
  auto evaluate = [&](const std::vector<SentencePair>& pairs, const char* split) {
    TranslationReport r = evaluate_translation(model, pairs, task.source_vocab, task.target_vocab, o.beam);
    result(o, report,
           message(split, ": BLEU ", r.bleu.bleu, ", exact match ", 100 * r.exact_match, "% of ", pairs.size(),
                   " sentences (", o.beam == 1 ? "greedy" : message("beam ", o.beam), ")"));
    return r;
  };
  if (!task.valid_pairs.empty()) report.valid_translation = evaluate(task.valid_pairs, "valid");
  if (!task.test_pairs.empty()) report.test_translation = evaluate(task.test_pairs, "test");
  const auto& pairs = task.test_pairs.empty() ? task.valid_pairs : task.test_pairs;
  if (pairs.empty()) return std::nullopt;
  const SentencePair& first = pairs.front();
  AttentionExample example{
      collate(encode_pairs({first}, task.source_vocab, task.target_vocab), {0}), first.source, {"<s>"}};
  example.source.push_back("</s>");
  example.target.insert(example.target.end(), first.target.begin(), first.target.end());
  return example;
}

// The validation loss, the loss curves, the task's own measure and the attention maps of one example.
void evaluate_at_end(const TrainOptions& o, const TaskData& task, EncoderDecoder& model, int64_t step, TrainingLog& log,
                     TrainReport& report) {
  if (!task.valid_batches.empty()) {
    report.valid_loss = teacher_forced_loss(model, task.valid_batches);
    log.valid_loss(step, report.valid_loss);
    result(o, report, message("valid loss ", report.valid_loss));
  }
  log.write_loss_plot(o.out_dir + "/loss.svg");
  const std::optional<AttentionExample> example =
      o.task == "copy" ? evaluate_copy_task(o, model, report) : evaluate_translation_task(o, task, model, report);
  if (example) {
    const auto maps =
        write_attention_maps(model, example->batch, example->source, example->target, o.out_dir + "/attention");
    result(
        o, report,
        message("wrote ", o.out_dir, "/loss.svg and ", maps.size(), " attention maps in ", o.out_dir, "/attention/"));
  }
}

}  // namespace

void validate_train_options(const TrainOptions& o) { validate(o); }

namespace {

// The step that diverged, run again (same parameters, same batch) under anomaly mode, which names
// the first op whose output or gradient was not finite. Only after a divergence: anomaly mode
// checks every result, too slow for every step.
std::string first_non_finite_op(EncoderDecoder& model, Adam& adam, const std::vector<Batch>& pieces,
                                const StepOptions& options) {
  DetectAnomalyGuard anomaly;
  try {
    adam.zero_grad();
    for (const Batch& piece : pieces)
      cross_entropy(teacher_forced_logits(model, piece), piece.tgt_out, options.loss).backward();
  } catch (const AnomalyError& e) {
    return e.what();
  }
  return "";  // not reproduced (dropout draws differently the second time)
}

// Every `every` steps (0: never), but not at the last one: the end of the run does it anyway.
bool due(int64_t every, int64_t step, int64_t last_step) { return every > 0 && step % every == 0 && step != last_step; }

}  // namespace

// ---- training --------------------------------------------------------------------------------------

TrainReport train(const TrainOptions& requested, const std::string& resume_path) {
  // The architecture from the metadata alone: an encoder-only configuration is not a TransformerConfig.
  const Architecture arch = resume_path.empty()
                                ? requested.arch
                                : parse_architecture(checkpoint_arch(load_safetensors(resume_path).metadata));
  if (arch == Architecture::DecoderOnly) return train_decoder_only(requested, resume_path);
  if (arch == Architecture::EncoderOnly) return train_encoder_only(requested, resume_path);
  std::optional<LoadedCheckpoint> resumed;
  if (!resume_path.empty()) resumed = load_checkpoint(resume_path);
  const TrainOptions o = run_options(requested, resumed ? &*resumed : nullptr, resume_path);
  validate(o);
  if (!resumed) validate_model(o);

  TaskData task = make_task(o, resumed ? &resumed->info : nullptr);
  const std::unique_ptr<EncoderDecoder> owned = resumed ? std::move(resumed->model) : new_model(o, task);
  EncoderDecoder& model = *owned;
  model.train();
  Adam adam(model.parameters(), {.lr = 0, .beta1 = 0.9, .beta2 = 0.98, .eps = 1e-9});
  int64_t step = resumed ? restore_training_state(*resumed, resume_path, adam, *task.source, model) : 0;
  if (resumed && requested.resume_epochs > 0 && o.epochs * task.batches_per_epoch <= step)
    throw TrainOptionError(
        "epochs", message("must be at least ", step / task.batches_per_epoch + 1, " to continue the run from step ",
                          step, " (", task.batches_per_epoch, " batches per epoch), got ", o.epochs));
  const NoamSchedule schedule(model.config().d_model, o.warmup, o.lr);
  const CrossEntropyOptions loss_options{.ignore_index = Vocab::pad, .label_smoothing = o.label_smoothing};
  const int64_t total_steps = o.epochs * task.batches_per_epoch;
  const int64_t last_step = o.stop_after > 0 ? std::min(o.stop_after, total_steps) : total_steps;

  prepare_run_directory(o.out_dir, resume_path);
  TrainReport report;
  report.first_step = step + 1;
  report.checkpoint_path = o.out_dir + "/model.safetensors";
  print(o, message("training ", o.task, ": ", model.parameter_count(), " parameters (d_model ", model.config().d_model,
                   ", ", counted(model.config().layers, "layer"), ", ", counted(model.config().heads, "head"), "), ",
                   total_steps, " steps of ", task.batches_per_epoch, " batches per epoch, ",
                   counted(num_threads(), "thread")));
  TrainingLog log(o, total_steps, /*first_step=*/step + 1);
  std::map<std::string, std::string> settings = options_to_state(o);
  settings.merge(config_to_metadata(model.config()));
  log.settings(settings);
  TokenSlots run_slots;
  StepProfile profile(o.profile_path, /*first_step=*/step + 1, last_step);

  while (step < last_step) {
    ++step;
    profile.before(step);
    const auto t0 = std::chrono::steady_clock::now();
    std::optional<profiler::Scope> step_region;  // the step's Region event: the batch, then train_step
    step_region.emplace("train step", profiler::Phase::Other, profiler::Kind::Region);
    const std::vector<Batch> pieces = task.source->next();
    const StepOptions step_options{.lr = schedule.rate(step), .loss = loss_options, .clip = o.clip};
    double loss = 0;
    try {
      loss = train_step(model, adam, pieces, step_options);
    } catch (const NonFiniteError& e) {
      log.finish();
      const std::string op = first_non_finite_op(model, adam, pieces, step_options);
      throw NonFiniteError(
          message("train: step ", step, " diverged: ", e.what(), " at learning rate ", step_options.lr, "; ",
                  op.empty() ? "autograd's anomaly mode (autograd/anomaly.h) can name the first op" : op,
                  ". No checkpoint written for it: lower the learning rate, or clip the gradients"));
    }
    step_region.reset();
    report.train_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (const auto table = profile.after(step)) print(o, *table);

    report.losses.push_back(loss);
    const TokenSlots slots = token_slots(pieces);
    report.target_tokens += slots.target_tokens, run_slots += slots;
    log.step(step, loss, slots, adam.lr(), step == last_step);
    if (due(o.eval_every, step, last_step)) evaluate_midway(o, task, model, step, log);
    if (due(o.save_every, step, last_step)) save_run(report.checkpoint_path, o, task, model, adam, step);
  }
  log.finish();
  report.steps = step - report.first_step + 1;
  report.padding = run_slots.padding();
  report.tokens_per_second =
      report.train_seconds > 0 ? static_cast<double>(report.target_tokens) / report.train_seconds : 0;
  save_run(report.checkpoint_path, o, task, model, adam, step);
  result(o, report,
         message("trained ", report.steps, " steps in ", Progress::format_duration(report.train_seconds), " (",
                 static_cast<int64_t>(report.tokens_per_second), " target tokens/s); saved ", report.checkpoint_path));
  evaluate_at_end(o, task, model, step, log, report);
  return report;
}

}  // namespace gradformer
