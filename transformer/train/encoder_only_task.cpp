// The encoder-only model's tasks for the training loop (task.h):
//   mlm       pre-training with BERT's masked-LM objective on sentences: the toy corpus's French
//             ones, or the user's (a file, one per line); no labels needed.
//   classify  fine-tuning a classifier, from scratch or from a pre-trained checkpoint (init_path):
//             is a toy sentence negated (a labelled few of them), or the user's label<TAB>sentence
//             lines, with as many classes as the file has.
// Every batch draws batch_size sentences at random (with replacement) from one generator, which
// also draws the MLM's masking.
#include "nn/init.h"
#include "tensor/support/saved_state.h"
#include "transformer/data/mlm.h"
#include "transformer/data/text_files.h"
#include "transformer/data/toy_corpus.h"
#include "transformer/train/task.h"

namespace gradformer {
namespace {

std::vector<std::vector<std::string>> french(const std::vector<SentencePair>& pairs) {
  std::vector<std::vector<std::string>> out;
  for (const SentencePair& p : pairs) out.push_back(p.source);
  return out;
}

std::vector<std::vector<std::string>> sentences_of(const std::vector<LabelledSentence>& examples) {
  std::vector<std::vector<std::string>> out;
  for (const LabelledSentence& e : examples) out.push_back(e.tokens);
  return out;
}

class EncoderOnlyTask : public ModelTask<EncoderOnly> {
 public:
  EncoderOnlyTask(const TrainOptions& o, const CheckpointFile* resumed) : o_(o), data_gen_(o.seed, 2) {
    std::optional<CheckpointFile> init;
    if (!resumed && !o.init_path.empty()) init = read_checkpoint_file(o.init_path);
    const CheckpointFile* from = resumed ? resumed : init ? &*init : nullptr;
    std::optional<LoadedEncoderOnly> saved;
    if (from) saved = load_encoder_only_checkpoint(*from, resumed ? "train --resume" : "train --init");
    read_data(saved ? saved->info.config.max_len : o.max_len);  // a pre-trained model's own length
    const auto n = static_cast<int64_t>(o_.task == "mlm" ? train_sentences_.size() : labelled_.size());
    batches_per_epoch_ = (n + o_.batch_size - 1) / o_.batch_size;
    stream_ = &data_position_;
    if (saved) {
      vocab_ = saved->info.vocab;
      // A pre-trained model fine-tuned on other classes gets a classifier of their number (drawn below).
      EncoderOnlyConfig c = saved->info.config;
      StateDict parameters = from->parameters;
      if (!resumed) {
        c.classes = static_cast<int64_t>(labels_.size());
        parameters["classifier.weight"] = zeros({c.classes, c.d_model}, c.dtype);
        parameters["classifier.bias"] = zeros({c.classes}, c.dtype);
      }
      model_ = std::make_unique<EncoderOnly>(c, 0, skip_init);
      load_parameters(*model_, parameters, from->path);
    } else {
      vocab_ = encoder_only_vocab(train_sentences_);
      const EncoderOnlyConfig c = with_model_options(
          EncoderOnlyConfig{.vocab = vocab_.size(), .classes = static_cast<int64_t>(labels_.size())}, o);
      model_ = std::make_unique<EncoderOnly>(c, o.seed);
    }
    check_encoder_only_vocab(vocab_, "train");
    if (resumed) return;
    if (o.task == "classify") reset_classifier();
    *model_->dropout_generator() = Generator(o.seed, 1);
  }

  TrainBatch next_batch() override;
  std::optional<double> valid_loss() override;
  void evaluate(TrainReport& report, const std::function<void(const std::string&)>& result) override;
  void save(const std::string& path, const StateDict& optimizer_state,
            const std::map<std::string, std::string>& state) override {
    save_encoder_only_checkpoint(path, *model_, optimizer_state, {model_->config(), vocab_, labels_, state});
  }

 private:
  void read_data(int64_t max_len) {
    const int64_t most = max_len - 2;  // <s> and </s> around each sentence
    if (o_.data_path.empty()) {
      const ToyCorpus corpus = make_toy_corpus();
      train_sentences_ = french(corpus.train), labels_ = negation_labels();
      if (o_.task == "mlm") {
        valid_sentences_ = french({corpus.valid.begin(), corpus.valid.begin() + 500});
      } else {
        if (o_.labelled > static_cast<int64_t>(corpus.train.size()))
          throw TrainOptionError("labelled", message("must be at most ", corpus.train.size(),
                                                     " (the toy corpus's train split), got ", o_.labelled));
        labelled_ = negation_task({corpus.train.begin(), corpus.train.begin() + o_.labelled});
        valid_labelled_ = negation_task(corpus.valid), test_labelled_ = negation_task(corpus.test);
      }
    } else if (o_.task == "mlm") {
      train_sentences_ = read_sentences(o_.data_path, most), labels_ = {"none"};
      if (!o_.valid_path.empty()) valid_sentences_ = read_sentences(o_.valid_path, most);
      if (!o_.test_path.empty()) test_sentences_ = read_sentences(o_.test_path, most);
    } else {
      LabelledCorpus train = read_labelled(o_.data_path, most);
      labels_ = train.labels, labelled_ = std::move(train.examples), train_sentences_ = sentences_of(labelled_);
      if (!o_.valid_path.empty()) valid_labelled_ = read_labelled(o_.valid_path, most, labels_).examples;
      if (!o_.test_path.empty()) test_labelled_ = read_labelled(o_.test_path, most, labels_).examples;
    }
  }

  // The classifier's two layers drawn afresh from the run's seed, with or without pre-training, so
  // the two start from the same head (the MLM objective never trains the pooler).
  void reset_classifier() {
    Generator gen(o_.seed, 4);
    xavier_uniform_(model_->pooler->weight, gen), fill_(model_->pooler->bias, 0.0);
    xavier_uniform_(model_->classifier->weight, gen), fill_(model_->classifier->bias, 0.0);
  }

  std::vector<int64_t> draw_indices(int64_t n) {
    std::vector<int64_t> out;
    for (int64_t i = 0; i < o_.batch_size; ++i) out.push_back(data_gen_.integer(0, n));
    return out;
  }

  // Where the data stands: the generator's state.
  struct DataPosition : Resumable {
    explicit DataPosition(Generator& gen) : gen(gen) {}
    std::map<std::string, std::string> state() const override {
      return {{"train.data_generator", generator_state_text(gen)}};
    }
    void restore(const std::map<std::string, std::string>& state, const std::string& source) override {
      restore_generator(gen, SavedState(state, source).text("train.data_generator"), source);
    }
    Generator& gen;
  };

  const TrainOptions o_;
  Generator data_gen_;  // which sentences, and the MLM's masking
  DataPosition data_position_{data_gen_};
  Vocab vocab_;
  std::vector<std::string> labels_;  // the classifier's class names
  std::vector<std::vector<std::string>> train_sentences_, valid_sentences_, test_sentences_;  // mlm
  std::vector<LabelledSentence> labelled_, valid_labelled_, test_labelled_;                   // classify
};

TrainBatch EncoderOnlyTask::next_batch() {
  const profiler::Scope data("sentence batch", profiler::Phase::Data);
  const EncoderOnly& m = *model_;
  const double smoothing = o_.label_smoothing;
  if (o_.task == "classify") {
    const ClassifyBatch b = collate_labelled(labelled_, draw_indices(static_cast<int64_t>(labelled_.size())), vocab_);
    return {{{[&m, b, smoothing] {  // [B, C] against [B]
                return cross_entropy(m.class_logits(m.encode(b.ids)), b.labels, {.label_smoothing = smoothing});
              },
              b.labels.numel()}}};
  }
  // A batch of short sentences can have no word chosen, and a loss over nothing is 0 / 0: draw
  // again (the generator moves on), a few times before calling the sentences too short.
  MlmBatch b;
  for (int attempt = 0; b.chosen == 0; ++attempt) {
    if (attempt == 100)
      throw DataError(message("train: 100 batches of ", o_.batch_size,
                              " sentences in a row had no word chosen for the masked-LM loss (15% of the words): "
                              "the sentences are too short for the batch size; give a larger --batch-size"));
    std::vector<std::vector<int64_t>> ids;
    for (int64_t i : draw_indices(static_cast<int64_t>(train_sentences_.size())))
      ids.push_back(vocab_.encode(train_sentences_[static_cast<size_t>(i)]));
    b = mask_tokens(encode_sequences(ids), vocab_.size(), data_gen_);
  }
  // "T_i will be used to predict the original token with cross entropy loss": only chosen positions count
  return {{{[&m, b, smoothing] {
              return cross_entropy(m.mlm_logits(m.encode(b.input)), b.labels,
                                   {.ignore_index = Vocab::pad, .label_smoothing = smoothing});
            },
            b.chosen}}};
}

std::optional<double> EncoderOnlyTask::valid_loss() {
  if (o_.task == "mlm")
    return valid_sentences_.empty() ? std::nullopt
                                    : std::optional(mlm_evaluate(*model_, vocab_, valid_sentences_, o_.seed).loss);
  return valid_labelled_.empty() ? std::nullopt : std::optional(classify_loss(*model_, vocab_, valid_labelled_));
}

void EncoderOnlyTask::evaluate(TrainReport& report, const std::function<void(const std::string&)>& result) {
  if (o_.task == "mlm") {
    auto evaluate = [&](const std::vector<std::vector<std::string>>& sentences, const char* split) {
      const MlmScore s = mlm_evaluate(*model_, vocab_, sentences, o_.seed);
      result(message(split, " (", sentences.size(), " sentences): MLM loss ", s.loss, " per chosen token, ",
                     100 * s.accuracy, "% of chosen tokens recovered"));
      return s.accuracy;
    };
    if (!valid_sentences_.empty()) report.valid_accuracy = evaluate(valid_sentences_, "valid");
    if (!test_sentences_.empty()) report.test_accuracy = evaluate(test_sentences_, "test");
    return;
  }
  std::string line = "accuracy:";
  if (!valid_labelled_.empty()) {
    report.valid_accuracy = classify_accuracy(*model_, vocab_, valid_labelled_);
    line += message(" valid ", 100 * report.valid_accuracy, "% of ", valid_labelled_.size());
  }
  if (!test_labelled_.empty()) {
    report.test_accuracy = classify_accuracy(*model_, vocab_, test_labelled_);
    line += message(valid_labelled_.empty() ? "" : ",", " test ", 100 * report.test_accuracy, "% of ",
                    test_labelled_.size());
  }
  if (line != "accuracy:") result(line + " sentences");
}

}  // namespace

std::unique_ptr<TrainingTask> make_encoder_only_task(const TrainOptions& options, const CheckpointFile* resumed) {
  return std::make_unique<EncoderOnlyTask>(options, resumed);
}

}  // namespace gradformer
