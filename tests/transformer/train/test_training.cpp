// Training end to end (transformer/train/trainer.h) and its checkpoints (transformer/store/checkpoint.h):
// an interrupted run resumed from its checkpoint continues bit for bit as the uninterrupted run,
// on the copy task and on a corpus read from a TSV file; checkpoints give back the same model,
// configuration, vocabularies and state, and reject files that are not checkpoints.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "nn/all.h"
#include "nn/optimizer.h"
#include "training_helpers.h"
#include "transformer/data/batch_stream.h"
#include "transformer/store/checkpoint.h"
#include "transformer/train/trainer.h"

using namespace gradformer;
using test::TempDir;

namespace {

// A copy-task run small enough for a test: d 16, 1 layer, 8 sequences a batch, 2 x 4 steps.
// Dropout, label smoothing and clipping stay on, so their state has to survive the resume too.
TrainOptions tiny_copy(const TempDir& dir, const std::string& name) {
  TrainOptions o = default_train_options("copy");
  o.d_model = 16, o.d_ff = 32, o.heads = 2, o.layers = 1, o.max_len = 16;
  o.dropout = 0.1, o.label_smoothing = 0.1, o.clip = 1.0;
  o.batch_size = 8, o.epochs = 2, o.batches_per_epoch = 4;
  o.lr = 1.0, o.warmup = 4, o.seed = 7;
  o.quiet = true;
  o.out_dir = dir / name;
  return o;
}

// 24 pairs of 1 to 6 words: the target is the source's words mapped to other words, reversed.
std::string tiny_tsv() {
  const std::vector<std::string> src_words = {"un", "deux", "trois", "quatre", "cinq", "six", "sept"};
  const std::vector<std::string> tgt_words = {"one", "two", "three", "four", "five", "six", "seven"};
  std::ostringstream out;
  for (int i = 0; i < 24; ++i) {
    const int length = 1 + (i * 5) % 6;
    std::vector<int> ids;
    for (int k = 0; k < length; ++k) ids.push_back((i + 3 * k) % 7);
    for (int k = 0; k < length; ++k)
      out << (k ? " " : "") << src_words[static_cast<size_t>(ids[static_cast<size_t>(k)])];
    out << "\t";
    for (int k = length - 1; k >= 0; --k)
      out << (k == length - 1 ? "" : " ") << tgt_words[static_cast<size_t>(ids[static_cast<size_t>(k)])];
    out << "\n";
  }
  return out.str();
}

TrainOptions tiny_corpus(const TempDir& dir, const std::string& name) {
  TrainOptions o = default_train_options("corpus");
  o.data_path = dir / "train.tsv";
  o.valid_path = dir / "valid.tsv";
  o.d_model = 16, o.d_ff = 32, o.heads = 2, o.layers = 1, o.max_len = 16;
  o.dropout = 0.1, o.label_smoothing = 0.1, o.clip = 1.0;
  o.batch_size = 5, o.epochs = 2;
  o.lr = 1.0, o.warmup = 4, o.seed = 11;
  o.eval_every = 3;  // evaluating in between must not disturb anything the training depends on
  o.quiet = true;
  o.out_dir = dir / name;
  return o;
}

std::vector<double> tail(const std::vector<double>& v, size_t from) {
  return {v.begin() + static_cast<std::ptrdiff_t>(from), v.end()};
}

// The tiny model of the checkpoint tests, with vocabularies of the sizes it was built for.
struct TinyModel {
  Vocab source = Vocab::build({{"a", "b", "c"}, {"d", "e"}});       // 4 specials + 5
  Vocab target = Vocab::build({{"x", "y"}, {"z", "w", "v", "u"}});  // 4 specials + 6
  TransformerConfig config;
  std::unique_ptr<EncoderDecoder> model;

  explicit TinyModel(NormPlacement norm = NormPlacement::Post, bool tie = false) {
    config.src_vocab = source.size(), config.tgt_vocab = target.size();
    if (tie) target = source, config.tgt_vocab = source.size();
    config.d_model = 16, config.d_ff = 24, config.heads = 4, config.layers = 2, config.dropout = 0.25;
    config.norm = norm, config.max_len = 20, config.tie_embeddings = tie;
    model = std::make_unique<EncoderDecoder>(config, 5);
  }
  CheckpointInfo info() const { return {config, source, target, {{"train.step", "42"}, {"note", "two\nlines"}}}; }
};

// A batch for the tiny model: two sentences, the second padded.
Batch tiny_batch() {
  std::vector<EncodedPair> pairs = {{{4, 5, 6, 7}, {4, 5, 6}},
                                    {{8, 4}, {8, 7, 4, 5, 6}}};  // ids < 9: fits every vocabulary
  return collate(pairs, {0, 1});
}

Tensor outputs(EncoderDecoder& model, const Batch& b) {
  InferenceGuard inference(model);
  return teacher_forced_logits(model, b).value();
}

}  // namespace

// ---- exact resume ----------------------------------------------------------------------------------

TEST_CASE("train: the copy task resumed from a checkpoint continues with the uninterrupted run's losses, bit for bit") {
  TempDir dir("resume-copy");
  const TrainReport full = train(tiny_copy(dir, "full"));
  REQUIRE(full.losses.size() == 8);
  REQUIRE(full.first_step == 1);
  CHECK(full.steps == 8);
  for (double loss : full.losses) CHECK(std::isfinite(loss));
  // Not a constant: the model learns (or at least changes) from step to step.
  CHECK(full.losses.front() != full.losses.back());
  CHECK(std::filesystem::exists(dir / "full/model.safetensors"));

  for (int64_t k : {1, 3, 4, 7}) {  // k = 4 stops exactly at an epoch boundary
    INFO("interrupted after step " << k);
    TrainOptions first = tiny_copy(dir, "part" + std::to_string(k));
    first.stop_after = k;
    const TrainReport part = train(first);
    CHECK(part.steps == k);
    CHECK(test::same_bits(part.losses, {full.losses.begin(), full.losses.begin() + k}));

    TrainOptions second = tiny_copy(dir, "resumed" + std::to_string(k));
    second.lr = 123;  // the checkpoint's options win over everything but the output ones
    second.seed = 99;
    const TrainReport resumed = train(second, part.checkpoint_path);
    CHECK(resumed.first_step == k + 1);
    CHECK(resumed.steps == 8 - k);
    CHECK(test::same_bits(resumed.losses, tail(full.losses, static_cast<size_t>(k))));
    // And the models at the end are the same, bit for bit.
    const LoadedCheckpoint a = load_checkpoint(full.checkpoint_path), b = load_checkpoint(resumed.checkpoint_path);
    const StateDict sa = a.model->state_dict(), sb = b.model->state_dict();
    for (const auto& [name, t] : sa) CHECK(test::bitwise_equal(t, sb.at(name)));
    CHECK(a.info.state.at("train.step") == "8");
    CHECK(b.info.state.at("train.step") == "8");
  }
}

// The value after "name": in one line of the metrics file.
static double json_number(const std::string& line, const std::string& name) {
  const auto at = line.find("\"" + name + "\": ");
  REQUIRE(at != std::string::npos);
  return std::stod(line.substr(at + name.size() + 4));
}

TEST_CASE(
    "train: a TSV corpus resumed mid-epoch and at an epoch boundary continues with the same losses, bit for bit") {
  TempDir dir("resume-corpus");
  test::write_text(dir / "train.tsv", tiny_tsv());
  test::write_text(dir / "valid.tsv", "un deux\ttwo one\ntrois\tthree\n");
  // The default (random batches in length-sorted pieces), and length batches in one piece.
  for (const auto& [batching, pieces] : {std::pair{Batching::Random, int64_t{3}}, {Batching::Length, int64_t{1}}}) {
    INFO("batching " << batching_name(batching) << " in " << pieces << " pieces");
    const auto options = [&, batching = batching, pieces = pieces](const std::string& name) {
      TrainOptions o = tiny_corpus(dir, batching_name(batching) + name);
      o.batching = batching, o.pieces = pieces;
      return o;
    };
    TrainOptions full_options = options("full");
    full_options.metrics_path = dir / (batching_name(batching) + "-metrics.jsonl");
    const TrainReport full = train(full_options);
    // Every metrics line says how the run was batched, and how much of it was padding.
    std::ifstream metrics(full_options.metrics_path);
    std::string line;
    REQUIRE(std::getline(metrics, line));  // the settings
    CHECK(line.find("\"options.batching\":\"" + batching_name(batching) + "\"") != std::string::npos);
    REQUIRE(std::getline(metrics, line));  // the first logging step
    const std::string recorded =
        "\"batching\": \"" + batching_name(batching) + "\", \"pieces\": " + std::to_string(pieces);
    CHECK(line.find(recorded) != std::string::npos);
    CHECK((json_number(line, "padding") >= 0 && json_number(line, "padding") < 1));
    // 24 pairs at most 5 to a batch: at least 5 batches an epoch, 2 epochs.
    REQUIRE(full.losses.size() >= 10);
    REQUIRE(full.losses.size() % 2 == 0);
    const auto per_epoch = static_cast<int64_t>(full.losses.size() / 2);
    for (double loss : full.losses) CHECK(std::isfinite(loss));
    REQUIRE(full.valid_translation.has_value());
    CHECK(full.valid_translation->hypotheses.size() == 2);
    const LoadedCheckpoint saved = load_checkpoint(full.checkpoint_path);
    CHECK(saved.info.state.at("options.batching") == batching_name(batching));
    CHECK(saved.info.state.at("options.pieces") == std::to_string(pieces));

    for (int64_t k : {per_epoch / 2, per_epoch, per_epoch + 2}) {
      INFO("interrupted after step " << k << " of " << full.losses.size() << " (" << per_epoch << " a epoch)");
      TrainOptions first = options("part" + std::to_string(k));
      first.stop_after = k;
      const TrainReport part = train(first);
      CHECK(test::same_bits(part.losses, {full.losses.begin(), full.losses.begin() + k}));
      // Resumed with the defaults: the checkpoint's batching must win.
      const TrainReport resumed = train(tiny_corpus(dir, "resumed" + std::to_string(k)), part.checkpoint_path);
      CHECK(resumed.first_step == k + 1);
      CHECK(test::same_bits(resumed.losses, tail(full.losses, static_cast<size_t>(k))));
      CHECK(resumed.valid_loss == full.valid_loss);
    }
  }
}

TEST_CASE(
    "train: metrics_path gets the settings, then one JSON line per logging step, also when quiet, with the schedule's "
    "learning rate") {
  TempDir dir("metrics");
  TrainOptions o = tiny_copy(dir, "run");
  o.log_every = 2;
  o.lr = 1e-3;  // rates around 1e-4: the file must keep their digits
  o.metrics_path = dir / "metrics.jsonl";
  const TrainReport r = train(o);
  REQUIRE(r.losses.size() == 8);
  std::istringstream in(test::read_bytes(o.metrics_path));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  REQUIRE(lines.size() == 5);
  CHECK(lines[0].rfind("{\"settings\":{", 0) == 0);  // the run's settings first (test_run_directory.cpp)
  lines.erase(lines.begin());
  for (size_t i = 0; i < lines.size(); ++i) {
    INFO(lines[i]);
    const auto step = static_cast<int64_t>(2 * i + 2);
    CHECK(lines[i].front() == '{');
    CHECK(lines[i].back() == '}');
    CHECK(json_number(lines[i], "step") == static_cast<double>(step));
    // The copy task's batches all have the same number of tokens: the window's loss is the plain mean.
    CHECK(json_number(lines[i], "loss") == Approx((r.losses[2 * i] + r.losses[2 * i + 1]) / 2).epsilon(1e-6));
    // lr * d^-0.5 * min(step^-0.5, step * warmup^-1.5), d 16, warmup 4, lr 1e-3.
    const double s = static_cast<double>(step);
    const double lr = 1e-3 / std::sqrt(16.0) * std::min(1 / std::sqrt(s), s * std::pow(4.0, -1.5));
    CHECK(json_number(lines[i], "lr") == Approx(lr).epsilon(1e-6));
    CHECK(json_number(lines[i], "tokens/s") > 0);
  }
}

TEST_CASE("CorpusStream: a restored source yields the same batches as the original from that point on") {
  std::vector<EncodedPair> pairs;
  for (int64_t i = 0; i < 17; ++i)
    pairs.push_back({std::vector<int64_t>(static_cast<size_t>(1 + i % 5), 4 + i % 3), {5 + i % 2}});
  const BatchingOptions options{.max_sentences = 3, .pieces = 2};  // pieces: each batch in two
  CorpusStream original(pairs, options, 21);
  const int64_t per_epoch = original.batches_per_epoch();
  REQUIRE(per_epoch >= 6);  // 17 sentences, at most 3 a batch
  for (int64_t stop : {int64_t{0}, int64_t{2}, per_epoch, per_epoch + 1, 2 * per_epoch + 3}) {
    CorpusStream a(pairs, options, 21);
    for (int64_t i = 0; i < stop; ++i) (void)a.next();
    CorpusStream b(pairs, options, 12345);  // another seed: restore must override it
    b.restore(a.state(), "test");
    for (int64_t i = 0; i < 2 * per_epoch + 1; ++i) {
      const std::vector<Batch> x = a.next(), y = b.next();
      INFO("stopped at " << stop << ", batch " << i);
      REQUIRE(x.size() == y.size());
      for (size_t p = 0; p < x.size(); ++p) {
        REQUIRE(test::bitwise_equal(x[p].src, y[p].src));
        REQUIRE(test::bitwise_equal(x[p].tgt_out, y[p].tgt_out));
      }
    }
    CHECK(a.epoch() == b.epoch());
  }
  // Every sentence once per epoch.
  CorpusStream c(pairs, options, 21);
  int64_t sentences = 0;
  for (int64_t i = 0; i < per_epoch; ++i)
    for (const Batch& piece : c.next()) sentences += piece.size();
  CHECK(sentences == 17);
  CHECK_THROWS_MSG(c.restore({{"data.epoch", "0"}}, "ckpt.safetensors"), CheckpointError,
                   "ckpt.safetensors: no 'data.position' saved");
  // A garbled number was once std::stoll's std::invalid_argument, escaping as no gradformer error.
  CHECK_THROWS_MSG(
      c.restore({{"data.epoch", "x"}, {"data.position", "1"}, {"data.epoch_generator", "1 3"}}, "ckpt.safetensors"),
      CheckpointError, "ckpt.safetensors: 'data.epoch' should be an integer, got 'x'");
  CHECK_THROWS_MSG(
      c.restore({{"data.epoch", "-1"}, {"data.position", "1"}, {"data.epoch_generator", "1 3"}}, "ckpt.safetensors"),
      CheckpointError, "ckpt.safetensors: data.epoch -1 is negative");
  CHECK_THROWS_MSG(
      c.restore({{"data.epoch", "0"}, {"data.position", "99"}, {"data.epoch_generator", "1 3"}}, "ckpt.safetensors"),
      CheckpointError, "data.position 99 is outside");
  CHECK_THROWS_MSG(
      c.restore({{"data.epoch", "0"}, {"data.position", "1"}, {"data.epoch_generator", "x"}}, "ckpt.safetensors"),
      CheckpointError, "two integers");
}

TEST_CASE("CopyTaskStream: a restored source yields the same batches") {
  CopyTaskStream a(4, 3);
  (void)a.next();
  CopyTaskStream b(4, 99);
  b.restore(a.state(), "test");
  for (int i = 0; i < 3; ++i) CHECK(test::bitwise_equal(a.next().front().src, b.next().front().src));
  CHECK_THROWS_MSG(b.restore({}, "c.safetensors"), CheckpointError, "c.safetensors: no 'data.generator' saved");
  CHECK_THROWS_MSG(CopyTaskStream(0, 1), ValueError, "batch size must be at least 1");
}

TEST_CASE("train: options and checkpoint state that cannot be used are errors naming the problem") {
  TempDir dir("train-errors");
  CHECK_THROWS_MSG(default_train_options("poetry"), ValueError,
                   "train: encoder-decoder has no task 'poetry' (copy, toy-translation, corpus)");
  CHECK_THROWS_MSG(default_train_options("copy", Architecture::EncoderOnly), ValueError,
                   "train: encoder-only has no task 'copy' (mlm, classify)");
  // Each option out of range is a TrainOptionError naming the field and the value, before any work.
  struct Bad {
    const char* field;
    void (*set)(TrainOptions&);
    const char* what;
  };
  const Bad bad[] = {
      {"epochs", [](TrainOptions& o) { o.epochs = 0; }, "train: epochs must be at least 1, got 0"},
      {"batch_size", [](TrainOptions& o) { o.batch_size = -3; }, "train: batch_size must be at least 1, got -3"},
      {"warmup", [](TrainOptions& o) { o.warmup = 0; }, "train: warmup must be at least 1, got 0"},
      {"log_every", [](TrainOptions& o) { o.log_every = 0; }, "train: log_every must be at least 1, got 0"},
      {"beam", [](TrainOptions& o) { o.beam = 0; }, "train: beam must be at least 1, got 0"},
      {"batches_per_epoch", [](TrainOptions& o) { o.batches_per_epoch = 0; },
       "train: batches_per_epoch must be at least 1, got 0"},
      {"max_tokens", [](TrainOptions& o) { o.max_tokens = -1; }, "train: max_tokens must be at least 0, got -1"},
      {"pieces", [](TrainOptions& o) { o.pieces = 0; }, "train: pieces must be at least 1, got 0"},
      {"eval_every", [](TrainOptions& o) { o.eval_every = -2; }, "train: eval_every must be at least 0, got -2"},
      {"save_every", [](TrainOptions& o) { o.save_every = -1; }, "train: save_every must be at least 0, got -1"},
      {"keep_last", [](TrainOptions& o) { o.keep_last = -3; }, "train: keep_last must be at least 0, got -3"},
      {"stop_after", [](TrainOptions& o) { o.stop_after = -1; }, "train: stop_after must be at least 0, got -1"},
      {"label_smoothing", [](TrainOptions& o) { o.label_smoothing = 1; },
       "train: label_smoothing must be in [0, 1), got 1"},
      {"label_smoothing", [](TrainOptions& o) { o.label_smoothing = std::nan(""); },
       "train: label_smoothing must be in [0, 1), got nan"},
      {"lr", [](TrainOptions& o) { o.lr = -0.5; }, "train: lr must be positive, got -0.5"},
      {"clip", [](TrainOptions& o) { o.clip = -1; }, "train: clip must be at least 0 (0: no clipping), got -1"},
      {"epochs", [](TrainOptions& o) { o.epochs = int64_t{1} << 62; },
       "train: epochs must be at most 1073741824, got 4611686018427387904"},
      {"batch_size", [](TrainOptions& o) { o.batch_size = int64_t{1} << 40; },
       "train: batch_size must be at most 1073741824, got 1099511627776"},
      // The model's sizes, by option, before any data is made or read.
      {"d_model", [](TrainOptions& o) { o.d_model = int64_t{1} << 62; },
       "train: d_model must be from 2 to 65536, got 4611686018427387904"},
      {"d_model", [](TrainOptions& o) { o.d_model = 17, o.heads = 1; },
       "train: d_model must be even (sine and cosine pairs), got 17"},
      {"d_ff", [](TrainOptions& o) { o.d_ff = 0; }, "train: d_ff must be from 1 to 262144, got 0"},
      {"heads", [](TrainOptions& o) { o.heads = 3; }, "train: heads must divide the model width 16, got 3"},
      {"layers", [](TrainOptions& o) { o.layers = 59999; }, "train: layers must be from 1 to 1024, got 59999"},
      {"max_len", [](TrainOptions& o) { o.max_len = 1; }, "train: max_len must be from 2 to 1048576, got 1"},
      {"dropout", [](TrainOptions& o) { o.dropout = 1.5; }, "train: dropout must be in [0, 1), got 1.5"},
      // And too small for the task's data.
      {"max_len", [](TrainOptions& o) { o.max_len = 9; },
       "train: max_len must be at least 10 for the copy task (its sequences are 10 tokens), got 9"},
  };
  for (const Bad& b : bad) {
    INFO(b.what);
    TrainOptions o = tiny_copy(dir, "bad");
    b.set(o);
    try {
      train(o);
      FAIL("no error");
    } catch (const TrainOptionError& e) {
      CHECK(e.field() == b.field);
      CHECK(std::string(e.what()) == b.what);
      CHECK(std::string(e.what()) == "train: " + e.field() + " " + e.requirement());
    }
    CHECK(!std::filesystem::exists(dir / "bad"));  // nothing written
  }
  TrainOptions o = default_train_options("corpus");
  o.out_dir = dir / "corpus";
  CHECK_THROWS_MSG(train(o), TrainOptionError, "train: data_path is empty");
  o.data_path = dir / "missing.tsv";
  CHECK_THROWS_MSG(train(o), DataError, "missing.tsv");
  // An output directory that cannot be made (a file is in the way) and a metrics file that cannot
  // be written are DataErrors naming them.
  test::write_text(dir / "file", "not a directory");
  o = tiny_copy(dir, "run");
  o.out_dir = dir / "file/out";
  CHECK_THROWS_MSG(train(o), DataError, "train: output directory " + o.out_dir + ": cannot create: ");
  o = tiny_copy(dir, "run");
  o.metrics_path = dir / "file/metrics.jsonl";
  CHECK_THROWS_MSG(train(o), DataError,
                   "metrics file " + o.metrics_path + ": cannot open for writing: Not a directory");

  // Options round trip through the checkpoint state.
  TrainOptions r = default_train_options("toy-translation");
  r.lr = 0.1 + 0.2, r.clip = 1.0 / 3, r.seed = 123456789, r.batch_size = 17, r.beam = 4, r.max_tokens = 999;
  const TrainOptions back = options_from_state(options_to_state(r), "x");
  CHECK(back.task == "toy-translation");
  CHECK(back.lr == r.lr);
  CHECK(back.clip == r.clip);
  CHECK(back.label_smoothing == r.label_smoothing);
  CHECK((back.seed == r.seed && back.batch_size == 17 && back.beam == 4 && back.max_tokens == 999));
  CHECK((back.epochs == r.epochs && back.warmup == r.warmup && back.eval_every == r.eval_every));
  r.batching = Batching::Length, r.pieces = 3;
  const TrainOptions length = options_from_state(options_to_state(r), "x");
  CHECK((length.batching == Batching::Length && length.pieces == 3));
  auto broken = options_to_state(r);
  broken["options.batching"] = "sorted";
  CHECK_THROWS_MSG(options_from_state(broken, "ck.safetensors"), CheckpointError,
                   "ck.safetensors: options.batching is 'sorted', not one of random, length");
  // A run saved before the batching could be chosen was batched by length, in one piece (its
  // checkpoint has neither options.batching nor options.pieces: they came together).
  broken.erase("options.batching"), broken.erase("options.pieces");
  const TrainOptions older = options_from_state(broken, "ck.safetensors");
  CHECK((older.batching == Batching::Length && older.pieces == 1));
  broken["options.lr"] = "fast";
  CHECK_THROWS_MSG(options_from_state(broken, "ck.safetensors"), CheckpointError,
                   "ck.safetensors: options.lr should be a number, got 'fast'");
  broken["options.lr"] = "0.5";
  broken["options.epochs"] = "12abc";  // once read as 12
  CHECK_THROWS_MSG(options_from_state(broken, "ck.safetensors"), CheckpointError,
                   "ck.safetensors: options.epochs should be an integer, got '12abc'");
  // An option the checkpoint does not hold (saved before it existed) keeps the task's default.
  broken["options.epochs"] = "7";
  CHECK(options_from_state(broken, "ck.safetensors").epochs == 7);
  broken.erase("options.epochs");
  CHECK(options_from_state(broken, "ck.safetensors").epochs == default_train_options("toy-translation").epochs);

  // A checkpoint without the training state cannot be resumed: a CheckpointError, not a crash.
  const TrainReport done = train(tiny_copy(dir, "done"));
  LoadedCheckpoint ckpt = load_checkpoint(done.checkpoint_path);
  const std::string stateless = dir / "stateless.safetensors";
  save_checkpoint(stateless, *ckpt.model, ckpt.optimizer_state,
                  {ckpt.info.config, ckpt.info.source_tokenizer.vocab(), ckpt.info.target_tokenizer.vocab(), {}});
  CHECK_THROWS_MSG(train(tiny_copy(dir, "again"), stateless), CheckpointError, "no 'options.task' saved");
  for (const char* key : {"train.step", "train.dropout_generator"}) {
    INFO(key);
    CheckpointInfo info = ckpt.info;
    info.state.erase(key);
    const std::string path = dir / "partial.safetensors";
    save_checkpoint(path, *ckpt.model, ckpt.optimizer_state, info);
    CHECK_THROWS_MSG(train(tiny_copy(dir, "again"), path), CheckpointError, path);
    info.state[key] = "garbage";
    save_checkpoint(path, *ckpt.model, ckpt.optimizer_state, info);
    CHECK_THROWS_MSG(train(tiny_copy(dir, "again"), path), CheckpointError, path);
  }
  // A step no run can reach (epochs and batches per epoch are each at most 2^30) is refused by
  // name before anything adds to it: 2^63 - 1 overflowed while the message was being built.
  for (const char* step : {"9223372036854775807", "1152921504606846977"}) {
    CheckpointInfo info = ckpt.info;
    info.state["train.step"] = step;
    const std::string path = dir / "far.safetensors";
    save_checkpoint(path, *ckpt.model, ckpt.optimizer_state, info);
    CHECK_THROWS_MSG(train(tiny_copy(dir, "again"), path), CheckpointError,
                     path +
                         ": train.step should be a step number from 0 to 1152921504606846976 (the most steps a "
                         "run can have), got " +
                         step);
  }
  // No optimizer state: Adam's load_state lists what is missing.
  save_checkpoint(dir / "no-adam.safetensors", *ckpt.model, {}, ckpt.info);
  CHECK_THROWS_AS(train(tiny_copy(dir, "again"), dir / "no-adam.safetensors"), Error);
}

// ---- checkpoints ---------------------------------------------------------------------------------

TEST_CASE(
    "checkpoint: save then load gives the same outputs bit for bit, the same configuration, vocabularies and state") {
  TempDir dir("checkpoint");
  for (const bool pre : {false, true}) {
    for (const bool tie : {false, true}) {
      INFO("pre-LN " << pre << ", tied " << tie);
      TinyModel tiny(pre ? NormPlacement::Pre : NormPlacement::Post, tie);
      // Move the parameters off their initial values, so loading cannot pass by re-initialising.
      for (const auto& [name, p] : tiny.model->named_parameters()) {
        Tensor v = p.value();
        Generator g(name.size());
        v.add_(uniform(v.shape(), -0.1, 0.1, g, v.dtype()));
      }
      const std::string path = dir / "model.safetensors";
      save_checkpoint(path, *tiny.model, {}, tiny.info());
      const LoadedCheckpoint back = load_checkpoint(path);
      const Batch b = tiny_batch();
      CHECK(test::bitwise_equal(outputs(*tiny.model, b), outputs(*back.model, b)));

      const TransformerConfig& c = back.info.config;
      CHECK((c.src_vocab == tiny.config.src_vocab && c.tgt_vocab == tiny.config.tgt_vocab));
      CHECK((c.d_model == 16 && c.d_ff == 24 && c.heads == 4 && c.layers == 2 && c.max_len == 20));
      CHECK(c.dropout == 0.25);
      CHECK(c.norm == (pre ? NormPlacement::Pre : NormPlacement::Post));
      CHECK(c.tie_embeddings == tie);
      CHECK(c.dtype == DType::Float32);
      CHECK(back.info.source_tokenizer.vocab().to_text() == tiny.source.to_text());
      CHECK(back.info.target_tokenizer.vocab().to_text() == tiny.target.to_text());
      CHECK(back.info.target_tokenizer.vocab().token(Vocab::eos) == "</s>");
      CHECK(back.info.state == tiny.info().state);
      CHECK(back.optimizer_state.empty());
      CHECK(back.model->parameter_count() == tiny.model->parameter_count());
      for (const auto& entry : std::filesystem::directory_iterator(dir.path()))  // no temporary left behind
        CHECK(entry.path().filename().string().find(".tmp") == std::string::npos);
    }
  }
}

TEST_CASE("checkpoint: the optimizer's moments come back under their own names") {
  TempDir dir("checkpoint-adam");
  TinyModel tiny;
  Adam adam(tiny.model->parameters(), {.lr = 0.01});
  const Batch b = tiny_batch();
  for (int i = 0; i < 2; ++i) {
    adam.zero_grad();
    cross_entropy(teacher_forced_logits(*tiny.model, b), b.tgt_out, {.ignore_index = 0}).backward();
    adam.step();
  }
  const std::string path = dir / "with-adam.safetensors";
  save_checkpoint(path, *tiny.model, adam.state(), tiny.info());
  LoadedCheckpoint back = load_checkpoint(path);
  const StateDict expected = adam.state();
  REQUIRE(back.optimizer_state.size() == expected.size());
  for (const auto& [name, t] : expected) {
    INFO(name);
    REQUIRE(back.optimizer_state.count(name));
    CHECK(test::bitwise_equal(back.optimizer_state.at(name), t));
  }
  // And a fresh Adam over the loaded model takes them.
  Adam again(back.model->parameters(), {.lr = 0.01});
  again.load_state(back.optimizer_state);
  CHECK(test::bitwise_equal(again.state().begin()->second, expected.begin()->second));
}

TEST_CASE("checkpoint: files that are not gradformer checkpoints are CheckpointErrors naming the path") {
  TempDir dir("checkpoint-bad");
  TinyModel tiny;
  const std::string good = dir / "good.safetensors";
  save_checkpoint(good, *tiny.model, {}, tiny.info());
  const SafetensorsFile file = load_safetensors(good);

  // Rewrites the good file's tensors and metadata with one change.
  auto variant = [&](const std::string& name, auto change) {
    StateDict tensors = file.tensors;
    std::map<std::string, std::string> metadata = file.metadata;
    change(tensors, metadata);
    const std::string path = dir / name;
    save_safetensors(path, tensors, metadata);
    return path;
  };
  using T = StateDict;
  using M = std::map<std::string, std::string>;

  const std::string missing = dir / "missing.safetensors";
  CHECK_THROWS_MSG(load_checkpoint(missing), CheckpointError, missing);

  const std::string foreign = dir / "foreign.safetensors";
  save_safetensors(foreign, tiny.model->state_dict(), {});
  CHECK_THROWS_MSG(load_checkpoint(foreign), CheckpointError, foreign + ": not a gradformer checkpoint");

  std::string p = variant("format.safetensors", [](T&, M& m) { m["format"] = "something-else-7"; });
  CHECK_THROWS_MSG(load_checkpoint(p), CheckpointError, p + ": unknown checkpoint format 'something-else-7'");

  p = variant("vocab.safetensors", [](T&, M& m) { m["vocab.target"] = Vocab::build({{"only"}}).to_text(); });
  CHECK_THROWS_MSG(load_checkpoint(p), CheckpointError,
                   p + ": vocabularies of 9 and 5 tokens do not match the model's 9 and 10");

  p = variant("novocab.safetensors", [](T&, M& m) { m.erase("vocab.source"); });
  CHECK_THROWS_MSG(load_checkpoint(p), CheckpointError,
                   p + ": not a gradformer checkpoint: no metadata 'vocab.source'");

  p = variant("badvocab.safetensors", [](T&, M& m) { m["vocab.source"] = "a\nb\n"; });
  CHECK_THROWS_MSG(load_checkpoint(p), CheckpointError, p);

  p = variant("heads.safetensors", [](T&, M& m) { m["config.heads"] = "3"; });
  CHECK_THROWS_MSG(load_checkpoint(p), CheckpointError, p + ": the stored configuration is invalid");

  // A small file claiming a huge model fails on the configuration, before allocating it.
  for (const char* key : {"config.d_model", "config.d_ff", "config.max_len", "config.layers", "config.heads",
                          "config.src_vocab", "config.tgt_vocab"}) {
    INFO(key);
    p = variant("huge.safetensors", [&](T&, M& m) { m[key] = "4611686018427387904"; });
    CHECK_THROWS_MSG(load_checkpoint(p), CheckpointError,
                     p + ": the stored configuration is invalid: TransformerConfig: " + std::string(key).substr(7) +
                         " must be at most ");
  }
  p = variant("layers59999.safetensors", [](T&, M& m) { m["config.layers"] = "59999"; });
  CHECK_THROWS_MSG(load_checkpoint(p), CheckpointError, "TransformerConfig: layers must be at most 1024, got 59999");
  // 1000 layers are allowed, and the 998 layers' tensors missing are listed briefly.
  p = variant("layers1000.safetensors", [](T&, M& m) { m["config.layers"] = "1000"; });
  const std::string brief = test::error_message<CheckpointError>([&] { load_checkpoint(p); });
  CHECK(brief.find("... and ") != std::string::npos);
  CHECK(brief.size() < 2000);

  p = variant("dmodel.safetensors", [](T&, M& m) { m["config.d_model"] = "16x"; });
  CHECK_THROWS_MSG(load_checkpoint(p), CheckpointError,
                   p + ": metadata 'config.d_model' should be an integer, got '16x'");

  p = variant("norm.safetensors", [](T&, M& m) { m["config.norm"] = "sideways"; });
  CHECK_THROWS_MSG(load_checkpoint(p), CheckpointError, p + ": config.norm must be pre or post");

  p = variant("dropout.safetensors", [](T&, M& m) { m["config.dropout"] = "lots"; });
  CHECK_THROWS_MSG(load_checkpoint(p), CheckpointError, p + ": metadata 'config.dropout' should be a number");

  p = variant("noconfig.safetensors", [](T&, M& m) { m.erase("config.layers"); });
  CHECK_THROWS_MSG(load_checkpoint(p), CheckpointError,
                   p + ": not a gradformer checkpoint: no metadata 'config.layers'");

  p = variant("notensor.safetensors", [](T& t, M&) { t.erase("generator.bias"); });
  CHECK_THROWS_MSG(load_checkpoint(p), CheckpointError, p + ": the tensors do not fit the stored configuration");

  p = variant("layers.safetensors", [](T&, M& m) { m["config.layers"] = "1"; });  // tensors of 2 layers
  CHECK_THROWS_MSG(load_checkpoint(p), CheckpointError, p + ": the tensors do not fit the stored configuration");

  p = variant("shape.safetensors", [](T& t, M&) { t["generator.bias"] = zeros({3}); });
  CHECK_THROWS_MSG(load_checkpoint(p), CheckpointError, p + ": the tensors do not fit the stored configuration");

  // A file cut short.
  const std::string bytes = test::read_bytes(good);
  const std::string cut = dir / "cut.safetensors";
  test::write_text(cut, bytes.substr(0, bytes.size() / 2));
  CHECK_THROWS_MSG(load_checkpoint(cut), CheckpointError, cut);

  // Saving over a checkpoint replaces it whole.
  save_checkpoint(good, *tiny.model, {}, tiny.info());
  CHECK_NOTHROW(load_checkpoint(good));
}

TEST_CASE("train: resume_epochs extends a resumed run, and one the checkpoint is past is a TrainOptionError") {
  TempDir dir("train-extend");
  TrainOptions o = tiny_copy(dir, "run");
  o.stop_after = 4;  // of 2 epochs x 4 batches
  train(o);
  const std::string checkpoint = dir / "run/model.safetensors";
  TrainOptions more = tiny_copy(dir, "run");
  more.resume_epochs = 3;
  const TrainReport extended = train(more, checkpoint);
  CHECK(extended.first_step == 5);
  CHECK(extended.steps == 8);  // steps 5 to 12
  more.resume_epochs = 2;      // the checkpoint is now at step 12
  CHECK_THROWS_MSG(train(more, checkpoint), TrainOptionError,
                   "train: epochs must be at least 4 to continue the run from step 12 (4 batches per epoch), got 2");
  // Without it the checkpoint's epochs stand: nothing left to train.
  more.resume_epochs = 0;
  CHECK(train(more, checkpoint).steps == 0);
}

TEST_CASE(
    "train: max_len below the toy corpus's longest sentence is a TrainOptionError naming the pair, before training") {
  TempDir dir("train-toy-len");
  TrainOptions o = default_train_options("toy-translation");
  o.out_dir = dir / "toy", o.max_len = 4, o.quiet = true;
  CHECK_THROWS_MSG(
      train(o), TrainOptionError,
      "train: max_len must be at least 13 for the toy-translation corpus (its longest sentence, train pair 614, has 12 "
      "tokens, and </s> or <s> is added), got 4");
  CHECK(!std::filesystem::exists(dir / "toy"));
}

TEST_CASE("train: a run that diverges stops at that step with a NonFiniteError, and never saves the NaN model") {
  TempDir dir("train-nan");
  TrainOptions o = tiny_copy(dir, "nan");
  o.lr = 1e30, o.clip = 0, o.save_every = 1;  // the first update throws the parameters to ~1e26
  const std::string msg = test::error_message<NonFiniteError>([&] { train(o); });
  // "train: step 2 diverged: the loss is nan at learning rate ...; anomaly: the forward of 'matmul' produced ..."
  INFO(msg);
  REQUIRE(msg.rfind("train: step ", 0) == 0);
  const int64_t step = std::stoll(msg.substr(12));
  CHECK(step >= 2);
  CHECK(msg.find(message("train: step ", step, " diverged: the loss is ")) == 0);
  CHECK(msg.find("anomaly: the forward of '") != std::string::npos);
  CHECK(msg.find("No checkpoint written for it") != std::string::npos);
  // The last checkpoint is the last good step's, whole and finite.
  const LoadedCheckpoint last = load_checkpoint(dir / "nan/model.safetensors");
  CHECK(last.info.state.at("train.step") == std::to_string(step - 1));
}

TEST_CASE("checkpoint: a model with a NaN or infinite parameter is neither saved nor loaded") {
  TempDir dir("checkpoint-nan");
  TinyModel tiny;
  const std::string good = dir / "good.safetensors";
  save_checkpoint(good, *tiny.model, {}, tiny.info());
  Tensor bias = tiny.model->named_parameters().back().second.value();  // a handle to the last parameter
  const std::string name = tiny.model->named_parameters().back().first;
  bias.copy_(full(bias.shape(), std::nan("")));
  const std::string bad = dir / "bad.safetensors";
  CHECK_THROWS_MSG(save_checkpoint(bad, *tiny.model, {}, tiny.info()), CheckpointError,
                   bad + ": not saving a model with a non-finite parameter (" + name + " holds nan)");
  CHECK(!std::filesystem::exists(bad));
  // Nor an optimizer state that would resume into one (Adam's second moment overflowed to inf).
  bias.copy_(zeros(bias.shape()));
  const StateDict overflowed{{"adam.v.0", full({2}, INFINITY)}};
  CHECK_THROWS_MSG(save_checkpoint(bad, *tiny.model, overflowed, tiny.info()), CheckpointError,
                   bad + ": not saving a non-finite optimizer state (optimizer.adam.v.0 holds inf)");
  CHECK(!std::filesystem::exists(bad));
  // Written by another program: refused on loading.
  SafetensorsFile file = load_safetensors(good);
  file.tensors["generator.bias"] = full(file.tensors.at("generator.bias").shape(), -INFINITY);
  save_safetensors(bad, file.tensors, file.metadata);
  CHECK_THROWS_MSG(load_checkpoint(bad), CheckpointError,
                   bad + ": a non-finite parameter (generator.bias holds -inf): the model is unusable");
}

TEST_CASE("checkpoint: the configuration round trips as metadata") {
  TransformerConfig c = TransformerConfig::tutorial(30, 40);
  c.norm = NormPlacement::Pre, c.dropout = 0.1 + 0.2, c.dtype = DType::Float64;
  const TransformerConfig d = config_from_metadata(config_to_metadata(c), "x");
  CHECK((d.src_vocab == 30 && d.tgt_vocab == 40 && d.d_model == c.d_model && d.d_ff == c.d_ff && d.heads == c.heads));
  CHECK((d.layers == c.layers && d.max_len == c.max_len && d.norm == NormPlacement::Pre && d.dtype == DType::Float64));
  CHECK(d.dropout == c.dropout);
}

TEST_CASE("checkpoint: the family's fields round trip, and a checkpoint without them is the paper's model") {
  TransformerConfig c = TransformerConfig::tutorial(30, 30);
  c.arch = Architecture::DecoderOnly, c.activation = Activation::GELU, c.positions = Positions::Learned;
  const auto m = config_to_metadata(c);
  CHECK(m.at("config.arch") == "decoder-only");
  CHECK(m.at("config.activation") == "gelu");
  CHECK(m.at("config.positions") == "learned");
  const TransformerConfig d = config_from_metadata(m, "x");
  CHECK((d.arch == Architecture::DecoderOnly && d.activation == Activation::GELU && d.positions == Positions::Learned));
  // Written before the family: no config.arch, config.activation or config.positions.
  auto old = config_to_metadata(TransformerConfig::tutorial(30, 40));
  old.erase("config.arch"), old.erase("config.activation"), old.erase("config.positions");
  const TransformerConfig e = config_from_metadata(old, "old.safetensors");
  CHECK((e.arch == Architecture::EncoderDecoder && e.activation == Activation::ReLU &&
         e.positions == Positions::Sinusoidal));
  auto bad = m;
  bad["config.activation"] = "tanh";
  CHECK(test::error_message<CheckpointError>([&] { config_from_metadata(bad, "b.safetensors"); }) ==
        "b.safetensors: config.activation must be one of relu, gelu, gelu-tanh, swiglu, got 'tanh'");
  bad = m, bad["config.arch"] = "gpt";
  CHECK_THROWS_AS(config_from_metadata(bad, "b.safetensors"), CheckpointError);
}

TEST_CASE(
    "checkpoint: an encoder-decoder saved with GELU and learned positions loads to the same outputs, and "
    "load_checkpoint refuses a checkpoint of another architecture, naming both") {
  TempDir dir("family");
  TransformerConfig c = TransformerConfig::tutorial(9, 9);
  c.d_model = 16, c.d_ff = 32, c.heads = 2, c.layers = 1, c.max_len = 12, c.dropout = 0;
  c.activation = Activation::GELU, c.positions = Positions::Learned;
  EncoderDecoder model(c, 3);
  model.eval();
  const Vocab vocab = Vocab::from_text("<pad>\n<s>\n</s>\n<unk>\nw4\nw5\nw6\nw7\nw8\n", "test");
  const std::string path = dir / "gelu.safetensors";
  save_checkpoint(path, model, {}, {c, vocab, vocab, {}});
  LoadedCheckpoint loaded = load_checkpoint(path);
  loaded.model->eval();
  CHECK((loaded.info.config.activation == Activation::GELU && loaded.info.config.positions == Positions::Learned));
  const Tensor src = from_vector(std::vector<int64_t>{4, 5, 6, 2}, {1, 4}),
               tgt = from_vector(std::vector<int64_t>{1, 7, 8}, {1, 3});
  const Tensor a = model.forward(src, tgt, {}, {}).value(), b = loaded.model->forward(src, tgt, {}, {}).value();
  CHECK(a.to_vector<float>() == b.to_vector<float>());
  // A decoder-only model of the same sizes: read_checkpoint tells the kind, load_checkpoint refuses it.
  TransformerConfig other = c;
  other.arch = Architecture::DecoderOnly;
  const std::string lm = dir / "lm.safetensors";
  save_checkpoint(lm, DecoderOnly(other, 3), other, {}, {other, vocab, vocab, {}});
  CHECK(read_checkpoint(lm).info.config.arch == Architecture::DecoderOnly);
  CHECK(test::error_message<CheckpointError>([&] { load_checkpoint(lm); }) ==
        lm + ": a decoder-only checkpoint (config.arch), but this needs an encoder-decoder one");
}
