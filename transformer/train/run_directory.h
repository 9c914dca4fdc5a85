// Where a run writes and what it leaves there. A run is named after its data (runs/news for
// news.tsv), and a run that replaces another in the same folder first removes the files the other
// wrote (its checkpoint, loss curve, attention maps and metrics) and nothing else, so no stale
// attention map of a bigger model stays beside the new ones.
#pragma once

#include <string>
#include <vector>

namespace gradformer {

/// "runs/<name>" for a training file: the file's name without its last extension (news.tsv ->
/// news, en-de.train.tsv -> en-de.train), each character other than an ASCII letter, a digit, '.',
/// '-', '_' or a byte of a UTF-8 character replaced by '-', runs of '-' made one, and '-' and '.'
/// trimmed from both ends (my news (v2).tsv -> my-news-v2, .tsv -> tsv); "runs/corpus" if nothing is left.
std::string run_directory_for_data(const std::string& data_path);

/// The file a run saves its model to: out_dir/model.safetensors.
std::string run_checkpoint_path(const std::string& out_dir);

/// Removes from out_dir what a gradformer run writes there and nothing else: model.safetensors,
/// the checkpoints it kept (model-step-N.safetensors, average.h), loss.svg, the attention maps in attention/ (named as
/// write_attention_maps names them; the folder too if that leaves it empty), and the metrics file the checkpoint's
/// options.metrics_path names if it lies inside out_dir. Returns the paths removed. A missing out_dir removes nothing;
/// a DataError naming the path for a file that cannot be removed.
std::vector<std::string> remove_run_outputs(const std::string& out_dir);

/// Makes out_dir ready for a run: removes the earlier run's outputs there (remove_run_outputs),
/// unless this run continues that very checkpoint (resume_path is out_dir/model.safetensors), and
/// creates the folder. A DataError naming the folder if it cannot be created.
void prepare_run_directory(const std::string& out_dir, const std::string& resume_path);

}  // namespace gradformer
