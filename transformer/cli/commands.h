// The subcommands of the gradformer program. Each parses its own flags (argv[2..]) and returns
// the process exit status; errors propagate as gradformer::Error and main() prints them.
#pragma once

#include <string>

namespace gradformer {

class Flags;

/// The --threads flag every command takes: 0 leaves the default, a positive count up to
/// max_threads() sets the pool's size, anything else is a UsageError naming the command.
void apply_threads(const Flags& f);

/// train's --profile [X], the same for every architecture: declared, and read as the trace's path
/// ("" when not given, OUT/profile.json when given without a file).
void declare_profile_flag(Flags& f);
std::string profile_path(const Flags& f, const std::string& out_dir);

int train_command(int argc, char** argv);
int translate_command(int argc, char** argv);
int score_command(int argc, char** argv);
int gradcheck_command(int argc, char** argv);
int params_command(int argc, char** argv);
int trace_command(int argc, char** argv);
int generate_command(int argc, char** argv);
int classify_command(int argc, char** argv);
int import_command(int argc, char** argv);
int average_command(int argc, char** argv);
/// params --preset bert-base.
int bert_base_params();

}  // namespace gradformer
