// What `gradformer train` says about the folder it writes and the model it leaves there: it refuses
// to replace another run's checkpoint unless asked to, and ends by showing how to use the model.
#pragma once

#include <string>
#include <vector>

namespace gradformer {

/// A UsageError if out_dir already holds a run's checkpoint and neither `force` is given nor
/// `resume` is that very checkpoint: the message names what exists and the two ways on (--force
/// replaces the run, --resume continues it).
void refuse_to_replace_run(const std::string& out_dir, const std::string& resume, bool force);

/// `text` as one word for a POSIX shell: as it is if it has nothing the shell would act on, else in
/// single quotes ('it'\''s').
std::string shell_word(const std::string& text);

/// The command that uses the checkpoint just trained, by what it holds (config.arch and
/// state.options.task in its metadata): gradformer translate / generate / classify --checkpoint PATH ...,
/// a decoder-only translator given "source <sep>" to continue, or for a pre-trained encoder-only
/// model the fine-tuning command.
std::string how_to_use(const std::string& checkpoint_path);

/// The end of a training command: the run's summary lines if the progress was hidden (--quiet; the
/// trainer printed them otherwise), then how_to_use(checkpoint_path).
void print_trained(const std::vector<std::string>& summary, bool quiet, const std::string& checkpoint_path);

}  // namespace gradformer
