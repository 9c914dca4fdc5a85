// The one training loop (transformer/train/trainer.h) on the user's own files, for each
// architecture: a decoder-only language model of a file of sentences and a decoder-only translator
// of a TSV of pairs, an encoder-only model pre-trained on sentences then fine-tuned on labelled
// sentences with three classes; malformed files and unused options refused before training; and the
// stop on a diverging step, the same for every architecture.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include "nn/safetensors.h"
#include "training_helpers.h"
#include "transformer/data/lm_batch.h"
#include "transformer/data/text_files.h"
#include "transformer/data/tsv.h"
#include "transformer/evaluate/evaluate.h"
#include "transformer/store/checkpoint.h"
#include "transformer/train/trainer.h"

using namespace gradformer;
using test::TempDir;
namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kSubjects = {"le chat", "la souris", "le chien", "un oiseau"};
const std::vector<std::string> kVerbs = {"mange", "voit", "aime"};
const std::vector<std::string> kObjects = {"le pain", "la souris", "un fromage", "le chat"};

// `count` sentences "subject verb object ." (3 to 6 words), from `first` on, one a line.
std::string sentences(int count, int first = 0) {
  std::ostringstream out;
  for (int i = first; i < first + count; ++i) {
    out << kSubjects[static_cast<size_t>(i) % kSubjects.size()];
    if (i % 3 != 2) out << " " << kVerbs[static_cast<size_t>(i / 2) % kVerbs.size()];
    if (i % 5 != 4) out << " " << kObjects[static_cast<size_t>(i / 3) % kObjects.size()];
    out << " .\n";
  }
  return out.str();
}

// Every sentence of a file of sentences, as train() reads it.
std::vector<std::vector<std::string>> words_of(const std::string& path) { return read_sentences(path); }

// `count` pairs: the source's words in another order and other words.
std::string pairs(int count, int first = 0) {
  const std::vector<std::string> src = {"un", "deux", "trois", "quatre", "cinq"};
  const std::vector<std::string> tgt = {"one", "two", "three", "four", "five"};
  std::ostringstream out;
  for (int i = first; i < first + count; ++i) {
    const int length = 1 + i % 4;
    for (int k = 0; k < length; ++k) out << (k ? " " : "") << src[static_cast<size_t>(i + 2 * k) % src.size()];
    out << "\t";
    for (int k = length - 1; k >= 0; --k) out << tgt[static_cast<size_t>(i + 2 * k) % tgt.size()] << (k ? " " : "\n");
  }
  return out.str();
}

// A labelled sentence a line, with three classes whose names first appear as pos, neg, neutral.
std::string labelled(int count, int first = 0) {
  const std::vector<std::pair<std::string, std::string>> kinds = {
      {"pos", "est bon"}, {"neg", "est mauvais"}, {"neutral", "est la"}};
  std::ostringstream out;
  for (int i = first; i < first + count; ++i) {
    const auto& [label, end] = kinds[static_cast<size_t>(i) % kinds.size()];
    out << label << "\t" << kSubjects[static_cast<size_t>(i / 3) % kSubjects.size()] << " " << end << " .\n";
  }
  return out.str();
}

// The tiny model of these tests: d 16, 1 layer, 2 heads.
TrainOptions tiny(const std::string& task, Architecture arch, const std::string& out_dir) {
  TrainOptions o = default_train_options(task, arch);
  o.d_model = 16, o.d_ff = 32, o.heads = 2, o.layers = 1, o.max_len = 24, o.warmup = 4, o.seed = 3;
  o.quiet = true, o.out_dir = out_dir;
  return o;
}

// The number after `prefix` in the summary line that starts with it.
double summary_number(const TrainReport& r, const std::string& prefix) {
  for (const std::string& line : r.summary)
    if (line.rfind(prefix, 0) == 0) return std::stod(line.substr(prefix.size()));
  FAIL("no summary line starting with '" << prefix << "'");
  return 0;
}

bool has_line(const TrainReport& r, const std::string& line) {
  return std::find(r.summary.begin(), r.summary.end(), line) != r.summary.end();
}

// Every architecture's run ends on the same line, then "valid loss X" when it has validation data.
void check_end_lines(const TrainReport& r, bool valid) {
  REQUIRE(!r.summary.empty());
  INFO(r.summary.front());
  REQUIRE(r.summary.size() >= (valid ? 2u : 1u));
  std::smatch m;
  REQUIRE(std::regex_match(r.summary[0], m,
                           std::regex("trained ([0-9]+) steps in [0-9]+(:[0-9][0-9])+ \\([0-9]+ scored tokens/s\\); "
                                      "saved (.*)")));
  CHECK(std::stoll(m[1].str()) == r.steps);
  CHECK(m[3].str() == r.checkpoint_path);
  CHECK(fs::exists(r.checkpoint_path));
  CHECK(fs::exists(fs::path(r.checkpoint_path).parent_path() / "loss.svg"));  // every run draws its losses
  if (!valid) return;
  CHECK(r.summary[1].rfind("valid loss ", 0) == 0);
  CHECK(summary_number(r, "valid loss ") == Approx(r.valid_loss).epsilon(1e-5));
}

void check_same_parameters(const StateDict& a, const StateDict& b) {
  REQUIRE(a.size() == b.size());
  for (const auto& [name, t] : a) {
    INFO(name);
    CHECK(test::bitwise_equal(t, b.at(name)));
  }
}

// A copy of the checkpoint at `path` as the trainers before the one loop wrote it: of the options,
// only `kept` (and quiet, which they also kept).
std::string as_older_checkpoint(const std::string& path, const std::set<std::string>& kept, const std::string& out) {
  SafetensorsFile file = load_safetensors(path);
  for (auto it = file.metadata.begin(); it != file.metadata.end();) {
    const bool option = it->first.rfind("state.options.", 0) == 0;
    it = option && kept.count(it->first.substr(14)) == 0 ? file.metadata.erase(it) : std::next(it);
  }
  file.metadata["state.options.quiet"] = "true";
  save_safetensors(out, file.tensors, file.metadata);
  return out;
}

}  // namespace

TEST_CASE(
    "train: a decoder-only language model of the user's sentences reports its validation loss and perplexity, and "
    "resumes bit for bit") {
  TempDir dir("one-loop-lm");
  test::write_text(dir / "train.txt", sentences(20));
  test::write_text(dir / "valid.txt", sentences(5, 20) + "le chat dort .\n");  // "dort": an unknown word
  test::write_text(dir / "test.txt", sentences(4, 30));
  auto options = [&](const std::string& name) {
    TrainOptions o = tiny("lm", Architecture::DecoderOnly, dir / name);
    o.data_path = dir / "train.txt", o.valid_path = dir / "valid.txt", o.test_path = dir / "test.txt";
    o.batch_size = 6, o.epochs = 2;  // 20 sentences: 4 batches an epoch (6, 6, 6, 2), 8 steps
    o.dropout = 0.1, o.label_smoothing = 0.1, o.clip = 1.0;
    return o;
  };
  const TrainReport full = train(options("full"));
  CHECK(full.arch == Architecture::DecoderOnly);
  CHECK(full.task == "lm");
  REQUIRE(full.losses.size() == 8);
  for (double loss : full.losses) CHECK(std::isfinite(loss));
  CHECK(full.losses.front() != full.losses.back());
  // Each epoch scores every sentence's words and its </s> once.
  int64_t tokens = 0;
  for (const auto& s : words_of(dir / "train.txt")) tokens += static_cast<int64_t>(s.size()) + 1;
  CHECK(full.scored_tokens == 2 * tokens);
  check_end_lines(full, /*valid=*/true);
  REQUIRE(std::isfinite(full.valid_loss));
  CHECK(full.valid_loss > 0);
  CHECK(summary_number(full, "valid perplexity ") == Approx(std::exp(full.valid_loss)).epsilon(1e-5));
  CHECK(!full.entropy_floor.has_value());  // toy-lm's alone

  // The validation loss is the saved model's on the valid file, the vocabulary the training file's.
  const LoadedDecoderOnly saved = load_decoder_only_checkpoint(full.checkpoint_path);
  CHECK(saved.info.config.arch == Architecture::DecoderOnly);
  CHECK(saved.info.state.at("options.task") == "lm");
  CHECK(saved.info.state.at("options.data_path") == dir / "train.txt");
  CHECK(saved.info.state.at("options.d_model") == "16");
  CHECK(saved.info.target_tokenizer.vocab().id("dort") == Vocab::unk);
  std::vector<LmSequence> valid, test;
  for (const auto& s : words_of(dir / "valid.txt"))
    valid.push_back(sentence_sequence(saved.info.target_tokenizer.vocab().encode(s)));
  for (const auto& s : words_of(dir / "test.txt"))
    test.push_back(sentence_sequence(saved.info.target_tokenizer.vocab().encode(s)));
  CHECK(test::same_bits({lm_eval_loss(*saved.model, lm_batches(valid, 100))}, {full.valid_loss}));
  const double test_loss = lm_eval_loss(*saved.model, lm_batches(test, 100));
  CHECK(summary_number(full, "test loss ") == Approx(test_loss).epsilon(1e-5));

  for (int64_t k : {3, 4, 5}) {  // 4: stopped at the end of the first epoch
    INFO("interrupted after step " << k);
    TrainOptions first = options("part" + std::to_string(k));
    first.stop_after = k;
    const TrainReport part = train(first);
    CHECK(test::same_bits(part.losses, {full.losses.begin(), full.losses.begin() + k}));
    TrainOptions second = options("resumed" + std::to_string(k));
    second.seed = 99, second.lr = 123;  // the checkpoint's options win
    const TrainReport resumed = train(second, part.checkpoint_path);
    CHECK(resumed.first_step == k + 1);
    CHECK(test::same_bits(resumed.losses, {full.losses.begin() + k, full.losses.end()}));
    CHECK(test::same_bits({resumed.valid_loss}, {full.valid_loss}));
    check_same_parameters(saved.model->state_dict(),
                          load_decoder_only_checkpoint(resumed.checkpoint_path).model->state_dict());
  }
}

TEST_CASE("train: a decoder-only translator of the user's pairs scores its test file with BLEU") {
  TempDir dir("one-loop-corpus");
  test::write_text(dir / "train.tsv", pairs(16));
  test::write_text(dir / "valid.tsv", pairs(3, 16));
  test::write_text(dir / "test.tsv", pairs(5, 19));
  TrainOptions o = tiny("corpus", Architecture::DecoderOnly, dir / "run");
  o.data_path = dir / "train.tsv", o.valid_path = dir / "valid.tsv", o.test_path = dir / "test.tsv";
  o.batch_size = 8, o.epochs = 2;
  const TrainReport r = train(o);
  REQUIRE(r.losses.size() == 4);
  check_end_lines(r, /*valid=*/true);
  CHECK(std::isfinite(r.valid_loss));
  CHECK(r.valid_loss > 0);
  REQUIRE(r.test_translation.has_value());
  const std::vector<SentencePair> test = read_tsv(dir / "test.tsv");
  REQUIRE(r.test_translation->hypotheses.size() == test.size());
  // Scored against the test file's targets: its reference length is theirs.
  int64_t reference_length = 0;
  for (const SentencePair& p : test) reference_length += static_cast<int64_t>(p.target.size());
  CHECK(r.test_translation->bleu.reference_length == reference_length);
  CHECK((r.test_translation->bleu.bleu >= 0 && r.test_translation->bleu.bleu <= 100));
  CHECK((r.test_translation->exact_match >= 0 && r.test_translation->exact_match <= 1));
  // The hypotheses are the saved model's greedy translations.
  const LoadedDecoderOnly saved = load_decoder_only_checkpoint(r.checkpoint_path);
  for (size_t i = 0; i < test.size(); ++i)
    CHECK(translate_as_lm(*saved.model, test[i].source, saved.info.target_tokenizer.vocab()) ==
          r.test_translation->hypotheses[i]);
  CHECK(summary_number(r, "test: BLEU ") == Approx(r.test_translation->bleu.bleu).epsilon(1e-5).margin(1e-12));
}

TEST_CASE(
    "train: an encoder-only model pre-trained on the user's sentences, then fine-tuned on labelled sentences of three "
    "classes") {
  TempDir dir("one-loop-encoder-only");
  std::string all_sentences;
  for (int i = 0; i < 24; ++i) {  // the labelled files' sentences, without their labels
    const std::string line = labelled(1, i);
    all_sentences += line.substr(line.find('\t') + 1);
  }
  test::write_text(dir / "sentences.txt", all_sentences + sentences(12));
  test::write_text(dir / "valid.txt", sentences(5, 12));
  test::write_text(dir / "train.tsv", labelled(12));
  test::write_text(dir / "valid.tsv", labelled(6, 12));
  test::write_text(dir / "test.tsv", labelled(4, 18));

  TrainOptions mlm = tiny("mlm", Architecture::EncoderOnly, dir / "mlm");
  mlm.data_path = dir / "sentences.txt", mlm.valid_path = dir / "valid.txt";
  mlm.steps = 4, mlm.batch_size = 8;
  const TrainReport pre = train(mlm);
  CHECK(pre.arch == Architecture::EncoderOnly);
  REQUIRE(pre.losses.size() == 4);
  check_end_lines(pre, /*valid=*/true);
  const LoadedEncoderOnly p = load_encoder_only_checkpoint(pre.checkpoint_path);
  const MlmScore score = mlm_evaluate(*p.model, p.info.vocab, words_of(dir / "valid.txt"), mlm.seed);
  CHECK(test::same_bits({score.loss, score.accuracy}, {pre.valid_loss, pre.valid_accuracy}));
  CHECK((pre.valid_accuracy >= 0 && pre.valid_accuracy <= 1));
  CHECK(has_line(pre, message("valid (5 sentences): MLM loss ", score.loss, " per chosen token, ", 100 * score.accuracy,
                              "% of chosen tokens recovered")));

  TrainOptions cls = tiny("classify", Architecture::EncoderOnly, dir / "cls");
  cls.init_path = pre.checkpoint_path;
  cls.data_path = dir / "train.tsv", cls.valid_path = dir / "valid.tsv", cls.test_path = dir / "test.tsv";
  cls.steps = 3, cls.batch_size = 6;
  const TrainReport fine = train(cls);
  REQUIRE(fine.losses.size() == 3);
  check_end_lines(fine, /*valid=*/true);
  const LoadedEncoderOnly f = load_encoder_only_checkpoint(fine.checkpoint_path);
  // The classes in the order the training file first names them, not sorted.
  CHECK(f.info.labels == std::vector<std::string>{"pos", "neg", "neutral"});
  CHECK(f.info.config.classes == 3);
  CHECK(f.model->classifier->weight.value().shape() == Shape{3, 16});
  CHECK(f.info.vocab == p.info.vocab);  // the pre-trained model's
  CHECK(f.info.state.at("options.init_path") == pre.checkpoint_path);
  CHECK(f.info.state.at("options.data_path") == dir / "train.tsv");
  // The accuracies are the saved classifier's on the valid and test files.
  const int64_t most = f.info.config.max_len - 2;
  const auto valid = read_labelled(dir / "valid.tsv", most, f.info.labels).examples;
  const auto test = read_labelled(dir / "test.tsv", most, f.info.labels).examples;
  CHECK(test::same_bits({fine.valid_accuracy}, {classify_accuracy(*f.model, f.info.vocab, valid)}));
  CHECK(test::same_bits({fine.test_accuracy}, {classify_accuracy(*f.model, f.info.vocab, test)}));
  CHECK(test::same_bits({fine.valid_loss}, {classify_loss(*f.model, f.info.vocab, valid)}));
  for (const double accuracy : {fine.valid_accuracy, fine.test_accuracy}) {
    CHECK((accuracy >= 0 && accuracy <= 1));
  }
  CHECK(has_line(fine, message("accuracy: valid ", 100 * fine.valid_accuracy, "% of 6, test ", 100 * fine.test_accuracy,
                               "% of 4 sentences")));
}

TEST_CASE("train: malformed user files are DataErrors naming file and line, before any training") {
  TempDir dir("one-loop-bad-files");
  const std::string out = dir / "out";
  auto refused = [&](const TrainOptions& o) {
    const std::string msg = test::error_message<DataError>([&] { train(o); });
    CHECK(!fs::exists(out));  // nothing written
    return msg;
  };
  SECTION("a file of sentences with a tab (a TSV line) for a language model") {
    test::write_text(dir / "sentences.txt", "le chat mange .\nle chien\tthe dog\n");
    TrainOptions o = tiny("lm", Architecture::DecoderOnly, out);
    o.data_path = dir / "sentences.txt";
    CHECK(refused(o).find((dir / "sentences.txt") + ":2: holds a tab") != std::string::npos);
    o = tiny("mlm", Architecture::EncoderOnly, out);  // and for a masked language model
    o.data_path = dir / "sentences.txt";
    CHECK(refused(o).find((dir / "sentences.txt") + ":2: holds a tab") != std::string::npos);
  }
  SECTION("a valid file of sentences with a tab") {
    test::write_text(dir / "sentences.txt", "le chat mange .\n");
    test::write_text(dir / "valid.txt", "le chat .\nle chat .\nle chien\tthe dog\n");
    TrainOptions o = tiny("lm", Architecture::DecoderOnly, out);
    o.data_path = dir / "sentences.txt", o.valid_path = dir / "valid.txt";
    CHECK(refused(o).find((dir / "valid.txt") + ":3: holds a tab") != std::string::npos);
  }
  SECTION("a labelled training file of one class") {
    test::write_text(dir / "train.tsv", "pos\tle chat .\npos\tle chien .\n");
    TrainOptions o = tiny("classify", Architecture::EncoderOnly, out);
    o.data_path = dir / "train.tsv";
    CHECK(refused(o).find((dir / "train.tsv") + ": every sentence has the label 'pos'") != std::string::npos);
  }
  SECTION("a labelled valid file with a label the training file does not have") {
    test::write_text(dir / "train.tsv", labelled(6));
    test::write_text(dir / "valid.tsv", "neg\tle chat .\nmaybe\tle chien .\n");
    TrainOptions o = tiny("classify", Architecture::EncoderOnly, out);
    o.data_path = dir / "train.tsv", o.valid_path = dir / "valid.tsv";
    CHECK(refused(o).find((dir / "valid.tsv") +
                          ":2: label 'maybe' is not one of the training labels (pos, neg, neutral)") !=
          std::string::npos);
  }
  SECTION("a TSV line without a tab where pairs were expected") {
    test::write_text(dir / "train.tsv", pairs(3) + "no tab here\n");
    TrainOptions o = tiny("corpus", Architecture::DecoderOnly, out);
    o.data_path = dir / "train.tsv";
    CHECK(refused(o).find((dir / "train.tsv") + ":4: ") != std::string::npos);
  }
}

TEST_CASE("train: an option the task cannot use, or the data a task needs missing, is a TrainOptionError") {
  TempDir dir("one-loop-options");
  const std::string out = dir / "out";
  struct Bad {
    TrainOptions options;
    const char* field;
    const char* what;
  };
  auto with = [&](const std::string& task, Architecture arch, void (*set)(TrainOptions&)) {
    TrainOptions o = tiny(task, arch, out);
    set(o);
    return o;
  };
  const Bad bad[] = {
      {with("lm", Architecture::DecoderOnly, [](TrainOptions&) {}), "data_path",
       "train: data_path is empty: decoder-only lm trains on the sentences of a file"},
      {with("corpus", Architecture::DecoderOnly, [](TrainOptions&) {}), "data_path",
       "train: data_path is empty: decoder-only corpus trains on the pairs of a file"},
      {with("toy-lm", Architecture::DecoderOnly, [](TrainOptions& o) { o.batching = Batching::Length; }), "batching",
       "train: batching is not used by decoder-only toy-lm"},
      {with("toy-lm", Architecture::DecoderOnly, [](TrainOptions& o) { o.data_path = "x.txt"; }), "data_path",
       "train: data_path is not used by decoder-only toy-lm"},
      {with("lm", Architecture::DecoderOnly,
            [](TrainOptions& o) {
              o.data_path = "x.txt";
              o.batches_per_epoch = 3;  // an epoch is the file
            }),
       "batches_per_epoch", "train: batches_per_epoch is not used by decoder-only lm"},
      {with("mlm", Architecture::EncoderOnly, [](TrainOptions& o) { o.beam = 4; }), "beam",
       "train: beam is not used by encoder-only mlm"},
      {with("copy", Architecture::EncoderDecoder, [](TrainOptions& o) { o.pieces = 2; }), "pieces",
       "train: pieces is not used by encoder-decoder copy"},
      {with("classify", Architecture::EncoderOnly,
            [](TrainOptions& o) {
              o.data_path = "x.tsv";
              o.labelled = 100;  // the toy corpus's labelled few: not with the user's file
            }),
       "labelled", "train: labelled is not used by encoder-only classify"},
      {with("toy-lm", Architecture::DecoderOnly, [](TrainOptions& o) { o.valid_path = "v.txt"; }), "valid_path",
       "train: valid_path is not used by decoder-only toy-lm"},
      {with("mlm", Architecture::EncoderOnly, [](TrainOptions& o) { o.test_path = "t.txt"; }), "test_path",
       "train: test_path is for a run on your own data (data_path), not the built-in mlm"},
  };
  for (const Bad& b : bad) {
    INFO(b.what);
    try {
      train(b.options);
      FAIL("no error");
    } catch (const TrainOptionError& e) {
      CHECK(e.field() == b.field);
      CHECK(std::string(e.what()) == b.what);
    }
    CHECK(!fs::exists(out));
  }
}

TEST_CASE(
    "train: a diverging decoder-only or encoder-only run stops at the step with a NonFiniteError, saving no NaN") {
  TempDir dir("one-loop-nan");
  for (const Architecture arch : {Architecture::DecoderOnly, Architecture::EncoderOnly}) {
    for (const int64_t save_every : {0, 1}) {
      const std::string name = std::string(architecture_name(arch)) + "-" + std::to_string(save_every);
      INFO(name);
      TrainOptions o = tiny(arch == Architecture::DecoderOnly ? "toy-lm" : "mlm", arch, dir / name);
      o.max_len = 40, o.batch_size = 8, o.epochs = 1, o.steps = 6;
      o.lr = 1e30, o.clip = 0, o.save_every = save_every;  // the first update throws the parameters far out
      const std::string msg = test::error_message<NonFiniteError>([&] { train(o); });
      INFO(msg);
      REQUIRE(msg.rfind("train: step ", 0) == 0);
      const int64_t step = std::stoll(msg.substr(12));
      CHECK(step >= 2);
      CHECK(msg.find(message("train: step ", step, " diverged: ")) == 0);
      CHECK(msg.find("No checkpoint written for it") != std::string::npos);
      const std::string checkpoint = dir / (name + "/model.safetensors");
      if (save_every == 0) {
        CHECK(!fs::exists(checkpoint));  // nothing saved at all
      } else {
        // The last checkpoint is the last good step's, and reads back (no non-finite parameter).
        const CheckpointFile last = read_checkpoint_file(checkpoint);
        CHECK(last.arch == arch);
        CHECK(last.state.at("train.step") == std::to_string(step - 1));
      }
    }
  }
}

TEST_CASE("train: checkpoints the trainers before the one loop wrote resume bit for bit") {
  TempDir dir("one-loop-older");
  struct Run {
    const char* name;
    TrainOptions options;
    int64_t stop;
    std::set<std::string> kept;  // the options the old trainer kept
  };
  TrainOptions copy = tiny("copy", Architecture::EncoderDecoder, "");
  copy.max_len = 16, copy.dropout = 0.1, copy.label_smoothing = 0.1, copy.clip = 1.0;
  copy.batch_size = 8, copy.epochs = 2, copy.batches_per_epoch = 3;
  TrainOptions mlm = tiny("mlm", Architecture::EncoderOnly, "");
  mlm.clip = 1.0, mlm.steps = 6, mlm.batch_size = 8;
  const Run runs[] = {
      // Written before the batching could be chosen: no options.batching or options.pieces (and
      // the copy task, which never read them, must not take the length batching of those runs).
      {"copy",
       copy,
       2,
       {"task",       "data_path",       "valid_path", "test_path",  "out_dir",    "metrics_path",      "log_every",
        "stop_after", "threads",         "batch_size", "max_tokens", "epochs",     "batches_per_epoch", "lr",
        "warmup",     "label_smoothing", "clip",       "seed",       "eval_every", "save_every",        "keep_last",
        "beam"}},
      // The encoder-only trainer's own few options.
      {"mlm",
       mlm,
       2,
       {"task", "init_path", "steps", "batch_size", "lr", "warmup", "clip", "labelled", "seed", "save_every", "out_dir",
        "log_every", "stop_after", "threads"}},
  };
  for (const Run& run : runs) {
    INFO(run.name);
    TrainOptions o = run.options;
    o.out_dir = dir / (std::string(run.name) + "-full");
    const TrainReport full = train(o);
    o.out_dir = dir / (std::string(run.name) + "-part"), o.stop_after = run.stop;
    const TrainReport part = train(o);
    const std::string older =
        as_older_checkpoint(part.checkpoint_path, run.kept, dir / (std::string(run.name) + "-older.safetensors"));
    TrainOptions again = run.options;
    again.out_dir = dir / (std::string(run.name) + "-resumed");
    const TrainReport resumed = train(again, older);
    CHECK(resumed.first_step == run.stop + 1);
    CHECK(test::same_bits(resumed.losses, {full.losses.begin() + run.stop, full.losses.end()}));
    check_same_parameters(read_checkpoint_file(full.checkpoint_path).parameters,
                          read_checkpoint_file(resumed.checkpoint_path).parameters);
  }
}
