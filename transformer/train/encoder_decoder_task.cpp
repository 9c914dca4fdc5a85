// The encoder-decoder's tasks for the training loop (task.h): the copy task, the toy French ->
// English corpus, and the user's pairs (corpus). The loss is the cross-entropy of the target
// tokens, teacher-forced; the evaluation at the end is the copy task's exact match, or BLEU and
// exact match of the valid and test pairs, and the attention maps of one example.
#include <optional>
#include <tuple>

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

// The pairs of a TSV file and the line each came from: a pair too long in tokens (which only
// tokenizing tells) is named by its line.
struct PairFile {
  std::string path;
  std::vector<SentencePair> pairs;
  std::vector<int64_t> lines;
};

// A file's pairs, read_tsv's checks and errors; max_words > 0 refuses a longer side as read_tsv does.
PairFile read_pair_file(const std::string& path, int64_t max_words) {
  PairFile file{path, {}, {}};
  int64_t line = 0;
  for (std::optional<SentencePair>& pair : read_tsv_lines(path, max_words)) {
    ++line;
    if (pair) file.pairs.push_back(std::move(*pair)), file.lines.push_back(line);
  }
  return file;
}

// A TSV file of words is checked as it is read; one of bytes or BPE tokens once encoded (BPE makes a
// sentence longer than its word count). DataError "path:line: ..." for the first side too long.
void check_file_lengths(const PairFile& file, const std::vector<EncodedPair>& encoded, int64_t max_tokens,
                        const std::string& tokenizer) {
  for (size_t i = 0; i < encoded.size(); ++i)
    for (const auto& [side, ids] : {std::pair{"source", &encoded[i].source}, {"target", &encoded[i].target}})
      if (static_cast<int64_t>(ids->size()) > max_tokens)
        throw DataError(at_line(file.path, file.lines[i],
                                message(side, " sentence has ", ids->size(), " tokens (", tokenizer,
                                        "), more than the maximum of ", max_tokens)));
}

// The toy corpus is made in memory, so it is checked here, before training rather than in the
// forward pass: its longest sentence, in tokens, against max_len.
void check_toy_lengths(const std::vector<std::pair<const char*, const std::vector<EncodedPair>*>>& splits,
                       int64_t max_len) {
  int64_t longest = 0;
  std::string where;
  for (const auto& [split, pairs] : splits)
    for (size_t i = 0; i < pairs->size(); ++i) {
      const EncodedPair& p = (*pairs)[i];
      const int64_t tokens = static_cast<int64_t>(std::max(p.source.size(), p.target.size()));
      if (tokens > longest) longest = tokens, where = message(split, " pair ", i + 1);
    }
  if (longest > max_len - 1)
    throw TrainOptionError(
        "max_len", message("must be at least ", longest + 1, " for the toy-translation corpus (its longest sentence, ",
                           where, ", has ", longest, " tokens, and </s> or <s> is added), got ", max_len));
}

// The tokenizer options a translation task can use: TrainOptionError otherwise.
void check_tokenizer_options(const TrainOptions& o) {
  if (o.tokenizer != "words" && o.tokenizer != "bytes" && o.tokenizer != "bpe")
    throw TrainOptionError("tokenizer", message("must be words, bytes or bpe, got '", o.tokenizer, "'"));
  if (o.vocab_size < 0 || o.vocab_size > TransformerConfig::max_vocab)
    throw TrainOptionError("vocab_size", message("must be from 0 to ", TransformerConfig::max_vocab,
                                                 " (0: the default), got ", o.vocab_size));
  constexpr int64_t kLeast = static_cast<int64_t>(Vocab::specials.size()) + 256;
  if (o.tokenizer == "bpe" && o.vocab_size != 0 && o.vocab_size < kLeast)
    throw TrainOptionError("vocab_size",
                           message("must be at least ", kLeast, " for bpe (the ", Vocab::specials.size(),
                                   " specials and the 256 bytes; 0: ", kDefaultBpeVocab, "), got ", o.vocab_size));
  if (o.tokenizer != "bpe" && o.vocab_size != 0)
    throw TrainOptionError("vocab_size",
                           message("is not used by the ", o.tokenizer, " tokenizer (",
                                   o.tokenizer == "words" ? "its vocabulary is the training data's words"
                                                          : "its vocabulary is the 4 specials and the 256 bytes",
                                   "), got ", o.vocab_size));
  if (o.tokenizer == "bpe" && o.tie_embeddings && !o.shared_vocab)
    throw TrainOptionError("tie_embeddings",
                           "needs one vocabulary for both sides: with the bpe tokenizer, shared_vocab (one "
                           "tokenizer learned on the sources and targets together)");
}

// Each side's tokenizer, learned from the training pairs only: words (each side's own words, or
// one list of both sides' when shared), the 256 bytes, or BPE merges learned from the sentences'
// text (one set from the sources and targets together when shared, else one per side).
std::pair<Tokenizer, Tokenizer> learn_tokenizers(const TrainOptions& o, const std::vector<SentencePair>& train) {
  if (o.tokenizer == "bytes") return {Tokenizer::bytes(), Tokenizer::bytes()};
  std::vector<std::vector<std::string>> sources, targets;
  for (const SentencePair& p : train) sources.push_back(p.source), targets.push_back(p.target);
  if (o.tokenizer == "words") {
    if (!o.shared_vocab) return {Vocab::build(sources), Vocab::build(targets)};
    std::vector<std::vector<std::string>> both = sources;
    both.insert(both.end(), targets.begin(), targets.end());
    const Tokenizer shared(Vocab::build(both));
    return {shared, shared};
  }
  std::vector<std::string> source_texts, target_texts;
  for (const auto& words : sources) source_texts.push_back(join_words(words));
  for (const auto& words : targets) target_texts.push_back(join_words(words));
  const auto learn = [&](std::vector<const std::vector<std::string>*> sides) {
    std::vector<std::string_view> texts;
    for (const auto* side : sides) texts.insert(texts.end(), side->begin(), side->end());
    return Tokenizer::learn_bpe(texts, o.vocab_size > 0 ? o.vocab_size : kDefaultBpeVocab);
  };
  if (o.shared_vocab) {
    const Tokenizer shared = learn({&source_texts, &target_texts});
    return {shared, shared};
  }
  return {learn({&source_texts}), learn({&target_texts})};
}

// What labels a position of an attention map: the words as typed for a tokenizer of words, else
// each token as its piece ("Ġchat").
std::vector<std::string> token_labels(const Tokenizer& tokenizer, const std::vector<std::string>& words,
                                      const std::vector<int64_t>& ids) {
  if (tokenizer.kind() == Tokenizer::Kind::Words) return words;
  std::vector<std::string> labels;
  for (const int64_t id : ids) labels.push_back(tokenizer.piece(id));
  return labels;
}

class EncoderDecoderTask : public ModelTask<EncoderDecoder> {
 public:
  EncoderDecoderTask(const TrainOptions& o, const CheckpointFile* resumed) : o_(o) {
    std::optional<CheckpointContents> saved;
    if (resumed) saved = read_checkpoint(*resumed);
    if (!resumed) check_tokenizer_options(o);
    read_data(saved ? &saved->info : nullptr);
    // Checked before training, not at the evaluation after it: beam search's bound (decoding.h).
    if (o.beam > target_tokenizer_.size())
      throw TrainOptionError("beam", message("must be from 1 to ", target_tokenizer_.size(),
                                             " (the target vocabulary's size), got ", o.beam));
    if (saved) {
      model_ = std::make_unique<EncoderDecoder>(saved->info.config, 0, skip_init);
      load_parameters(*model_, saved->parameters, resumed->path);
    } else {
      const TransformerConfig c = with_model_options(
          TransformerConfig{.src_vocab = source_tokenizer_.size(), .tgt_vocab = target_tokenizer_.size()}, o);
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
    save_checkpoint(path, *model_, optimizer_state, {model_->config(), source_tokenizer_, target_tokenizer_, state});
  }

 private:
  // Resuming keeps the checkpoint's tokenizers: learned again from a changed file, the ids would shift.
  void read_data(const CheckpointInfo* resumed) {
    if (o_.task == "copy") {
      const int64_t length = CopyTaskOptions{}.length;
      if (o_.max_len < length)
        throw TrainOptionError("max_len", message("must be at least ", length, " for the copy task (its sequences are ",
                                                  length, " tokens), got ", o_.max_len));
      source_tokenizer_ = target_tokenizer_ = copy_task_vocab();
      batches_ = std::make_unique<CopyTaskStream>(o_.batch_size, o_.seed);
      stream_ = batches_.get();
      batches_per_epoch_ = o_.batches_per_epoch;
      Generator valid_gen(o_.seed, /*stream=*/2);  // the validation batches never meet the training ones
      for (int i = 0; i < 5; ++i) valid_batches_.push_back(copy_task_batch(o_.batch_size, valid_gen));
      return;
    }
    const int64_t max_tokens = o_.max_len - 1;  // room for the </s> or <s> collate adds
    const bool words = o_.tokenizer == "words";
    PairFile train{"", {}, {}}, valid{"", {}, {}}, test{"", {}, {}};
    if (o_.task == "toy-translation") {
      ToyCorpus corpus = make_toy_corpus();
      train.pairs = std::move(corpus.train), valid.pairs = std::move(corpus.valid), test.pairs = std::move(corpus.test);
    } else {
      // Words are checked as they are read; other tokens once encoded, below.
      train = read_pair_file(o_.data_path, words ? max_tokens : 0);
      if (!o_.valid_path.empty()) valid = read_pair_file(o_.valid_path, words ? max_tokens : 0);
      if (!o_.test_path.empty()) test = read_pair_file(o_.test_path, words ? max_tokens : 0);
    }
    if (resumed)
      source_tokenizer_ = resumed->source_tokenizer, target_tokenizer_ = resumed->target_tokenizer;
    else
      std::tie(source_tokenizer_, target_tokenizer_) = learn_tokenizers(o_, train.pairs);
    std::vector<EncodedPair> encoded[3];
    PairFile* files[3] = {&train, &valid, &test};
    for (int i = 0; i < 3; ++i) encoded[i] = encode_pairs(files[i]->pairs, source_tokenizer_, target_tokenizer_);
    if (o_.task == "toy-translation")
      check_toy_lengths({{"train", &encoded[0]}, {"valid", &encoded[1]}, {"test", &encoded[2]}}, o_.max_len);
    else if (!words)
      for (int i = 0; i < 3; ++i) check_file_lengths(*files[i], encoded[i], max_tokens, o_.tokenizer);
    valid_pairs_ = std::move(valid.pairs), test_pairs_ = std::move(test.pairs);
    const BatchingOptions batching{
        .max_tokens = o_.max_tokens, .max_sentences = o_.batch_size, .batching = o_.batching, .pieces = o_.pieces};
    auto stream = std::make_unique<CorpusStream>(std::move(encoded[0]), batching, o_.seed);
    batches_per_epoch_ = stream->batches_per_epoch();
    batches_ = std::move(stream);
    stream_ = batches_.get();
    for (const auto& indices : plan_batches(encoded[1], batching, nullptr))
      valid_batches_.push_back(collate(encoded[1], indices));
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
  Tokenizer source_tokenizer_, target_tokenizer_;
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
    TranslationReport r = evaluate_translation(*model_, pairs, source_tokenizer_, target_tokenizer_, o_.beam);
    result(message(split, ": BLEU ", r.bleu.bleu, ", exact match ", 100 * r.exact_match, "% of ", pairs.size(),
                   " sentences (", o_.beam == 1 ? "greedy" : message("beam ", o_.beam), ")"));
    return r;
  };
  if (!valid_pairs_.empty()) report.valid_translation = evaluate(valid_pairs_, "valid");
  if (!test_pairs_.empty()) report.test_translation = evaluate(test_pairs_, "test");
  const auto& pairs = test_pairs_.empty() ? valid_pairs_ : test_pairs_;
  if (pairs.empty()) return std::nullopt;
  const SentencePair& first = pairs.front();
  const std::vector<EncodedPair> encoded = encode_pairs({first}, source_tokenizer_, target_tokenizer_);
  AttentionExample example{
      collate(encoded, {0}), token_labels(source_tokenizer_, first.source, encoded[0].source), {"<s>"}};
  example.source.push_back("</s>");
  const std::vector<std::string> target = token_labels(target_tokenizer_, first.target, encoded[0].target);
  example.target.insert(example.target.end(), target.begin(), target.end());
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
