#include "transformer/train/trainer.h"

#include <chrono>
#include <cmath>
#include <iostream>
#include <limits>

#include "autograd/all.h"
#include "nn/clip.h"
#include "nn/schedule.h"
#include "tensor/kernels/parallel.h"
#include "tensor/support/saved_state.h"
#include "transformer/inspect/svg.h"
#include "transformer/store/average.h"
#include "transformer/train/progress.h"
#include "transformer/train/run_directory.h"
#include "transformer/train/run_inputs.h"
#include "transformer/train/step_profile.h"

namespace gradformer {

// ---- one step -------------------------------------------------------------------------------------

double train_step(Adam& adam, const TrainBatch& batch, double lr, double clip) {
  using profiler::Kind, profiler::Phase, profiler::Scope;
  adam.set_lr(lr);
  int64_t scored = 0;
  for (const Piece& piece : batch.pieces) scored += piece.scored;
  adam.zero_grad();  // the gradients accumulate: clear the last step's before the first backward
  double value = 0;
  for (const Piece& piece : batch.pieces) {
    std::optional<Scope> forward(std::in_place, "forward", Phase::Forward, Kind::Region);
    // loss = sum_i (n_i / n) * mean loss of piece i = the mean over all n scored tokens of the batch
    const double weight = static_cast<double>(piece.scored) / static_cast<double>(scored);
    const Variable loss = piece.loss() * weight;
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
  double norm = 0;
  try {
    norm = clip_grad_norm(adam.parameters(), clip > 0 ? clip : std::numeric_limits<double>::max());
  } catch (const ValueError& e) {  // clip_grad_norm's only error here: a non-finite norm, naming the parameter
    throw NonFiniteError(message("the gradient norm is not finite (", e.what(), ")"));
  }
  // A finite norm whose squares overflow would leave inf in Adam's second moment for good, and in
  // every checkpoint after: the run has diverged as surely as with a NaN.
  if (const std::string overflow = adam.second_moment_overflow(clip > 0 ? std::min(norm, clip) : norm);
      !overflow.empty())
    throw NonFiniteError(overflow);
  adam.step();
  return value;
}

namespace {

// The step that diverged, run again (same parameters, same batch) under anomaly mode, which names
// the first op whose output or gradient was not finite. Only after a divergence: anomaly mode
// checks every result, too slow for every step.
std::string first_non_finite_op(Adam& adam, const TrainBatch& batch) {
  DetectAnomalyGuard anomaly;
  try {
    adam.zero_grad();
    for (const Piece& piece : batch.pieces) piece.loss().backward();
  } catch (const AnomalyError& e) {
    return e.what();
  }
  return "";  // not reproduced (dropout draws differently the second time)
}

// ---- the options a run goes by ---------------------------------------------------------------------

// Resuming takes the checkpoint's options, so the run continues as it began, but the output ones
// from the caller: where to write and how much to say are the resumer's business.
TrainOptions run_options(const TrainOptions& requested, const CheckpointFile* resumed) {
  if (!resumed) return requested;
  TrainOptions o = options_from_state(resumed->state, resumed->path, resumed->arch, resumed->metadata);
  resume_inputs(o, requested, resumed->state, resumed->path);
  o.out_dir = requested.out_dir, o.metrics_path = requested.metrics_path, o.log_every = requested.log_every;
  o.quiet = requested.quiet, o.stop_after = requested.stop_after, o.profile_path = requested.profile_path;
  if (requested.resume_keep_last) o.keep_last = *requested.resume_keep_last;
  if (requested.resume_epochs > 0) o.epochs = requested.resume_epochs, o.steps = 0;
  if (requested.resume_steps > 0) o.steps = requested.resume_steps;
  return o;
}

std::unique_ptr<TrainingTask> make_task(const TrainOptions& o, const CheckpointFile* resumed) {
  switch (o.arch) {
    case Architecture::DecoderOnly:
      return make_decoder_only_task(o, resumed);
    case Architecture::EncoderOnly:
      return make_encoder_only_task(o, resumed);
    case Architecture::EncoderDecoder:
      break;
  }
  return make_encoder_decoder_task(o, resumed);
}

// ---- what the run says as it goes ------------------------------------------------------------------

// Of the token slots computed, the share that held padding (0 when none were counted).
double padding_fraction(int64_t real, int64_t slots) {
  return slots > 0 ? 1.0 - static_cast<double>(real) / static_cast<double>(slots) : 0;
}

// Every log_every steps the mean training loss per scored token since the last report (a progress
// line, a metrics line, a point of the curve); validation losses on a second curve.
class TrainingLog {
 public:
  TrainingLog(const TrainOptions& o, int64_t total_steps, int64_t first_step)
      : o_(o),
        progress_(total_steps, o.metrics_path, /*print=*/!o.quiet, first_step),
        // The training loss includes label smoothing (its floor is above 0); the validation loss does not.
        train_curve_{
            o.label_smoothing > 0 ? message("train (label smoothing ", o.label_smoothing, ")") : "train", {}, {}} {}

  void step(int64_t step, double loss, const TrainBatch& batch, double lr, bool last) {
    for (const Piece& piece : batch.pieces)
      window_loss_ += loss * static_cast<double>(piece.scored), window_scored_ += piece.scored;
    window_slots_ += batch.slots, window_real_ += batch.real;
    if (step % o_.log_every != 0 && !last) return;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - window_start_).count();
    const double mean = window_loss_ / static_cast<double>(window_scored_);
    train_curve_.x.push_back(static_cast<double>(step)), train_curve_.y.push_back(mean);
    // The batching in every line of a planned corpus, so each line of a metrics file says how its run was batched.
    const double padding = padding_fraction(window_real_, window_slots_);
    progress_.report(
        step, {{"loss", mean}, {"lr", lr}, {"tokens/s", static_cast<double>(window_scored_) / seconds}},
        planned_ ? std::vector<std::pair<std::string, std::string>>{{"padding", exact_text(padding)},
                                                                    {"batching",
                                                                     message("\"", batching_name(o_.batching), "\"")},
                                                                    {"pieces", std::to_string(o_.pieces)}}
                 : std::vector<std::pair<std::string, std::string>>{});
    window_loss_ = 0, window_scored_ = window_slots_ = window_real_ = 0;
    window_start_ = std::chrono::steady_clock::now();
  }

  void valid_loss(int64_t step, double loss) {
    valid_curve_.x.push_back(static_cast<double>(step)), valid_curve_.y.push_back(loss);
  }
  void settings(const std::map<std::string, std::string>& entries) { progress_.settings(entries); }
  void finish() { progress_.finish(); }
  void write_loss_plot(const std::string& path) const {
    if (train_curve_.x.empty()) return;
    LinePlot plot{.title = o_.task + ": loss per scored token", .series = {train_curve_}};
    if (!valid_curve_.x.empty()) plot.series.push_back(valid_curve_);
    write_svg(path, line_plot_svg(plot));
  }

 private:
  const TrainOptions& o_;
  const bool planned_ = o_.arch == Architecture::EncoderDecoder && o_.task != "copy";  // batched by plan_batches
  Progress progress_;
  PlotSeries train_curve_, valid_curve_{"valid", {}, {}};
  double window_loss_ = 0;
  int64_t window_scored_ = 0, window_slots_ = 0, window_real_ = 0;
  std::chrono::steady_clock::time_point window_start_ = std::chrono::steady_clock::now();
};

// Every `every` steps (0: never), but not at the last one: the end of the run does it anyway.
bool due(int64_t every, int64_t step, int64_t last_step) { return every > 0 && step % every == 0 && step != last_step; }

// ---- the run ---------------------------------------------------------------------------------------------

class Run {
 public:
  Run(const TrainOptions& requested, const std::string& resume_path) {
    if (!resume_path.empty()) resumed_ = read_checkpoint_file(resume_path);
    const CheckpointFile* resumed = resumed_ ? &*resumed_ : nullptr;
    o_ = run_options(requested, resumed);
    validate(o_, /*new_model=*/!resumed && o_.init_path.empty());
    try {
      task_ = make_task(o_, resumed);  // the model, the data, and the batches some tasks make at once
    } catch (const MemoryError& e) {
      throw MemoryError(message("train: ", e.what(), "; the model and its batches of ", o_.batch_size,
                                " sequences do not fit in memory: give a smaller --batch-size"));
    }
    inputs_ = input_identities(o_);  // once the task has read them
    task_->model().train();
    // Adam over what is trained: a LoRA fine-tuning's frozen weights get no moments (nor gradients).
    std::vector<Variable> trained;
    for (const Variable& p : task_->model().parameters())
      if (p.requires_grad()) trained.push_back(p);
    adam_ = std::make_unique<Adam>(std::move(trained), AdamOptions{.lr = 0, .beta2 = 0.98, .eps = 1e-9});
    if (resumed) restore(*resumed);
    total_steps_ = o_.steps > 0 ? o_.steps : o_.epochs * task_->batches_per_epoch();
    if (resumed && (requested.resume_epochs > 0 || requested.resume_steps > 0) && total_steps_ <= step_) {
      const bool steps = o_.steps > 0;
      throw TrainOptionError(steps ? "steps" : "epochs",
                             message("must be at least ", steps ? step_ + 1 : step_ / task_->batches_per_epoch() + 1,
                                     " to continue the run from step ", step_, " (", task_->batches_per_epoch(),
                                     " batches per epoch), got ", steps ? o_.steps : o_.epochs));
    }
    last_step_ = o_.stop_after > 0 ? std::min(o_.stop_after, total_steps_) : total_steps_;
    // One run per folder; the run it replaces stays until this one has a checkpoint. The metrics
    // file is written from the first step, before that checkpoint: it cannot be the old run's.
    folder_.emplace(o_.out_dir, resume_path);
    if (!o_.metrics_path.empty() && folder_->replaces(o_.metrics_path))
      throw TrainOptionError("metrics_path",
                             message("is ", o_.metrics_path, ", the metrics file of the run this one replaces, which ",
                                     "must stay until this run has a checkpoint; give another file"));
    report_.arch = o_.arch, report_.task = o_.task, report_.own_data = !o_.data_path.empty();
    report_.first_step = step_ + 1;
    report_.checkpoint_path = run_checkpoint_path(o_.out_dir);
  }

  TrainReport run();

 private:
  // Everything the next step depends on besides the parameters: Adam's moments, the data's
  // position, the dropout generator and the step (what save() writes).
  void restore(const CheckpointFile& resumed) {
    adam_->load_state(resumed.optimizer_state);
    task_->restore_data(resumed.state, resumed.path);
    const SavedState saved(resumed.state, resumed.path);
    restore_generator(task_->dropout_generator(), saved.text("train.dropout_generator"), resumed.path);
    step_ = saved.integer("train.step");
    if (step_ < 0 || step_ > kMostSteps)
      throw CheckpointError(message(resumed.path, ": train.step should be a step number from 0 to ", kMostSteps,
                                    " (the most steps a run can have), got ", step_));
  }

  void save() {
    refuse_non_finite_state();
    std::map<std::string, std::string> state = options_to_state(o_);
    state.merge(task_->data_state());
    state.merge(std::map(inputs_));
    state["train.step"] = std::to_string(step_);
    state["train.dropout_generator"] = generator_state_text(task_->dropout_generator());
    task_->save(report_.checkpoint_path, adam_->state(), state);
    folder_->checkpoint_written({o_.metrics_path});
    keep_checkpoint(report_.checkpoint_path, o_.out_dir, step_, o_.keep_last);
  }

  // Every step's loss and gradient norm were finite, yet an update can still overflow a parameter
  // (a huge learning rate): the step that did it diverged, and its state is not saved.
  void refuse_non_finite_state() const {
    std::string bad = first_non_finite_tensor(task_->model().state_dict());
    if (const std::string moment = bad.empty() ? first_non_finite_tensor(adam_->state()) : ""; !moment.empty())
      bad = "optimizer." + moment;
    if (!bad.empty())
      throw NonFiniteError(message("train: step ", step_, " diverged: after its update, ", bad,
                                   ". No checkpoint written for it: lower the learning rate, or clip the gradients"));
  }

  void print(const std::string& line) const {
    if (!o_.quiet) std::cout << line << "\n" << std::flush;
  }
  // A line of the run's results: printed unless quiet, and kept in the report either way.
  void result(const std::string& line) {
    report_.summary.push_back(line);
    print(line);
  }

  double step(const NoamSchedule& schedule, StepProfile& profile, TrainingLog& log);
  void finish(TrainingLog& log);

  std::optional<CheckpointFile> resumed_;
  std::optional<RunFolder> folder_;
  TrainOptions o_;
  std::map<std::string, std::string> inputs_;  // the input files' paths and fingerprints (run_inputs.h)
  std::unique_ptr<TrainingTask> task_;
  std::unique_ptr<Adam> adam_;
  int64_t step_ = 0, total_steps_ = 0, last_step_ = 0;
  int64_t run_slots_ = 0, run_real_ = 0;
  TrainReport report_;
};

// The next step: its batch, forward, backward and update, timed and profiled, then logged.
double Run::step(const NoamSchedule& schedule, StepProfile& profile, TrainingLog& log) {
  ++step_;
  profile.before(step_);
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<profiler::Scope> step_region;  // the step's Region event: the batch, then train_step
  step_region.emplace("train step", profiler::Phase::Other, profiler::Kind::Region);
  const double lr = schedule.rate(step_);
  double loss = 0;
  TrainBatch batch;
  try {
    batch = task_->next_batch();
    loss = train_step(*adam_, batch, lr, o_.clip);
  } catch (const MemoryError& e) {
    log.finish();
    throw MemoryError(
        message("train: step ", step_, ": ", e.what(), "; a batch of ", o_.batch_size,
                " sequences and what the step computes from it do not fit in memory: ", "give a smaller --batch-size"));
  } catch (const NonFiniteError& e) {
    log.finish();
    const std::string op = first_non_finite_op(*adam_, batch);
    throw NonFiniteError(
        message("train: step ", step_, " diverged: ", e.what(), " at learning rate ", lr, "; ",
                op.empty() ? "every op's result was finite when the step ran again under autograd's anomaly mode" : op,
                ". No checkpoint written for it: lower the learning rate, or clip the gradients"));
  }
  step_region.reset();
  report_.train_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (const auto table = profile.after(step_)) print(*table);
  report_.losses.push_back(loss);
  for (const Piece& piece : batch.pieces) report_.scored_tokens += piece.scored;
  run_slots_ += batch.slots, run_real_ += batch.real;
  log.step(step_, loss, batch, adam_->lr(), step_ == last_step_);
  return loss;
}

TrainReport Run::run() {
  print(message("training ", architecture_name(o_.arch), " ", o_.task, ": ", task_->describe(), ", ",
                counted(total_steps_, "step"), " of ", counted(task_->batches_per_epoch(), "batch", "batches"),
                " per epoch, ", counted(num_threads(), "thread")));
  TrainingLog log(o_, total_steps_, /*first_step=*/step_ + 1);
  std::map<std::string, std::string> settings = options_to_state(o_);
  settings.merge(task_->configuration());
  log.settings(settings);
  const NoamSchedule schedule(task_->d_model(), o_.warmup, o_.lr);
  StepProfile profile(o_.profile_path, /*first_step=*/step_ + 1, last_step_);
  while (step_ < last_step_) {
    step(schedule, profile, log);
    if (due(o_.eval_every, step_, last_step_))
      if (const auto valid = task_->valid_loss()) {
        log.valid_loss(step_, *valid);
        log.finish();  // end the progress line before printing
        print(message("step ", step_, ": valid loss ", *valid));
      }
    if (due(o_.save_every, step_, last_step_)) save();
  }
  log.finish();
  finish(log);
  return std::move(report_);
}

// The end of the run: the checkpoint, the summary, the validation loss, the loss curve and the task's own measures.
void Run::finish(TrainingLog& log) {
  report_.steps = step_ - report_.first_step + 1;
  report_.padding = padding_fraction(run_real_, run_slots_);
  report_.tokens_per_second =
      report_.train_seconds > 0 ? static_cast<double>(report_.scored_tokens) / report_.train_seconds : 0;
  save();
  result(message("trained ", report_.steps, " steps in ", Progress::format_duration(report_.train_seconds), " (",
                 static_cast<int64_t>(report_.tokens_per_second), " scored tokens/s); saved ",
                 report_.checkpoint_path));
  if (const auto valid = task_->valid_loss()) {
    report_.valid_loss = *valid;
    log.valid_loss(step_, *valid);
    result(message("valid loss ", *valid));
  }
  log.write_loss_plot(o_.out_dir + "/loss.svg");
  task_->evaluate(report_, [this](const std::string& line) { result(line); });
}

}  // namespace

TrainReport train(const TrainOptions& options, const std::string& resume_path) {
  return Run(options, resume_path).run();
}

}  // namespace gradformer
