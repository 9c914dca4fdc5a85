// What `gradformer train` says about the folder it writes and the model it leaves there: it refuses
// to replace another run's checkpoint unless asked to, and ends by showing how to use the model.
#pragma once

#include <string>
#include <vector>

#include "transformer/train/trainer.h"

namespace gradformer {

/// A UsageError if out_dir already holds a run's checkpoint and neither `force` is given nor
/// `resume` is that very checkpoint: the message names what exists and the two ways on (--force
/// replaces the run, --resume continues it).
void refuse_to_replace_run(const std::string& out_dir, const std::string& resume, bool force);

/// `text` as one word for a POSIX shell: as it is if it has nothing the shell would act on, else in
/// single quotes ('it'\''s').
std::string shell_word(const std::string& text);

/// The command that uses the model a run trained, by its architecture and task: gradformer
/// translate / generate / classify --checkpoint PATH ..., a decoder-only translator given
/// "source <sep>" to continue, or for a pre-trained encoder-only model the fine-tuning command.
std::string how_to_use(const TrainReport& report);

/// The end of a training command: the run's summary lines if the progress was hidden (--quiet; the
/// trainer printed them otherwise), then how_to_use(report).
void print_trained(const TrainReport& report, bool quiet);

}  // namespace gradformer
