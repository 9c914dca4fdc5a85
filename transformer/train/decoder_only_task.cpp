// The decoder-only model's tasks for the training loop (task.h): causal language modelling.
//   toy-lm           the toy grammar's French sentences "<s> w_1 ... w_n </s>", drawn afresh for every
//                    batch (as the copy task), so the data follow the grammar's distribution exactly
//                    and its entropy is the floor of the validation loss.
//   toy-translation  each toy pair as one sequence "<s> source <sep> target </s>", the loss on the
//                    target part (target and </s>) only; epochs over the toy corpus's training split.
//   lm               a language model of the user's sentences (a file, one per line).
//   corpus           the user's pairs as one sequence each, as toy-translation.
//   text             any text file as one stream of bytes or byte-pair tokens (text_blocks.h): random
//                    blocks of context + 1 tokens, the last tenth held out; bits per byte, and a sample.
//   sft              a trained model (init_path) fine-tuned on conversations (sft.h), the loss on the
//                    answers; the last tenth held out; how many held-out answers end and are exact.
#include <cmath>
#include <cstdio>

#include "transformer/data/lm_batch.h"
#include "transformer/data/text_blocks.h"
#include "transformer/data/text_files.h"
#include "transformer/data/toy_corpus.h"
#include "transformer/model/sampling.h"
#include "transformer/train/progress.h"
#include "transformer/train/sft.h"
#include "transformer/train/task.h"

namespace gradformer {

namespace {

constexpr uint64_t kValidSeed = 20260;  // the toy-lm validation sentences: the same for every run
constexpr int64_t kValidSentences = 2000;
// text: the sample shown at each evaluation, the same draws every time so that samples compare.
constexpr int64_t kSamplePrompt = 16, kSampleTokens = 80;  // tokens: the held-out tail's first, then generated
constexpr uint64_t kSampleSeed = 1;
constexpr double kSampleTemperature = 0.8;
constexpr int64_t kCheckedAnswers = 100;  // sft: the held-out conversations whose answers are checked

class DecoderOnlyTask : public ModelTask<DecoderOnly> {
 public:
  DecoderOnlyTask(const TrainOptions& o, const CheckpointFile* resumed) : o_(o) {
    if (o_.task == "sft") {
      start_sft(resumed);
      return;
    }
    std::optional<LoadedDecoderOnly> saved;
    if (resumed) {
      saved = load_decoder_only_checkpoint(*resumed), tokenizer_ = saved->info.target_tokenizer;
      vocab_ = tokenizer_.vocab();
    }
    if (o_.task == "text")
      read_text(resumed != nullptr);
    else
      read_data(resumed != nullptr);
    if (saved) {
      model_ = std::move(saved->model);
    } else {
      model_ = std::make_unique<DecoderOnly>(with_model_options(decoder_only_config(tokenizer_.size()), o), o.seed);
    }
  }

  TrainBatch next_batch() override {
    const LmBatch batch = batches_->next();
    return {{{[this, batch] { return lm_loss(*model_, batch, o_.label_smoothing); }, batch.ntokens}}};
  }
  std::optional<double> valid_loss() override {
    if (valid_.empty()) return std::nullopt;
    const double loss = lm_eval_loss(*model_, valid_);
    if (text_ && !o_.quiet)
      Progress::note(message("step ", text_->batches_drawn(), ": valid bits per byte ",
                             text_score(loss).bits_per_byte(), "; sample ", sample()));
    return loss;
  }
  void evaluate(TrainReport& report, const std::function<void(const std::string&)>& result) override;
  void save(const std::string& path, const StateDict& optimizer_state,
            const std::map<std::string, std::string>& state) override {
    std::map<std::string, std::string> entries = state;
    if (chat_template_) entries["chat.template"] = chat_template_name(*chat_template_);
    save_checkpoint(path, *model_, model_->config(), optimizer_state,
                    {model_->config(), /*source_tokenizer=*/{}, tokenizer_, entries, true, end_of_text_});
  }

 private:
  // text: the file, the tokenizer (bytes, or bpe learned on the training part; the checkpoint's
  // when resuming), the training blocks and the held-out tail.
  void read_text(bool resumed) {
    const bool bpe = o_.tokenizer == "bpe";
    const std::string text = read_text_file(o_.text_path, /*utf8=*/bpe);
    try {
      if (!resumed && bpe) {
        const std::string_view train_part = std::string_view(text).substr(0, held_out_start(text));
        tokenizer_ = Tokenizer::learn_bpe({train_part}, o_.vocab_size > 0 ? o_.vocab_size : kDefaultBpeVocab);
      } else if (!resumed) {
        tokenizer_ = Tokenizer::bytes();
      }
      TextTokens parts = split_text(text, tokenizer_, o_.context, o_.text_path);
      valid_tokens_ = std::move(parts.valid);
      auto blocks = std::make_unique<RandomTextBlocks>(std::move(parts.train), o_.context, o_.batch_size, o_.seed);
      text_ = blocks.get(), batches_per_epoch_ = blocks->batches_per_epoch();
      batches_ = std::move(blocks);
      stream_ = batches_.get();
    } catch (const ValueError& e) {  // what the tokenizer cannot read
      throw DataError(message(o_.text_path, ": ", e.what()));
    }
    valid_ = text_eval_batches(valid_tokens_, o_.context);
    valid_bytes_ = predicted_bytes(valid_tokens_, tokenizer_);
  }
  TextScore text_score(double loss) const {
    return {loss, static_cast<int64_t>(valid_tokens_.size()) - 1, valid_bytes_};
  }
  // The held-out tail's first tokens and what the model makes of them, drawn with a fixed seed.
  std::string sample() {
    const int64_t max_len = model_->config().max_len;
    const int64_t n = std::min({kSamplePrompt, static_cast<int64_t>(valid_tokens_.size()), max_len / 2});
    const std::vector<int64_t> prompt(valid_tokens_.begin(), valid_tokens_.begin() + n);
    Generator gen(kSampleSeed);
    const SamplingOptions options{
        .max_tokens = std::min(kSampleTokens, max_len - n), .temperature = kSampleTemperature, .eos = -1};
    const std::vector<int64_t> continuation = generate(*model_, prompt, options, gen);
    return message("\"", one_line(tokenizer_.decode(prompt)), "\" → \"", one_line(tokenizer_.decode(continuation)),
                   "\"");
  }

  // The sequences of pairs, one vocabulary for both languages and the separator (kept when resuming).
  std::vector<LmSequence> translation_sequences(const std::vector<SentencePair>& pairs, const std::string& source) {
    const int64_t sep = vocab_.id("<sep>");
    std::vector<LmSequence> out;
    for (size_t i = 0; i < pairs.size(); ++i) {
      out.push_back(translation_sequence(vocab_.encode(pairs[i].source), vocab_.encode(pairs[i].target), sep));
      // The model reads all but the last token: <s> source <sep> target.
      const auto read = static_cast<int64_t>(out.back().tokens.size()) - 1;
      if (read > o_.max_len)
        throw DataError(message(source, ": pair ", i + 1, " is ", read,
                                " tokens as one sequence (<s> source <sep> target); the model takes at most max_len ",
                                o_.max_len));
    }
    return out;
  }
  std::vector<LmSequence> sentence_sequences(const std::vector<std::vector<std::string>>& sentences) {
    std::vector<LmSequence> out;
    for (const auto& s : sentences) out.push_back(sentence_sequence(vocab_.encode(s)));
    return out;
  }

  void read_data(bool resumed) {
    const ToyCorpus corpus = o_.task.rfind("toy-", 0) == 0 ? make_toy_corpus() : ToyCorpus{};
    if (o_.task == "toy-lm") {
      // French: its words show gender and number, so few choices of the grammar are invisible and
      // p(sentence) is a sum over at most four paths (see sample_scored_toy_pair).
      if (!resumed) {
        std::vector<std::vector<std::string>> french;
        for (const auto* split : {&corpus.train, &corpus.valid, &corpus.test})
          for (const SentencePair& p : *split) french.push_back(p.source);
        vocab_ = Vocab::build(french), tokenizer_ = vocab_;
      }
      batches_ = std::make_unique<FreshToySentences>(vocab_, o_.batch_size, o_.seed);
      stream_ = batches_.get();
      batches_per_epoch_ = o_.batches_per_epoch;
      Generator valid_gen(kValidSeed, 5);
      std::vector<LmSequence> valid;
      double neg_log_p = 0, tokens = 0;
      for (int64_t i = 0; i < kValidSentences; ++i) {
        const ScoredToyPair s = sample_scored_toy_pair(valid_gen);
        valid.push_back(sentence_sequence(vocab_.encode(s.pair.source)));
        neg_log_p -= s.source_log_prob, tokens += static_cast<double>(s.pair.source.size() + 1);  // </s> counted
      }
      valid_ = lm_batches(valid, 100);
      entropy_ = neg_log_p / tokens;
      return;
    }
    std::vector<LmSequence> train;
    if (o_.task == "lm") {
      const int64_t most = o_.max_len - 1;  // <s> w_1 ... w_n is read, </s> only predicted
      const auto sentences = read_sentences(o_.data_path, most);
      if (!resumed) vocab_ = Vocab::build(sentences);
      train = sentence_sequences(sentences);
      if (!o_.valid_path.empty()) valid_ = lm_batches(sentence_sequences(read_sentences(o_.valid_path, most)), 100);
      if (!o_.test_path.empty()) test_ = lm_batches(sentence_sequences(read_sentences(o_.test_path, most)), 100);
    } else {  // pairs: toy-translation or corpus
      const bool toy = o_.task == "toy-translation";
      const std::vector<SentencePair> pairs = toy ? corpus.train : read_tsv(o_.data_path, o_.max_len);
      if (!resumed) {
        std::vector<std::vector<std::string>> words{{"<sep>"}};
        for (const SentencePair& p : pairs) words.push_back(p.source), words.push_back(p.target);
        vocab_ = Vocab::build(words);
      }
      train = translation_sequences(pairs, toy ? "the toy corpus" : o_.data_path);
      if (toy)
        valid_ = lm_batches(translation_sequences(corpus.valid, "the toy corpus"), 100), test_pairs_ = corpus.test;
      if (!toy && !o_.valid_path.empty())
        valid_ = lm_batches(translation_sequences(read_tsv(o_.valid_path, o_.max_len), o_.valid_path), 100);
      if (!toy && !o_.test_path.empty()) test_pairs_ = read_tsv(o_.test_path, o_.max_len);
    }
    if (!resumed) tokenizer_ = vocab_;
    auto epochs = std::make_unique<LmEpochs>(std::move(train), o_.batch_size, o_.seed);
    batches_per_epoch_ = epochs->batches_per_epoch();
    batches_ = std::move(epochs);
    stream_ = batches_.get();
  }

  // sft: the model of init_path (or of the resumed run), its tokenizer given the template's tokens
  // (the embedding grown by their rows), then the conversations: the last tenth held out without
  // --valid, the answers checked on --test's, else on the held-out ones.
  void start_sft(const CheckpointFile* resumed) {
    std::optional<CheckpointFile> init;
    if (!resumed) init = read_checkpoint_file(o_.init_path);
    const std::string path = resumed ? resumed->path : init->path;
    const Architecture arch = resumed ? resumed->arch : init->arch;
    if (arch != Architecture::DecoderOnly)
      throw CheckpointError(
          message(path, " is ", a_architecture(arch), " checkpoint; sft fine-tunes a decoder-only one (--init)"));
    LoadedDecoderOnly saved = load_decoder_only_checkpoint(resumed ? *resumed : std::move(*init));
    if (saved.info.target_tokenizer.kind() == Tokenizer::Kind::Words)
      throw DataError(message(path, "'s tokenizer is words (a closed list of whitespace words), which cannot write ",
                              "a chat template's line ends nor take its tokens: fine-tune a model of bytes or bpe, or ",
                              "an imported one"));
    tokenizer_ = saved.info.target_tokenizer, model_ = std::move(saved.model);
    end_of_text_ = saved.info.end_of_text;  // an imported model's eos, kept for generate --raw
    const auto recorded = saved.info.state.find("chat.template");
    if (resumed && recorded == saved.info.state.end())
      throw CheckpointError(message(path, ": an sft run's checkpoint without state.chat.template"));
    if (resumed) {
      chat_template_ = chat_template_named(recorded->second);
    } else {
      chat_template_ = o_.chat_template.empty() ? implied_chat_template(tokenizer_).value_or(ChatTemplate::ChatML)
                                                : chat_template_named(o_.chat_template);
      add_template_tokens();
      if (o_.block.lora.rank > 0) add_adapters(path);
    }
    if (model_->config().block.lora.rank > 0) freeze_base();
    read_chat();
  }
  // LoRA: adapters beside the projections --lora-targets names, A drawn and B zero.
  void add_adapters(const std::string& path) {
    const LoraOptions& had = model_->config().block.lora;
    if (had.rank > 0)
      throw TrainOptionError("lora_rank", message("is given, but ", path, " has adapters of rank ", had.rank, " on ",
                                                  lora_targets_name(had),
                                                  " already: fine-tune them as they are (leave out --lora-rank), or ",
                                                  "fold them into its weights first (gradformer merge-lora)"));
    LoraOptions lora = o_.block.lora;
    if (added_tokens_ && !lora.embed) {  // frozen, the new tokens' rows would stay the mean row
      lora.embed = true;
      if (!o_.quiet)
        Progress::note(
            "LoRA: the embedding is trained too (target embed), so that the template's new tokens learn "
            "rows of their own");
    }
    try {
      model_ = with_lora(*model_, lora, o_.seed);
    } catch (const ValueError& e) {
      throw TrainOptionError("lora_rank", message("cannot be given to ", path, "'s model: ", e.what()));
    }
  }
  // A model with adapters trains them alone (and with target embed the embedding and an untied output
  // layer): every other weight frozen (no gradient, no Adam moments).
  void freeze_base() {
    const int64_t trained = freeze_all_but_adapters(*model_);
    const int64_t all = model_->parameter_count();
    const LoraOptions& lora = model_->config().block.lora;
    char share[32];
    std::snprintf(share, sizeof share, "%.2f%%", 100.0 * static_cast<double>(trained) / static_cast<double>(all));
    if (!o_.quiet)
      Progress::note(message("LoRA rank ", lora.rank, ", alpha ", lora.alpha, " on ", lora_targets_name(lora),
                             ": training ", trained, " of the model's ", all, " parameters (", share,
                             "), the rest frozen"));
  }
  // The template's tokens the tokenizer lacks, after its ids; the embedding (and output layer) rows
  // for them the mean row, grown when the model has no spare rows (an imported model may have some).
  void add_template_tokens() {
    const int64_t had = tokenizer_.size();
    if (tokenizer_.with_added(chat_template_specials(*chat_template_)).size() == had) return;  // no copy of the model
    ChatModel grown = with_chat_tokens(*model_, tokenizer_, *chat_template_, o_.seed);
    added_tokens_ = true;
    model_ = std::move(grown.model), tokenizer_ = std::move(grown.tokenizer);
    std::string names;
    for (const std::string& name : tokenizer_.added()) names += " " + name;
    if (!o_.quiet)
      Progress::note(message(chat_template_name(*chat_template_), ": the tokenizer lacked", names, ": added as ids ",
                             had, " to ", tokenizer_.size() - 1, ", their embedding rows each the mean row"));
  }
  void read_chat() {
    std::vector<Conversation> train = read_conversations(o_.data_path), valid;
    if (!o_.valid_path.empty()) {
      valid = read_conversations(o_.valid_path);
    } else if (train.size() >= 10) {  // the last tenth held out
      const auto kept = static_cast<std::ptrdiff_t>(train.size() - train.size() / 10);
      valid.assign(train.begin() + kept, train.end()), train.erase(train.begin() + kept, train.end());
    }
    checked_ = o_.test_path.empty() ? valid : read_conversations(o_.test_path);
    const int64_t max_len = model_->config().max_len, pad = lm_pad(tokenizer_);
    auto epochs = std::make_unique<LmEpochs>(chat_sequences(train, tokenizer_, *chat_template_, max_len), o_.batch_size,
                                             o_.seed, pad);
    batches_per_epoch_ = epochs->batches_per_epoch();
    batches_ = std::move(epochs);
    stream_ = batches_.get();
    if (!valid.empty()) valid_ = lm_batches(chat_sequences(valid, tokenizer_, *chat_template_, max_len), 16, pad);
  }

  const TrainOptions o_;
  Tokenizer tokenizer_;                        // the checkpoint's; for words, vocab_'s
  std::optional<ChatTemplate> chat_template_;  // sft
  bool added_tokens_ = false;                  // sft: the template's tokens were added to the tokenizer
  std::vector<int64_t> end_of_text_;           // sft: an imported model's eos ids, kept
  std::vector<Conversation> checked_;          // sft: whose answers evaluate() checks
  Vocab vocab_;
  std::unique_ptr<LmStream> batches_;
  std::vector<LmBatch> valid_, test_;
  double entropy_ = -1;                   // toy-lm: the grammar's entropy on the validation sentences
  std::vector<SentencePair> test_pairs_;  // translation: translated and scored with BLEU
  RandomTextBlocks* text_ = nullptr;      // text: the training blocks (batches_)
  std::vector<int64_t> valid_tokens_;     // text: the held-out tail
  int64_t valid_bytes_ = 0;               // text: the bytes its predicted tokens stand for
};

// The grammar's entropy beside the validation loss (toy-lm), perplexities (lm), BLEU (translation),
// the held-out answers (sft).
void DecoderOnlyTask::evaluate(TrainReport& report, const std::function<void(const std::string&)>& result) {
  if (chat_template_ && !checked_.empty()) {
    const AnswerCheck a = check_answers(*model_, tokenizer_, *chat_template_, checked_, kCheckedAnswers);
    result(message(o_.test_path.empty() ? "held-out" : "test", " answers (greedy): ", a.ended, " of ", a.conversations,
                   " end with ", end_of_turn(*chat_template_), ", ", a.exact, " exact"));
  }
  if (entropy_ >= 0) {
    report.entropy_floor = entropy_;
    result(message("the grammar's entropy on the same ", kValidSentences, " sentences ", entropy_, " nats/token; gap ",
                   report.valid_loss - entropy_));
  } else if (o_.task == "lm" && !valid_.empty()) {
    result(message("valid perplexity ", std::exp(report.valid_loss)));
  } else if (text_) {
    const TextScore s = text_score(report.valid_loss);
    result(message("valid perplexity ", s.perplexity(), ", bits per byte ", s.bits_per_byte(), " (", s.tokens,
                   " tokens predicted, ", s.bytes, " bytes)"));
  }
  if (!test_.empty()) {
    const double test_loss = lm_eval_loss(*model_, test_);
    result(message("test loss ", test_loss, " nats/token, perplexity ", std::exp(test_loss)));
  }
  if (test_pairs_.empty()) return;
  TranslationReport r;
  std::vector<std::vector<std::string>> references;
  for (const SentencePair& p : test_pairs_)
    r.hypotheses.push_back(translate_as_lm(*model_, p.source, vocab_)), references.push_back(p.target);
  r.bleu = corpus_bleu(r.hypotheses, references);
  r.exact_match = exact_match_rate(r.hypotheses, references);
  result(message("test: BLEU ", r.bleu.bleu, ", exact match ", 100 * r.exact_match, "% of ", test_pairs_.size(),
                 " sentences (greedy)"));
  report.test_translation = std::move(r);
}

}  // namespace

std::unique_ptr<TrainingTask> make_decoder_only_task(const TrainOptions& options, const CheckpointFile* resumed) {
  return std::make_unique<DecoderOnlyTask>(options, resumed);
}

}  // namespace gradformer
