// The subcommands of the gradformer program. Each parses its own flags (argv[2..]) and returns
// the process exit status; errors propagate as gradformer::Error and main() prints them.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace gradformer {

class Flags;

/// The --threads flag every command takes: 0 leaves the default, a positive count up to
/// max_threads() sets the pool's size, anything else is a UsageError naming the command.
void apply_threads(const Flags& f);

/// train's --profile [X], the same for every architecture: declared, and read as the trace's path
/// ("" when not given, OUT/profile.json when given without a file).
void declare_profile_flag(Flags& f);
std::string profile_path(const Flags& f, const std::string& out_dir);

/// generate's and chat's sampling flags: --max-tokens (its default and help given), --temperature (its
/// default given), --top-k, --top-p and --seed (its help given); then read back, each checked, a
/// UsageError naming `command` and the flag.
void declare_sampling_flags(Flags& f, const char* max_tokens, const char* max_tokens_help, const char* temperature,
                            const char* seed_help);
struct SamplingOptions;
SamplingOptions sampling_options(const Flags& f, const char* command);
uint64_t sampling_seed(const Flags& f);

/// What translate and classify share: each line of standard input (read by LineReader,
/// transformer/data/line_reader.h) split into words and answered on one line of standard output, so
/// output line N is always input line N's: a blank line gives an empty line, and so does a line the
/// answer refuses with a DataError (not UTF-8, longer than the model takes), after one line on stderr
/// naming it ("gradformer COMMAND: line N not VERB (an empty line is printed): ..."). A line over the
/// reader's limit or a failed read (ReadError) stops the command. Returns the lines not answered.
using LineAnswer = std::function<std::string(const std::vector<std::string>& words)>;
int64_t answer_each_line(const char* command, const char* verb, const LineAnswer& answer);
/// After answer_each_line: "gradformer COMMAND: N lines could not be VERB" and status 1 when some
/// were not, status 0 otherwise.
int unanswered_status(const char* command, const char* verb, int64_t unanswered);

/// trace's model when it is given none and no toy-translation run exists: a small toy-translation
/// model (its recipe at a quarter of the width) trained once by train(), as `gradformer train` trains,
/// into runs/trace-model, and reused after. Waits while another process trains it there. Its path,
/// and the path before it is trained; `instead_of` is the model whose absence the message names.
std::string first_use_model(int64_t steps, const std::string& instead_of);
std::string first_use_model_path();

int train_command(int argc, char** argv);
int translate_command(int argc, char** argv);
int score_command(int argc, char** argv);
int gradcheck_command(int argc, char** argv);
int params_command(int argc, char** argv);
int trace_command(int argc, char** argv);
int generate_command(int argc, char** argv);
int chat_command(int argc, char** argv);
int classify_command(int argc, char** argv);
int import_command(int argc, char** argv);
int import_gpt2_command(int argc, char** argv);  // import --gpt2, reached through import_command
int import_hub_command(int argc, char** argv);   // import --hf, reached through import_command
int average_command(int argc, char** argv);
int merge_lora_command(int argc, char** argv);
int tokenize_command(int argc, char** argv);
int learn_bpe_command(int argc, char** argv);
/// params --preset bert-base.
int bert_base_params();

}  // namespace gradformer
