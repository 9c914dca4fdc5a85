// The subcommands of the gradformer program. Each parses its own flags (argv[2..]) and returns
// the process exit status; errors propagate as gradformer::Error and main() prints them.
#pragma once

namespace gradformer {

int train_command(int argc, char** argv);
int translate_command(int argc, char** argv);
int score_command(int argc, char** argv);
int gradcheck_command(int argc, char** argv);
int params_command(int argc, char** argv);

}  // namespace gradformer
