#include "transformer/train/lm_trainer.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <optional>

#include "autograd/all.h"
#include "nn/schedule.h"
#include "tensor/parallel.h"
#include "tensor/saved_state.h"
#include "transformer/data/data_error.h"
#include "transformer/data/toy_corpus.h"
#include "transformer/model/masks.h"
#include "transformer/model/sampling.h"
#include "transformer/train/average.h"
#include "transformer/train/bleu.h"
#include "transformer/train/progress.h"
#include "transformer/train/run_directory.h"
#include "transformer/train/step_profile.h"

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
  o.layers = 4;
  if (task == "toy-translation")
    o.layers = 5, o.d_ff = 480;  // 990,048 parameters: the encoder-decoder's 981,881, within 1%
  o.batch_size = 64;
  o.dropout = task == "toy-lm" ? 0.0 : 0.1;  // toy-lm never sees a sentence twice: nothing to overfit
  o.epochs = task == "toy-lm" ? 10 : 5;      // toy-translation: 785 steps, test BLEU 99.7 (chapter 14)
  o.batches_per_epoch = 100;                 // toy-lm: an "epoch" is 100 fresh batches
  o.lr = task == "toy-lm" ? 0.5 : 1.0;       // toy-lm: 1.0 plateaus at 1.98 nats/token for 300 steps, 0.5 does not
  o.warmup = 400;
  o.label_smoothing = task == "toy-lm" ? 0.0 : 0.1;
  o.clip = 1.0;
  o.log_every = 50;
  o.eval_every = 500;
  return o;
}

// ---- batches ------------------------------------------------------------------------------------

LmBatch make_lm_batch(const std::vector<LmSequence>& sequences, const std::vector<int64_t>& indices) {
  if (indices.empty()) throw ValueError("make_lm_batch: no sequences");
  const int64_t B = static_cast<int64_t>(indices.size());
  int64_t L = 0;
  for (int64_t i : indices) L = std::max(L, static_cast<int64_t>(sequences.at(static_cast<size_t>(i)).tokens.size()));
  if (L < 2)
    throw ValueError(message("make_lm_batch: a sequence needs at least 2 tokens (<s> and one to predict), got ", L));
  std::vector<int64_t> tokens(static_cast<size_t>(B * L), Vocab::pad), scored(tokens.size(), Vocab::pad);
  for (int64_t b = 0; b < B; ++b) {
    const LmSequence& s = sequences[static_cast<size_t>(indices[static_cast<size_t>(b)])];
    for (size_t t = 0; t < s.tokens.size(); ++t) {
      tokens[static_cast<size_t>(b * L) + t] = s.tokens[t];
      if (static_cast<int64_t>(t) >= s.first_scored) scored[static_cast<size_t>(b * L) + t] = s.tokens[t];
    }
  }
  const Tensor all = from_vector(tokens, {B, L}), targets_all = from_vector(scored, {B, L});  // [B, L]
  // The shift of causal language modelling: position t reads token t and predicts token t + 1.
  LmBatch batch;
  batch.inputs = all.narrow(1, 0, L - 1).contiguous();           // tokens[:, :-1]   [B, L-1]
  batch.targets = targets_all.narrow(1, 1, L - 1).contiguous();  // tokens[:, 1:]    [B, L-1], <pad> where not scored
  for (int64_t v : batch.targets.to_vector<int64_t>()) batch.ntokens += v != Vocab::pad;
  return batch;
}

// L_1 = -sum_i log P(u_i | u_<i), averaged over the scored tokens
Variable lm_loss(const DecoderOnly& model, const LmBatch& batch, double label_smoothing) {
  const Variable logits = model.forward(batch.inputs, target_mask(batch.inputs, Vocab::pad));  // [B, L-1, V]
  return cross_entropy(logits, batch.targets, {.ignore_index = Vocab::pad, .label_smoothing = label_smoothing});
}

double lm_eval_loss(DecoderOnly& model, const std::vector<LmBatch>& batches) {
  InferenceGuard guard(model);
  double total = 0;
  int64_t tokens = 0;
  for (const LmBatch& b : batches)
    total += lm_loss(model, b).item() * static_cast<double>(b.ntokens), tokens += b.ntokens;
  return total / static_cast<double>(tokens);
}

LmSequence translation_sequence(const std::vector<int64_t>& source, const std::vector<int64_t>& target, int64_t sep) {
  LmSequence s;
  s.tokens.push_back(Vocab::bos);
  s.tokens.insert(s.tokens.end(), source.begin(), source.end());
  s.tokens.push_back(sep);
  s.first_scored = static_cast<int64_t>(s.tokens.size());  // the first target token
  s.tokens.insert(s.tokens.end(), target.begin(), target.end());
  s.tokens.push_back(Vocab::eos);
  return s;
}

std::vector<std::string> translate_as_lm(DecoderOnly& model, const std::vector<std::string>& source,
                                         const Vocab& vocab) {
  std::vector<int64_t> prompt{Vocab::bos};
  for (int64_t id : vocab.encode(source)) prompt.push_back(id);
  prompt.push_back(vocab.id("<sep>"));
  Generator unused(0);  // greedy draws nothing
  const int64_t room = model.config().max_len - static_cast<int64_t>(prompt.size()) + 1;
  SamplingOptions o{.max_tokens = std::max<int64_t>(1, std::min<int64_t>(64, room)), .temperature = 0};
  std::vector<std::string> out;
  for (int64_t id : generate(model, prompt, o, unused)) {
    if (id == Vocab::eos) break;
    out.push_back(vocab.token(id));
  }
  return out;
}

LoadedDecoderOnly load_decoder_only_checkpoint(const std::string& path) {
  CheckpointContents contents = read_checkpoint(path);
  require_architecture(contents.info, Architecture::DecoderOnly, path);
  LoadedDecoderOnly out{std::move(contents.info), nullptr, std::move(contents.optimizer_state)};
  out.model = std::make_unique<DecoderOnly>(out.info.config, 0, skip_init);
  load_parameters(*out.model, contents.parameters, path);
  return out;
}

namespace {

constexpr uint64_t kValidSeed = 20260;  // the toy-lm validation sentences: the same for every run
constexpr int64_t kValidSentences = 2000;

std::vector<int64_t> with_specials(const std::vector<int64_t>& words) {
  std::vector<int64_t> s{Vocab::bos};
  s.insert(s.end(), words.begin(), words.end());
  s.push_back(Vocab::eos);
  return s;
}

// ---- where the batches come from ----------------------------------------------------------------------

class LmStream {
 public:
  virtual ~LmStream() = default;
  virtual LmBatch next() = 0;
  virtual std::map<std::string, std::string> state() const = 0;
  virtual void restore(const std::map<std::string, std::string>& state, const std::string& source) = 0;
};

// toy-lm: batch_size fresh French sentences of the grammar per batch.
class FreshToyStream : public LmStream {
 public:
  FreshToyStream(const Vocab& vocab, int64_t batch_size, uint64_t seed)
      : vocab_(vocab), batch_size_(batch_size), gen_(seed, 4) {}
  LmBatch next() override {
    std::vector<LmSequence> seqs;
    std::vector<int64_t> indices;
    for (int64_t i = 0; i < batch_size_; ++i) {
      seqs.push_back({with_specials(vocab_.encode(sample_toy_pair(gen_).source)), 1});
      indices.push_back(i);
    }
    return make_lm_batch(seqs, indices);
  }
  std::map<std::string, std::string> state() const override { return {{"data.generator", generator_state_text(gen_)}}; }
  void restore(const std::map<std::string, std::string>& state, const std::string& source) override {
    restore_generator(gen_, SavedState(state, source).text("data.generator"), source);
  }

 private:
  const Vocab& vocab_;
  int64_t batch_size_;
  Generator gen_;
};

// toy-translation: epochs over the sequences, each shuffled (Fisher-Yates) by the generator.
class EpochStream : public LmStream {
 public:
  EpochStream(std::vector<LmSequence> seqs, int64_t batch_size, uint64_t seed)
      : seqs_(std::move(seqs)), batch_size_(batch_size), gen_(seed, 4) {
    plan();
  }
  int64_t batches_per_epoch() const { return (static_cast<int64_t>(seqs_.size()) + batch_size_ - 1) / batch_size_; }
  LmBatch next() override {
    if (position_ == batches_per_epoch()) ++epoch_, position_ = 0, plan();
    const int64_t start = position_++ * batch_size_;
    const std::vector<int64_t> indices(
        order_.begin() + start,
        order_.begin() + std::min<int64_t>(start + batch_size_, static_cast<int64_t>(order_.size())));
    return make_lm_batch(seqs_, indices);
  }
  std::map<std::string, std::string> state() const override {
    Generator before(0);
    before.set_state(epoch_start_);
    return {{"data.epoch", std::to_string(epoch_)},
            {"data.position", std::to_string(position_)},
            {"data.epoch_generator", generator_state_text(before)}};
  }
  void restore(const std::map<std::string, std::string>& state, const std::string& source) override {
    const SavedState saved(state, source);
    epoch_ = saved.integer("data.epoch"), position_ = saved.integer("data.position");
    restore_generator(gen_, saved.text("data.epoch_generator"), source);
    plan();
  }

 private:
  void plan() {
    epoch_start_ = gen_.state();
    order_.resize(seqs_.size());
    for (size_t i = 0; i < order_.size(); ++i) order_[i] = static_cast<int64_t>(i);
    for (size_t i = order_.size(); i > 1; --i)
      std::swap(order_[i - 1], order_[static_cast<size_t>(gen_.integer(0, static_cast<int64_t>(i)))]);
  }
  std::vector<LmSequence> seqs_;
  int64_t batch_size_;
  Generator gen_;
  std::array<uint64_t, 2> epoch_start_{};
  std::vector<int64_t> order_;
  int64_t epoch_ = 0, position_ = 0;
};

struct LmTask {
  Vocab vocab;
  std::unique_ptr<LmStream> stream;
  int64_t batches_per_epoch = 0;
  std::vector<LmBatch> valid;
  double valid_entropy = -1;             // toy-lm: the grammar's entropy on the validation sentences
  std::vector<SentencePair> test_pairs;  // toy-translation
};

std::vector<LmBatch> in_batches(const std::vector<LmSequence>& seqs, int64_t size) {
  std::vector<LmBatch> out;
  for (int64_t start = 0; start < static_cast<int64_t>(seqs.size()); start += size) {
    std::vector<int64_t> indices;
    for (int64_t i = start; i < std::min<int64_t>(start + size, static_cast<int64_t>(seqs.size())); ++i)
      indices.push_back(i);
    out.push_back(make_lm_batch(seqs, indices));
  }
  return out;
}

LmTask make_lm_task(const TrainOptions& o, const CheckpointInfo* resumed) {
  LmTask task;
  const ToyCorpus corpus = make_toy_corpus();
  if (o.task == "toy-lm") {
    // French: its words show gender and number, so few choices of the grammar are invisible and
    // p(sentence) is a sum over at most four paths (see sample_scored_toy_pair).
    std::vector<std::vector<std::string>> french;
    for (const auto* split : {&corpus.train, &corpus.valid, &corpus.test})
      for (const SentencePair& p : *split) french.push_back(p.source);
    task.vocab = resumed ? resumed->target_vocab : Vocab::build(french);
    task.stream = std::make_unique<FreshToyStream>(task.vocab, o.batch_size, o.seed);
    task.batches_per_epoch = o.batches_per_epoch;
    Generator valid_gen(kValidSeed, 5);
    std::vector<LmSequence> valid;
    double neg_log_p = 0, tokens = 0;
    for (int64_t i = 0; i < kValidSentences; ++i) {
      const ScoredToyPair s = sample_scored_toy_pair(valid_gen);
      valid.push_back({with_specials(task.vocab.encode(s.pair.source)), 1});
      neg_log_p -= s.source_log_prob, tokens += static_cast<double>(s.pair.source.size() + 1);  // </s> counted
    }
    task.valid = in_batches(valid, 100);
    task.valid_entropy = neg_log_p / tokens;
    return task;
  }
  // toy-translation: one vocabulary for both languages and the separator.
  std::vector<std::vector<std::string>> words{{"<sep>"}};
  for (const SentencePair& p : corpus.train) words.push_back(p.source), words.push_back(p.target);
  task.vocab = resumed ? resumed->target_vocab : Vocab::build(words);
  const int64_t sep = task.vocab.id("<sep>");
  auto sequences = [&](const std::vector<SentencePair>& pairs) {
    std::vector<LmSequence> out;
    for (const SentencePair& p : pairs)
      out.push_back(translation_sequence(task.vocab.encode(p.source), task.vocab.encode(p.target), sep));
    return out;
  };
  auto stream = std::make_unique<EpochStream>(sequences(corpus.train), o.batch_size, o.seed);
  task.batches_per_epoch = stream->batches_per_epoch();
  task.stream = std::move(stream);
  task.valid = in_batches(sequences(corpus.valid), 100);
  task.test_pairs = corpus.test;
  return task;
}

void print(const TrainOptions& o, const std::string& line) {
  if (!o.quiet) std::cout << line << "\n" << std::flush;
}

void save_lm_run(const std::string& path, const TrainOptions& o, const LmTask& task, DecoderOnly& model,
                 const Adam& adam, int64_t step) {
  CheckpointInfo info{model.config(), task.vocab, task.vocab, options_to_state(o)};
  for (auto& [k, v] : task.stream->state()) info.state[k] = v;
  info.state["train.step"] = std::to_string(step);
  info.state["train.dropout_generator"] = generator_state_text(*model.dropout_generator());
  save_checkpoint(path, model, model.config(), adam.state(), info);
  keep_checkpoint(path, o.out_dir, step, o.keep_last);
}

}  // namespace

double toy_grammar_entropy_estimate(int64_t sentences, uint64_t seed) {
  Generator gen(seed, 5);
  double neg_log_p = 0, tokens = 0;
  for (int64_t i = 0; i < sentences; ++i) {
    const ScoredToyPair s = sample_scored_toy_pair(gen);
    neg_log_p -= s.source_log_prob, tokens += static_cast<double>(s.pair.source.size() + 1);
  }
  return neg_log_p / tokens;
}

TrainReport train_decoder_only(const TrainOptions& requested, const std::string& resume_path) {
  std::optional<LoadedDecoderOnly> resumed;
  if (!resume_path.empty()) resumed = load_decoder_only_checkpoint(resume_path);
  TrainOptions o = requested;
  if (resumed) {
    o = options_from_state(resumed->info.state, resume_path);
    o.out_dir = requested.out_dir, o.metrics_path = requested.metrics_path, o.log_every = requested.log_every;
    o.quiet = requested.quiet, o.stop_after = requested.stop_after, o.keep_last = requested.keep_last;
    o.profile_path = requested.profile_path;
  }
  validate_train_options(o);
  LmTask task = make_lm_task(o, resumed ? &resumed->info : nullptr);
  std::unique_ptr<DecoderOnly> owned;
  if (resumed) {
    owned = std::move(resumed->model);
  } else {
    TransformerConfig c = decoder_only_config(task.vocab.size());
    c.d_model = o.d_model, c.d_ff = o.d_ff, c.heads = o.heads, c.layers = o.layers, c.dropout = o.dropout,
    c.norm = o.norm;
    c.max_len = o.max_len, c.tie_embeddings = o.tie_embeddings, c.activation = o.activation, c.positions = o.positions;
    owned = std::make_unique<DecoderOnly>(c, o.seed);
  }
  DecoderOnly& model = *owned;
  model.train();
  Adam adam(model.parameters(), {.lr = 0, .beta1 = 0.9, .beta2 = 0.98, .eps = 1e-9});
  int64_t step = 0;
  if (resumed) {
    adam.load_state(resumed->optimizer_state);
    task.stream->restore(resumed->info.state, resume_path);
    const SavedState saved(resumed->info.state, resume_path);
    restore_generator(*model.dropout_generator(), saved.text("train.dropout_generator"), resume_path);
    step = saved.integer("train.step");
  }
  const NoamSchedule schedule(model.config().d_model, o.warmup, o.lr);
  const int64_t total_steps = o.epochs * task.batches_per_epoch;
  const int64_t last_step = o.stop_after > 0 ? std::min(o.stop_after, total_steps) : total_steps;
  prepare_run_directory(o.out_dir, resume_path);

  TrainReport report;
  report.first_step = step + 1;
  report.checkpoint_path = run_checkpoint_path(o.out_dir);
  // Printed unless quiet, and kept in the report either way.
  auto result = [&](const std::string& line) { report.summary.push_back(line), print(o, line); };
  // The metrics file only: the progress lines are printed below.
  Progress metrics(total_steps, o.metrics_path, /*print=*/false, /*first_step=*/step + 1);
  std::map<std::string, std::string> settings = options_to_state(o);
  settings.merge(config_to_metadata(model.config()));
  metrics.settings(settings);
  print(o, message("training decoder-only ", o.task, ": ", model.parameter_count(), " parameters (d_model ",
                   model.config().d_model, ", ", counted(model.config().layers, "layer"), ", ",
                   counted(model.config().heads, "head"), "), ", total_steps, " steps, ",
                   counted(num_threads(), "thread")));
  double window_loss = 0;
  int64_t window_tokens = 0;
  StepProfile profile(o.profile_path, /*first_step=*/step + 1, last_step);
  while (step < last_step) {
    ++step;
    profile.before(step);
    const auto t0 = std::chrono::steady_clock::now();
    std::optional<profiler::Scope> step_region(std::in_place, "train step", profiler::Phase::Other,
                                               profiler::Kind::Region);
    const LmBatch batch = [&] {
      const profiler::Scope data("language-model batch", profiler::Phase::Data);
      return task.stream->next();
    }();
    adam.set_lr(schedule.rate(step));
    std::optional<profiler::Scope> forward(std::in_place, "forward", profiler::Phase::Forward, profiler::Kind::Region);
    const Variable loss = lm_loss(model, batch, o.label_smoothing);
    forward.reset();
    backward_and_update(loss, adam, o.clip);
    step_region.reset();
    report.train_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (const auto table = profile.after(step)) print(o, *table);
    report.losses.push_back(loss.item());
    report.target_tokens += batch.ntokens;
    window_loss += loss.item() * static_cast<double>(batch.ntokens), window_tokens += batch.ntokens;
    if (step % o.log_every == 0 || step == last_step) {
      const double mean = window_loss / static_cast<double>(window_tokens);
      print(o, message("step ", step, "/", total_steps, ": loss ", mean, ", lr ", adam.lr()));
      metrics.report(step, {{"loss", mean}, {"lr", adam.lr()}});
      window_loss = 0, window_tokens = 0;
    }
    if (o.eval_every > 0 && step % o.eval_every == 0 && step != last_step)
      print(o, message("step ", step, ": valid loss ", lm_eval_loss(model, task.valid)));
    if (o.save_every > 0 && step % o.save_every == 0 && step != last_step)
      save_lm_run(report.checkpoint_path, o, task, model, adam, step);
  }
  report.steps = step - report.first_step + 1;
  report.tokens_per_second =
      report.train_seconds > 0 ? static_cast<double>(report.target_tokens) / report.train_seconds : 0;
  save_lm_run(report.checkpoint_path, o, task, model, adam, step);
  result(message("trained ", report.steps, " steps in ", report.train_seconds, " s (",
                 static_cast<int64_t>(report.tokens_per_second), " scored tokens/s); saved ", report.checkpoint_path));
  report.valid_loss = lm_eval_loss(model, task.valid);
  if (task.valid_entropy >= 0) {
    report.entropy_floor = task.valid_entropy;
    result(message("valid loss ", report.valid_loss, " nats/token; the grammar's entropy on the same ", kValidSentences,
                   " sentences ", task.valid_entropy, " nats/token; gap ", report.valid_loss - task.valid_entropy));
  } else {
    result(message("valid loss ", report.valid_loss, " nats per target token"));
  }
  if (!task.test_pairs.empty()) {
    TranslationReport r;
    std::vector<std::vector<std::string>> references;
    for (const SentencePair& p : task.test_pairs)
      r.hypotheses.push_back(translate_as_lm(model, p.source, task.vocab)), references.push_back(p.target);
    r.bleu = corpus_bleu(r.hypotheses, references);
    r.exact_match = exact_match_rate(r.hypotheses, references);
    result(message("test: BLEU ", r.bleu.bleu, ", exact match ", 100 * r.exact_match, "% of ", task.test_pairs.size(),
                   " sentences (greedy)"));
    report.test_translation = std::move(r);
  }
  return report;
}

}  // namespace gradformer
