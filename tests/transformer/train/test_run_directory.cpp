// Where a run writes (transformer/train/run_directory.h): the folder named after the data, and a
// replaced run's own files removed, never anything else; the settings a run used, in its checkpoint
// and its metrics file.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <sstream>

#include "training_helpers.h"
#include "transformer/store/average.h"
#include "transformer/store/checkpoint.h"
#include "transformer/train/run_directory.h"
#include "transformer/train/trainer.h"

using namespace gradformer;
using test::TempDir;
namespace fs = std::filesystem;

namespace {

// A copy-task run of a few steps: d 16, 2 heads, `layers` layers.
TrainOptions tiny_run(const std::string& out_dir, int64_t layers) {
  TrainOptions o = default_train_options("copy");
  o.d_model = 16, o.d_ff = 32, o.heads = 2, o.layers = layers, o.max_len = 16;
  o.batch_size = 8, o.epochs = 1, o.batches_per_epoch = 2, o.warmup = 4, o.log_every = 1;
  o.quiet = true;
  o.out_dir = out_dir;
  return o;
}

// What a new run's first save does to out_dir/model.safetensors: a new file renamed over it.
void put_new_checkpoint(const std::string& out_dir) {
  test::write_text(out_dir + "/new.safetensors", "the new run's checkpoint");
  fs::rename(out_dir + "/new.safetensors", out_dir + "/model.safetensors");
}

// The names of the files under `dir`, relative to it, sorted.
std::vector<std::string> files_under(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::recursive_directory_iterator(dir))
    if (entry.is_regular_file()) names.push_back(entry.path().lexically_relative(dir).generic_string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("run_directory_for_data: the data file's name, without its extension, made safe for a shell") {
  CHECK(run_directory_for_data("news.tsv") == "runs/news");
  CHECK(run_directory_for_data("data/de-en/news.tsv") == "runs/news");
  CHECK(run_directory_for_data("en-de.train.tsv") == "runs/en-de.train");  // only the last extension goes
  CHECK(run_directory_for_data("corpus_2024") == "runs/corpus_2024");      // no extension: the whole name
  CHECK(run_directory_for_data("my news (v2).tsv") == "runs/my-news-v2");  // a run of odd characters: one '-'
  CHECK(run_directory_for_data("it's;rm -rf.tsv") == "runs/it-s-rm-rf");
  CHECK(run_directory_for_data("données.tsv") == "runs/données");  // UTF-8 letters are kept
  CHECK(run_directory_for_data(".tsv") == "runs/tsv");             // a dot file's name is all stem
  CHECK(run_directory_for_data("(1).tsv") == "runs/1");
  CHECK(run_directory_for_data("().tsv") == "runs/corpus");  // nothing left
  CHECK(run_directory_for_data("") == "runs/corpus");
  CHECK(run_directory_for_data("data/") == "runs/corpus");
}

TEST_CASE("RunFolder: a replaced run's files go, never anything else in the folder") {
  TempDir dir("replace");
  const fs::path out = dir.path() / "run";
  // What the user keeps there: none of it named as gradformer names its files, or not where it puts them.
  const std::vector<std::string> kept = {"notes.txt",
                                         "train.tsv",
                                         "other-metrics.jsonl",
                                         "encoder-layer0-head0.svg",
                                         "attention/mine.svg",
                                         "attention/encoder-layer0-head0.svg.bak",
                                         "attention/encoder-layer-head0.svg",
                                         "mine/loss.svg",
                                         "mine/model.safetensors"};
  fs::create_directories(out / "attention");
  fs::create_directories(out / "mine");
  for (const std::string& name : kept) test::write_text((out / name).string(), "the user's");
  // A run of 2 layers writes its checkpoint, loss.svg, 12 attention maps and here its metrics.
  TrainOptions earlier = tiny_run(out.string(), 2);
  earlier.metrics_path = (out / "metrics.jsonl").string();
  (void)train(earlier);
  REQUIRE(files_under(out).size() == kept.size() + 15);

  CHECK(run_outputs(out.string()).size() == 15);
  {
    RunFolder replacing(out.string(), "");
    put_new_checkpoint(out.string());
    replacing.checkpoint_written({});
  }
  CHECK(files_under(out) == std::vector<std::string>{"attention/encoder-layer-head0.svg",
                                                     "attention/encoder-layer0-head0.svg.bak", "attention/mine.svg",
                                                     "encoder-layer0-head0.svg", "mine/loss.svg",
                                                     "mine/model.safetensors", "model.safetensors", "notes.txt",
                                                     "other-metrics.jsonl", "train.tsv"});
  CHECK(fs::is_directory(out / "attention"));  // it still holds the user's files

  SECTION("a metrics file outside the folder stays, and an attention folder left empty goes") {
    TrainOptions o = tiny_run(dir / "run2", 1);
    o.metrics_path = dir / "metrics.jsonl";
    (void)train(o);
    CHECK(run_outputs(o.out_dir).size() == 8);  // the checkpoint, loss.svg, 6 maps
    RunFolder(o.out_dir, "").checkpoint_written({});
    CHECK(fs::exists(o.metrics_path));
    CHECK_FALSE(fs::exists(dir / "run2/attention"));
    CHECK(fs::is_directory(dir / "run2"));
  }
  SECTION("the checkpoints a run kept (--keep-last) go, files only named like them stay") {
    for (const char* name : {"model-step-40.safetensors", "model-step-7.safetensors", "model-step-x.safetensors",
                             "model-step-7.safetensors.bak"})
      test::write_text((out / name).string(), "a file");
    CHECK(run_outputs(out.string()) == std::vector<std::string>{(out / "model.safetensors").string(),
                                                                (out / "model-step-7.safetensors").string(),
                                                                (out / "model-step-40.safetensors").string()});
    RunFolder(out.string(), "").checkpoint_written({});
    CHECK_FALSE(fs::exists(out / "model-step-7.safetensors"));
    CHECK(fs::exists(out / "model-step-x.safetensors"));
    CHECK(fs::exists(out / "model-step-7.safetensors.bak"));
  }
  SECTION("a folder that does not exist: nothing to remove") {
    CHECK(run_outputs((dir.path() / "none").string()).empty());
    CHECK_FALSE(fs::exists(dir.path() / "none"));
  }
}

TEST_CASE("train: retraining a smaller model into the same folder leaves only its own attention maps") {
  TempDir dir("retrain");
  const std::string out = dir / "run";
  (void)train(tiny_run(out, 2));
  // 2 layers x 2 heads of encoder, decoder-self and decoder-cross maps.
  REQUIRE(files_under(fs::path(out) / "attention").size() == 12);
  test::write_text(dir / "run/notes.txt", "the user's");
  (void)train(tiny_run(out, 1));
  CHECK(files_under(out) ==
        std::vector<std::string>{"attention/decoder-cross-layer0-head0.svg", "attention/decoder-cross-layer0-head1.svg",
                                 "attention/decoder-self-layer0-head0.svg", "attention/decoder-self-layer0-head1.svg",
                                 "attention/encoder-layer0-head0.svg", "attention/encoder-layer0-head1.svg", "loss.svg",
                                 "model.safetensors", "notes.txt"});
}

TEST_CASE("RunFolder: resuming in the run's own folder keeps what the run wrote there") {
  TempDir dir("resume-here");
  const std::string out = dir / "run";
  TrainOptions o = tiny_run(out, 1);
  o.stop_after = 1;
  (void)train(o);
  test::write_text(dir / "run/attention/encoder-layer0-head0.svg", "from before");
  RunFolder(out, out + "/model.safetensors").checkpoint_written({});
  CHECK(fs::exists(dir / "run/attention/encoder-layer0-head0.svg"));
  CHECK(fs::exists(dir / "run/model.safetensors"));
}

TEST_CASE("RunFolder: the run it replaces stays whole until the new one has a checkpoint") {
  TempDir dir("replace-later");
  const std::string out = dir / "run";
  TrainOptions o = tiny_run(out, 1);
  o.keep_last = 1, o.save_every = 1;
  o.metrics_path = dir / "run/metrics.jsonl";
  (void)train(o);
  const std::vector<std::string> before = files_under(out);
  REQUIRE(before == std::vector<std::string>{
                        "attention/decoder-cross-layer0-head0.svg", "attention/decoder-cross-layer0-head1.svg",
                        "attention/decoder-self-layer0-head0.svg", "attention/decoder-self-layer0-head1.svg",
                        "attention/encoder-layer0-head0.svg", "attention/encoder-layer0-head1.svg", "loss.svg",
                        "metrics.jsonl", "model-step-2.safetensors", "model.safetensors"});
  RunFolder replacing(out, "");
  CHECK(files_under(out) == before);  // nothing goes at the start
  // The new run's checkpoint is in place, and it writes its metrics to the same file (as a library
  // caller may; the program refuses that): everything else of the old run goes, its kept
  // checkpoint too, although it was a hard link to the old run's model.safetensors.
  put_new_checkpoint(out);
  replacing.checkpoint_written({dir / "run/metrics.jsonl"});
  CHECK(files_under(out) == std::vector<std::string>{"metrics.jsonl", "model.safetensors"});
  CHECK_FALSE(fs::exists(dir / "run/attention"));
}

TEST_CASE("train: a replacing run that fails before its first checkpoint leaves the old run as it was") {
  TempDir dir("replace-fails");
  const std::string out = dir / "run";
  (void)train(tiny_run(out, 1));
  const std::vector<std::string> before = files_under(out);
  const std::string checkpoint = test::read_bytes(dir / "run/model.safetensors");
  TrainOptions diverging = tiny_run(out, 2);
  diverging.lr = 1e30, diverging.clip = 0, diverging.warmup = 1;
  CHECK_THROWS_AS(train(diverging), NonFiniteError);
  CHECK(files_under(out) == before);
  CHECK(test::read_bytes(dir / "run/model.safetensors") == checkpoint);
}

TEST_CASE("RunFolder: one run per folder, until the holder ends") {
  TempDir dir("lock");
  const std::string out = dir / "run";
  std::optional<RunFolder> first(std::in_place, out, "");
  CHECK(test::error_message<RunFolderBusy>([&] { RunFolder(out, ""); }) ==
        "train: " + out +
            " is in use: another gradformer train is writing there (until it ends, no other run may); wait for it, "
            "or give --out for another folder");
  // train() takes the same lock: a second run, or a resume of the running one, stops before training.
  CHECK_THROWS_AS(train(tiny_run(out, 1)), RunFolderBusy);
  CHECK_FALSE(fs::exists(dir / "run/model.safetensors"));
  RunFolder(dir / "other", "");  // another folder is free
  // A front end can ask first, and say so before anything else it would say about the folder.
  CHECK_THROWS_AS(refuse_busy_folder(out), RunFolderBusy);
  CHECK_NOTHROW(refuse_busy_folder(dir / "other"));
  CHECK_NOTHROW(refuse_busy_folder(dir / "none"));
  first.reset();
  CHECK_NOTHROW(refuse_busy_folder(out));
  CHECK_NOTHROW(RunFolder(out, ""));
}

TEST_CASE("RunFolder: a holder killed with SIGKILL leaves no lock behind") {
  TempDir dir("lock-kill");
  const std::string out = dir / "run";
  int ready[2];
  REQUIRE(::pipe(ready) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // holds the folder, says so, and waits to be killed
    RunFolder held(out, "");
    (void)!::write(ready[1], "1", 1);
    for (;;) ::pause();
  }
  char byte = 0;
  REQUIRE(::read(ready[0], &byte, 1) == 1);
  CHECK_THROWS_AS(RunFolder(out, ""), RunFolderBusy);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  CHECK(WIFSIGNALED(status));
  CHECK_NOTHROW(RunFolder(out, ""));
  ::close(ready[0]), ::close(ready[1]);
}

TEST_CASE("train: the checkpoint and the metrics file hold every setting the run used") {
  TempDir dir("settings");
  TrainOptions o = tiny_run(dir / "run", 1);
  o.metrics_path = dir / "metrics.jsonl";
  o.log_every = 2, o.stop_after = 2, o.lr = 0.75, o.clip = 0.5;
  const TrainReport r = train(o);
  const auto metadata = load_safetensors(r.checkpoint_path).metadata;
  // The output options were missing before: a run could not say where it wrote or how often it logged.
  // Every option is there, the model's sizes too (options.d_model beside config.d_model).
  const std::map<std::string, std::string> expected = {
      {"options.out_dir", o.out_dir}, {"options.metrics_path", o.metrics_path},
      {"options.log_every", "2"},     {"options.stop_after", "2"},
      {"options.lr", "0.75"},         {"options.clip", "0.5"},
      {"options.task", "copy"},       {"options.arch", "encoder-decoder"},
      {"options.d_model", "16"},      {"options.layers", "1"},
      {"options.heads", "2"},         {"options.d_ff", "32"},
      {"options.max_len", "16"},      {"options.steps", "0"},
      {"options.init_path", ""},      {"options.labelled", "16"},
      {"config.heads", "2"},          {"config.layers", "1"},
      {"config.d_model", "16"}};
  for (const auto& [key, value] : expected) {
    INFO(key);
    const std::string stored = key.rfind("options.", 0) == 0 ? "state." + key : key;  // as save_checkpoint keeps them
    REQUIRE(metadata.count(stored) == 1);
    CHECK(metadata.at(stored) == value);
  }
  CHECK(metadata.count("state.options.threads") == 1);
  // How much a run prints does not define it: quiet is no longer kept.
  CHECK(metadata.count("state.options.quiet") == 0);
  // The metrics file's first line: the same entries, as JSON strings.
  std::istringstream lines(test::read_bytes(o.metrics_path));
  std::string first;
  std::getline(lines, first);
  CHECK(first.rfind("{\"settings\":{", 0) == 0);
  for (const auto& [key, value] : expected) {
    INFO(key);
    CHECK(first.find("\"" + key + "\":\"" + value + "\"") != std::string::npos);
  }
  for (const auto& [key, value] : metadata)
    if (key.rfind("state.options.", 0) == 0 || key.rfind("config.", 0) == 0) {
      INFO(key);
      const std::string name = key.rfind("state.", 0) == 0 ? key.substr(6) : key;
      CHECK(first.find("\"" + name + "\":\"" + value + "\"") != std::string::npos);
    }
}

TEST_CASE("train: a decoder-only run writes its settings and its losses to the metrics file") {
  TempDir dir("settings-lm");
  TrainOptions o = default_train_options("toy-lm", Architecture::DecoderOnly);
  o.d_model = 16, o.d_ff = 32, o.heads = 2, o.layers = 1, o.max_len = 40;
  o.batch_size = 8, o.epochs = 1, o.batches_per_epoch = 4, o.warmup = 4, o.log_every = 2, o.quiet = true;
  o.out_dir = dir / "run", o.metrics_path = dir / "metrics.jsonl";
  const TrainReport r = train(o);
  REQUIRE(r.losses.size() == 4);
  std::istringstream in(test::read_bytes(o.metrics_path));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  // The settings, then steps 2 and 4 (the flag was accepted and nothing written before).
  REQUIRE(lines.size() == 3);
  CHECK(lines[0].find("\"options.arch\":\"decoder-only\"") != std::string::npos);
  CHECK(lines[0].find("\"config.layers\":\"1\"") != std::string::npos);
  CHECK(lines[1].rfind("{\"step\": 2,", 0) == 0);
  CHECK(lines[2].rfind("{\"step\": 4,", 0) == 0);
  CHECK(lines[2].find("\"loss\": ") != std::string::npos);
}

TEST_CASE("train: an output folder whose name is not UTF-8 is refused before training, not at the save") {
  TempDir dir("not-utf8");
  TrainOptions o = tiny_run(dir / "run\xff", 1);
  CHECK_THROWS_MATCHES(train(o), TrainOptionError,
                       Catch::Matchers::Message("train: out_dir must be UTF-8 text (it is kept in the checkpoint), "
                                                "got byte 255 at " +
                                                std::to_string(o.out_dir.size() - 1)));
  CHECK_FALSE(fs::exists(o.out_dir));
  TrainOptions e = default_train_options("mlm", Architecture::EncoderOnly);
  e.out_dir = o.out_dir;
  CHECK_THROWS_AS(train(e), TrainOptionError);
  CHECK_FALSE(fs::exists(o.out_dir));
}

TEST_CASE("train: a resume goes on keeping the checkpoints the run kept, unless told another number") {
  TempDir dir("keep-resume");
  const std::string out = dir / "run";
  TrainOptions o = tiny_run(out, 1);
  o.epochs = 3, o.save_every = 1, o.keep_last = 2, o.stop_after = 3;  // 6 steps, stopped after 3
  (void)train(o);
  REQUIRE(kept_checkpoints(out) ==
          std::vector<std::string>{out + "/model-step-2.safetensors", out + "/model-step-3.safetensors"});
  TrainOptions resume = tiny_run(out, 1);  // what the caller asks: keep_last 0, its default
  resume.stop_after = 5;
  (void)train(resume, out + "/model.safetensors");
  CHECK(kept_checkpoints(out) ==
        std::vector<std::string>{out + "/model-step-4.safetensors", out + "/model-step-5.safetensors"});
  resume.stop_after = 0, resume.resume_keep_last = 3;
  (void)train(resume, out + "/model.safetensors");
  CHECK(kept_checkpoints(out) == std::vector<std::string>{out + "/model-step-4.safetensors",
                                                          out + "/model-step-5.safetensors",
                                                          out + "/model-step-6.safetensors"});
}

TEST_CASE("keep_checkpoint: the kept copy appears whole or not at all, and keeps its step's bytes") {
  TempDir dir("keep");
  const std::string out = dir / "run";
  TrainOptions o = tiny_run(out, 1);
  o.stop_after = 1;
  (void)train(o);
  const std::string checkpoint = out + "/model.safetensors", step1 = test::read_bytes(checkpoint);
  keep_checkpoint(checkpoint, out, 1, 2);
  CHECK(test::read_bytes(out + "/model-step-1.safetensors") == step1);
  // The next save renames a new file over the checkpoint: the kept copy still holds step 1.
  TrainOptions resume = tiny_run(out, 1);
  resume.stop_after = 2;
  (void)train(resume, checkpoint);
  REQUIRE(test::read_bytes(checkpoint) != step1);
  CHECK(test::read_bytes(out + "/model-step-1.safetensors") == step1);
  // A copy that cannot be put in place (here a folder holds its name) is an error naming it, and
  // leaves no partial file, under its name or a temporary one.
  fs::create_directories(out + "/model-step-2.safetensors");
  test::write_text(out + "/model-step-2.safetensors/x", "the user's");
  CHECK(test::error_message<CheckpointError>([&] {
          keep_checkpoint(checkpoint, out, 2, 2);
        }).find(out + "/model-step-2.safetensors: cannot keep a copy of " + checkpoint) == 0);
  CHECK(files_under(out + "/model-step-2.safetensors") == std::vector<std::string>{"x"});
  for (const auto& entry : fs::directory_iterator(out))
    CHECK(entry.path().filename().string().find(".tmp") == std::string::npos);
}
