// A run's input files by identity (transformer/train/run_inputs.h): recorded with their absolute
// paths and fingerprints; on resume read from there, refused when their bytes changed, replaced
// when the resumer names a file.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>

#include "catch.h"
#include "tensor/support/files.h"
#include "training_helpers.h"
#include "transformer/train/run_inputs.h"

using namespace gradformer;

TEST_CASE("run inputs: recorded by absolute path and fingerprint, read from there on resume, refused if changed") {
  test::TempDir dir("run-inputs");
  const std::string text = dir / "book.txt";
  std::ofstream(text, std::ios::binary) << "the cat sat on the mat.\n";
  TrainOptions o = default_train_options("text", Architecture::DecoderOnly);
  o.text_path = text;
  const std::map<std::string, std::string> state = input_identities(o);
  REQUIRE(state.size() == 2);  // no data, valid or test file
  CHECK(state.at("input.text_path") == std::filesystem::absolute(text).lexically_normal().string());
  CHECK(state.at("input.text_path.fnv1a64") == file_fingerprint(text));

  // The checkpoint's options name the text as the run was given it (here: relative to elsewhere).
  TrainOptions resumed = o;
  resumed.text_path = "book.txt";
  const TrainOptions nothing_asked = default_train_options("text", Architecture::DecoderOnly);
  resume_inputs(resumed, nothing_asked, state, "ck.safetensors");
  CHECK(resumed.text_path == state.at("input.text_path"));

  // The same length, other bytes: refused, naming the file and the checkpoint.
  std::ofstream(text, std::ios::binary) << "the dog sat on the rug.\n";
  resumed.text_path = "book.txt";
  CHECK_THROWS_MSG(resume_inputs(resumed, nothing_asked, state, "ck.safetensors"), TrainOptionError,
                   "train: text_path " + state.at("input.text_path") +
                       " is not the file the run trained on: its bytes changed since ck.safetensors was saved");
  // Named by the resumer: taken as it is, nothing compared.
  TrainOptions asked = nothing_asked;
  asked.text_path = text;
  resume_inputs(resumed, asked, state, "ck.safetensors");
  CHECK(resumed.text_path == text);
  // A file the run never read, and a recorded file that is gone.
  asked = nothing_asked, asked.data_path = text;
  CHECK_THROWS_MSG(resume_inputs(resumed, asked, state, "ck.safetensors"), TrainOptionError,
                   "train: data_path names " + text + ", but the resumed run read no such file");
  // The recorded file gone (the project moved): the options' path, if its bytes are the run's.
  std::filesystem::remove(text);
  const std::string moved = dir / "moved.txt";
  std::ofstream(moved, std::ios::binary) << "the cat sat on the mat.\n";
  resumed.text_path = moved;
  resume_inputs(resumed, nothing_asked, state, "ck.safetensors");
  CHECK(resumed.text_path == moved);
  std::ofstream(moved, std::ios::binary) << "the dog sat on the rug.\n";
  resumed.text_path = moved;
  CHECK_THROWS_MSG(resume_inputs(resumed, nothing_asked, state, "ck.safetensors"), TrainOptionError,
                   "train: text_path " + state.at("input.text_path") +
                       ", the file the run trained on, is not there now: name its new place explicitly");
  // A pipe or a FIFO is read once: nothing to record.
  const std::string fifo = dir / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  TrainOptions piped = o;
  piped.text_path = fifo;
  CHECK(input_identities(piped).empty());
  // A checkpoint saved before inputs were recorded: its options' path, as it was.
  resumed.text_path = "book.txt";
  resume_inputs(resumed, nothing_asked, {}, "ck.safetensors");
  CHECK(resumed.text_path == "book.txt");
}
