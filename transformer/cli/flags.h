// Command-line flags for the gradformer program: each subcommand declares its flags with a default
// and a help line; parse() fills them from argv and rejects anything it does not know.
//
//   Flags flags("train", "Train a Transformer.");
//   flags.add("--d-model", "512", "model width");
//   flags.parse(argc, argv);             // UsageError for --d-modle, --d-model abc, ...
//   int64_t d = flags.integer("--d-model");
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "tensor/support/error.h"

namespace gradformer {

/// A command line the user got wrong: the program prints it on one line and exits with status 2.
struct UsageError : Error {
  using Error::Error;
};

class Flags {
 public:
  Flags(std::string command, std::string summary);

  /// A flag taking a value. An empty default means "not set" (see has()).
  void add(const std::string& name, const std::string& default_value, const std::string& help);
  /// A flag whose value may be left out (--profile, or --profile FILE): given alone (last, or before
  /// another flag), it is given with an empty value.
  void add_optional(const std::string& name, const std::string& help);
  /// A flag without a value: false unless given.
  void add_switch(const std::string& name, const std::string& help);
  /// The one argument given without a flag (gradformer trace "le chat ."), read with text(name);
  /// `name` is how --help shows it.
  void add_positional(const std::string& name, const std::string& help);
  /// Any number of arguments given without a flag (gradformer average a.safetensors b.safetensors),
  /// read with positionals(); `name` is how --help shows them.
  void add_positionals(const std::string& name, const std::string& help);
  /// The arguments given without a flag, in order.
  const std::vector<std::string>& positionals() const { return positionals_; }

  /// Reads argv[first..argc). Returns false if --help was given anywhere (asks_for_help), the help
  /// text then in help(): `import --gpt2 --help` is help, not a file named --help.
  bool parse(int argc, char** argv, int first = 2);
  std::string help() const;
  /// A flag's default as declared: "" for none, "off" for a switch.
  std::string default_text(const std::string& name) const;
  const std::vector<std::string>& names() const { return order_; }  // as declared

  bool has(const std::string& name) const;  // given, or a non-empty default
  /// UsageError "COMMAND: NAME is required" unless has(name).
  void require(const std::string& name) const;
  bool given(const std::string& name) const;
  std::vector<std::string> given_names() const;  // the flags given on the command line, in declaration order
  std::string text(const std::string& name) const;
  int64_t integer(const std::string& name) const;  // UsageError if not an integer
  /// integer(name), and a UsageError unless min <= it <= max: "COMMAND: NAME must be from MIN to
  /// MAX<why>, got V" ("at least MIN<why>" without a max). Every bounded integer flag of every
  /// command goes through here, so each is refused alike; `why` says where a bound comes from
  /// (" (the target vocabulary's size)").
  int64_t integer_in(const std::string& name, int64_t min, int64_t max = std::numeric_limits<int64_t>::max(),
                     const std::string& why = "") const;
  double number(const std::string& name) const;  // UsageError if not a number
  bool on(const std::string& name) const;        // a switch
  /// One of `choices`, or a UsageError listing them.
  std::string choice(const std::string& name, const std::vector<std::string>& choices) const;

 private:
  struct Flag {
    std::string value, help, default_value;
    bool is_switch = false, given = false, value_optional = false;
  };
  const Flag& find(const std::string& name) const;

  std::string command_, summary_;
  std::map<std::string, Flag> flags_;
  std::vector<std::string> order_;
  std::string positional_;  // the positional argument's name, or empty: none taken
  bool many_positionals_ = false;
  std::vector<std::string> positionals_;
};

/// Whether argv[first..argc) holds --help or -h as an argument of its own, wherever it stands (a
/// value that must be --help can be given as --flag=--help).
bool asks_for_help(int argc, char** argv, int first = 2);

/// The defaults that differ between several declarations of the same flags, one column each (one
/// per task, titled by it): a row for each flag of the first declaration, in its order, whose
/// default is not the same in every column, leaving out the flags in `except`.
///   defaults_table({{"copy", copy_flags}, {"toy-translation", toy_flags}}, {"--task"})
///     ->  "                 copy  toy-translation\n  --heads          8     4\n..."
std::string defaults_table(const std::vector<std::pair<std::string, Flags>>& columns,
                           const std::vector<std::string>& except = {});

/// A UsageError when the file `flag` names (`out`) is one of the command's inputs (`inputs`, by
/// identity: ./a and a, a link and its target), which writing it would replace:
///   "trace: --html m.safetensors is m.safetensors, the checkpoint to trace: writing the page would
///    replace it; write it elsewhere"
/// `what` names the inputs ("the checkpoint to trace"), `written` what would be written ("the page").
void refuse_output_over_input(const char* command, const char* flag, const std::string& out,
                              const std::vector<std::string>& inputs, const std::string& what,
                              const std::string& written);

/// A UsageError, before any work, when the file `flag` names may not be written: it exists and is
/// not a regular file (a link, a directory, a device, a FIFO), or it exists and --force was not
/// given (check_output_path, tensor/support/files.h):
///   "learn-bpe: --out t.json exists; give --force to replace it"
void check_output_flag(const char* command, const char* flag, const std::string& out, bool force);

}  // namespace gradformer
