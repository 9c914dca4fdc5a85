// Where a run writes and what it leaves there. A run is named after its data (runs/news for
// news.tsv); one run at a time writes a folder; and a run that replaces another in the same folder
// removes the files the other wrote (its checkpoint, loss curve, attention maps and metrics) and
// nothing else, so no stale attention map of a bigger model stays beside the new ones — once it has
// a checkpoint of its own to put in their place.
#pragma once

#include <string>
#include <vector>

#include "tensor/support/error.h"
#include "tensor/support/files.h"  // same_file

namespace gradformer {

/// "runs/<name>" for a training file: the file's name without its last extension (news.tsv ->
/// news, en-de.train.tsv -> en-de.train), each character other than an ASCII letter, a digit, '.',
/// '-', '_' or a byte of a UTF-8 character replaced by '-', runs of '-' made one, and '-' and '.'
/// trimmed from both ends (my news (v2).tsv -> my-news-v2, .tsv -> tsv); "runs/corpus" if nothing is left.
std::string run_directory_for_data(const std::string& data_path);

/// The file a run saves its model to: out_dir/model.safetensors.
std::string run_checkpoint_path(const std::string& out_dir);

/// What a gradformer run wrote in out_dir and is there now: model.safetensors, the checkpoints it
/// kept (model-step-N.safetensors, average.h), loss.svg, the attention maps in attention/ (named as
/// write_attention_maps names them), and the metrics file the checkpoint's options.metrics_path
/// names if it lies inside out_dir. Nothing else, whatever its name. A missing out_dir: none.
std::vector<std::string> run_outputs(const std::string& out_dir);

/// Another run holds the folder: two runs writing one folder would each overwrite the other's files.
struct RunFolderBusy : Error {
  using Error::Error;
};

/// RunFolderBusy if a RunFolder holds out_dir now (nothing if it is free or does not exist): for a
/// front end to say so before anything else it would say about the folder. The lock itself is taken
/// by the RunFolder of the run.
void refuse_busy_folder(const std::string& out_dir);

/// A run's hold on its output folder, from its start to its end.
///  - One run per folder: constructing a second RunFolder on the same folder while the first lives,
///    in this process or another, is a RunFolderBusy. The lock is the operating system's (flock on the
///    folder itself), so it leaves no file behind and goes with its process however that ends, kill -9
///    included. (On a file system without locks, nothing is enforced.)
///  - Nothing lost: the run it replaces (one already in the folder, that this one does not continue
///    from resume_path) stays whole until this run has a checkpoint to put in its place. Then, once
///    checkpoint_written() says so, its other outputs go (run_outputs, listed when the run began), all
///    but `own`, files this run writes too (its metrics file). A run that fails earlier leaves it as
///    it was.
class RunFolder {
 public:
  /// Creates out_dir. DataError naming it if it cannot be created.
  RunFolder(const std::string& out_dir, const std::string& resume_path);
  ~RunFolder();
  RunFolder(const RunFolder&) = delete;
  RunFolder& operator=(const RunFolder&) = delete;

  /// This run's checkpoint is in place: the outputs of the run it replaced go (once).
  void checkpoint_written(const std::vector<std::string>& own);
  /// Whether `path` is one of the replaced run's outputs (until checkpoint_written).
  bool replaces(const std::string& path) const;

 private:
  std::string out_dir_;
  std::vector<std::string> replaced_;  // the replaced run's outputs, until checkpoint_written
  int lock_ = -1;                      // the folder, open and locked
};

}  // namespace gradformer
