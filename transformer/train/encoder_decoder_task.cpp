// The encoder-decoder's tasks for the training loop (task.h): the copy task, the toy French ->
// English corpus, and the user's pairs (corpus). The loss is the cross-entropy of the target
// tokens, teacher-forced; the evaluation at the end is the copy task's exact match, or BLEU and
// exact match of the valid and test pairs, and the attention maps of one example.
#include "transformer/data/batch_stream.h"
#include "transformer/data/toy_corpus.h"
#include "transformer/inspect/attention_maps.h"
#include "transformer/inspect/svg.h"
#include "transformer/train/task.h"

namespace gradformer {

namespace {

Vocab copy_task_vocab() {
  std::string text = "<pad>\n<s>\n</s>\n<unk>\n";
  for (int t = 4; t < 11; ++t) text += std::to_string(t) + "\n";
  return Vocab::from_text(text, "the copy task's vocabulary");
}

// A TSV file is checked as it is read (file:line of the first sentence too long); the toy corpus
// is made in memory, so it is checked here, before training rather than in the forward pass.
void check_toy_lengths(const ToyCorpus& corpus, int64_t max_len) {
  int64_t longest = 0;
  std::string where;
  for (const auto& [split, pairs] :
       {std::pair{"train", &corpus.train}, {"valid", &corpus.valid}, {"test", &corpus.test}})
    for (size_t i = 0; i < pairs->size(); ++i) {
      const SentencePair& p = (*pairs)[i];
      const int64_t tokens = static_cast<int64_t>(std::max(p.source.size(), p.target.size()));
      if (tokens > longest) longest = tokens, where = message(split, " pair ", i + 1);
    }
  if (longest > max_len - 1)
    throw TrainOptionError(
        "max_len", message("must be at least ", longest + 1, " for the toy-translation corpus (its longest sentence, ",
                           where, ", has ", longest, " tokens, and </s> or <s> is added), got ", max_len));
}

class EncoderDecoderTask : public ModelTask<EncoderDecoder> {
 public:
  EncoderDecoderTask(const TrainOptions& o, const CheckpointFile* resumed) : o_(o) {
    std::optional<CheckpointContents> saved;
    if (resumed) saved = read_checkpoint(*resumed);
    read_data(saved ? &saved->info : nullptr);
    // Checked before training, not at the evaluation after it: beam search's bound (decoding.h).
    if (o.beam > target_vocab_.size())
      throw TrainOptionError(
          "beam", message("must be from 1 to ", target_vocab_.size(), " (the target vocabulary's size), got ", o.beam));
    if (saved) {
      model_ = std::make_unique<EncoderDecoder>(saved->info.config, 0, skip_init);
      load_parameters(*model_, saved->parameters, resumed->path);
    } else {
      const TransformerConfig c = with_model_options(
          TransformerConfig{.src_vocab = source_vocab_.size(), .tgt_vocab = target_vocab_.size()}, o);
      c.validate();
      model_ = std::make_unique<EncoderDecoder>(c, o.seed);
    }
  }

  TrainBatch next_batch() override {
    return translation_batch(*model_, batches_->next(),
                             {.ignore_index = Vocab::pad, .label_smoothing = o_.label_smoothing});
  }
  std::optional<double> valid_loss() override {
    return valid_batches_.empty() ? std::nullopt : std::optional(teacher_forced_loss(*model_, valid_batches_));
  }
  void evaluate(TrainReport& report, const std::function<void(const std::string&)>& result) override;
  void save(const std::string& path, const StateDict& optimizer_state,
            const std::map<std::string, std::string>& state) override {
    save_checkpoint(path, *model_, optimizer_state, {model_->config(), source_vocab_, target_vocab_, state});
  }

 private:
  // Resuming keeps the checkpoint's vocabularies: rebuilt from a changed file, the ids would shift.
  void read_data(const CheckpointInfo* resumed) {
    if (o_.task == "copy") {
      const int64_t length = CopyTaskOptions{}.length;
      if (o_.max_len < length)
        throw TrainOptionError("max_len", message("must be at least ", length, " for the copy task (its sequences are ",
                                                  length, " tokens), got ", o_.max_len));
      source_vocab_ = target_vocab_ = copy_task_vocab();
      batches_ = std::make_unique<CopyTaskStream>(o_.batch_size, o_.seed);
      stream_ = batches_.get();
      batches_per_epoch_ = o_.batches_per_epoch;
      Generator valid_gen(o_.seed, /*stream=*/2);  // the validation batches never meet the training ones
      for (int i = 0; i < 5; ++i) valid_batches_.push_back(copy_task_batch(o_.batch_size, valid_gen));
      return;
    }
    std::vector<SentencePair> train;
    const int64_t max_tokens = o_.max_len - 1;  // room for the </s> or <s> collate adds
    if (o_.task == "toy-translation") {
      ToyCorpus corpus = make_toy_corpus();
      check_toy_lengths(corpus, o_.max_len);
      train = std::move(corpus.train), valid_pairs_ = std::move(corpus.valid), test_pairs_ = std::move(corpus.test);
    } else {
      train = read_tsv(o_.data_path, max_tokens);
      if (!o_.valid_path.empty()) valid_pairs_ = read_tsv(o_.valid_path, max_tokens);
      if (!o_.test_path.empty()) test_pairs_ = read_tsv(o_.test_path, max_tokens);
    }
    if (resumed) {
      source_vocab_ = resumed->source_tokenizer.vocab(), target_vocab_ = resumed->target_tokenizer.vocab();
    } else {
      std::vector<std::vector<std::string>> sources, targets;
      for (const SentencePair& p : train) sources.push_back(p.source), targets.push_back(p.target);
      source_vocab_ = Vocab::build(sources), target_vocab_ = Vocab::build(targets);
    }
    const BatchingOptions batching{
        .max_tokens = o_.max_tokens, .max_sentences = o_.batch_size, .batching = o_.batching, .pieces = o_.pieces};
    auto stream = std::make_unique<CorpusStream>(encode_pairs(train, source_vocab_, target_vocab_), batching, o_.seed);
    batches_per_epoch_ = stream->batches_per_epoch();
    batches_ = std::move(stream);
    stream_ = batches_.get();
    const std::vector<EncodedPair> valid = encode_pairs(valid_pairs_, source_vocab_, target_vocab_);
    for (const auto& indices : plan_batches(valid, batching, nullptr))
      valid_batches_.push_back(collate(valid, indices));
  }

  // One sentence pair to draw the attention of, with a label per position of src and tgt_in.
  struct AttentionExample {
    Batch batch;
    std::vector<std::string> source, target;
  };
  std::optional<AttentionExample> evaluate_translation_task(TrainReport& report,
                                                            const std::function<void(const std::string&)>& result);
  AttentionExample evaluate_copy_task(TrainReport& report, const std::function<void(const std::string&)>& result);

  const TrainOptions o_;
  Vocab source_vocab_, target_vocab_;
  std::unique_ptr<BatchStream> batches_;
  std::vector<Batch> valid_batches_;
  std::vector<SentencePair> valid_pairs_, test_pairs_;  // translation tasks
};

// The Annotated Transformer's check: fresh sequences copied exactly. The example is the next fresh one.
EncoderDecoderTask::AttentionExample EncoderDecoderTask::evaluate_copy_task(
    TrainReport& report, const std::function<void(const std::string&)>& result) {
  Generator eval_gen(o_.seed, /*stream=*/3);
  report.copy_exact_match = copy_task_exact_match(*model_, 100, eval_gen);
  result(message("copy task: ", report.copy_exact_match, "/100 fresh sequences copied exactly (greedy decoding)"));
  AttentionExample example{copy_task_batch(1, eval_gen), {}, {}};
  for (int64_t id : example.batch.src.select(0, 0).to_vector<int64_t>()) example.source.push_back(std::to_string(id));
  example.target.assign(example.source.begin(), example.source.end() - 1);  // tgt_in = src[:-1]
  return example;
}

// BLEU and exact match of the valid and test pairs; the example is the first test (else valid) pair.
std::optional<EncoderDecoderTask::AttentionExample> EncoderDecoderTask::evaluate_translation_task(
    TrainReport& report, const std::function<void(const std::string&)>& result) {
  auto evaluate = [&](const std::vector<SentencePair>& pairs, const char* split) {
    TranslationReport r = evaluate_translation(*model_, pairs, source_vocab_, target_vocab_, o_.beam);
    result(message(split, ": BLEU ", r.bleu.bleu, ", exact match ", 100 * r.exact_match, "% of ", pairs.size(),
                   " sentences (", o_.beam == 1 ? "greedy" : message("beam ", o_.beam), ")"));
    return r;
  };
  if (!valid_pairs_.empty()) report.valid_translation = evaluate(valid_pairs_, "valid");
  if (!test_pairs_.empty()) report.test_translation = evaluate(test_pairs_, "test");
  const auto& pairs = test_pairs_.empty() ? valid_pairs_ : test_pairs_;
  if (pairs.empty()) return std::nullopt;
  const SentencePair& first = pairs.front();
  AttentionExample example{collate(encode_pairs({first}, source_vocab_, target_vocab_), {0}), first.source, {"<s>"}};
  example.source.push_back("</s>");
  example.target.insert(example.target.end(), first.target.begin(), first.target.end());
  return example;
}

// The task's own measure and the attention maps of one example.
void EncoderDecoderTask::evaluate(TrainReport& report, const std::function<void(const std::string&)>& result) {
  const std::optional<AttentionExample> example =
      o_.task == "copy" ? evaluate_copy_task(report, result) : evaluate_translation_task(report, result);
  if (!example) return;
  const auto maps =
      write_attention_maps(*model_, example->batch, example->source, example->target, o_.out_dir + "/attention");
  result(
      message("wrote ", o_.out_dir, "/loss.svg and ", maps.size(), " attention maps in ", o_.out_dir, "/attention/"));
}

}  // namespace

std::unique_ptr<TrainingTask> make_encoder_decoder_task(const TrainOptions& options, const CheckpointFile* resumed) {
  return std::make_unique<EncoderDecoderTask>(options, resumed);
}

}  // namespace gradformer
