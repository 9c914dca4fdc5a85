// The files a run trains on, by identity: each recorded in its checkpoints with its absolute path
// and a fingerprint of its bytes, so a resumed run reads the same files from any folder, and refuses
// a file that changed (another text of the same length would otherwise train on silently).
#pragma once

#include <map>
#include <string>

#include "transformer/train/options.h"

namespace gradformer {

/// For each input file option `o` names (data_path, valid_path, test_path, text_path) that is a
/// regular file (a pipe is read once: nothing to find again): state entries "input.<option>", the
/// file's absolute path, and "input.<option>.fnv1a64", its bytes' fingerprint (file_fingerprint).
/// Saved with every checkpoint of the run. TrainOptionError for an absolute path that is not UTF-8
/// (a checkpoint could not record it).
std::map<std::string, std::string> input_identities(const TrainOptions& o);

/// A resumed run's input files, in `o` (the checkpoint's options): each becomes the absolute path its
/// checkpoint recorded; if no file is there (the project moved), the options' own path when the file
/// there has the recorded bytes; or the one `requested` names if the resumer gave one (another
/// chosen on purpose: then nothing is compared). A checkpoint written before inputs were
/// recorded keeps its options' paths. TrainOptionError naming the option for a requested file the run
/// never read (a data_path for a run of a text), and for a recorded file that cannot be read or whose
/// bytes are no longer those the run trained on (naming the file and the checkpoint).
void resume_inputs(TrainOptions& o, const TrainOptions& requested, const std::map<std::string, std::string>& state,
                   const std::string& checkpoint);

}  // namespace gradformer
