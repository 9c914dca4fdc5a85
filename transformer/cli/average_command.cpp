// gradformer average: one checkpoint whose parameters are the mean of several checkpoints' (the
// paper's last-5 / last-20 averaging; transformer/store/average.h).
#include <iostream>

#include "tensor/support/files.h"
#include "transformer/cli/commands.h"
#include "transformer/cli/flags.h"
#include "transformer/store/average.h"

namespace gradformer {

int average_command(int argc, char** argv) {
  Flags f("average",
          "Average the parameters of checkpoints of one run (the paper averaged the last 5 of a base model's run,\n"
          "the last 20 of a big one) and write them as a checkpoint for translate, score and trace. The output\n"
          "holds the averaged parameters, the configuration and the vocabularies; no optimizer or training\n"
          "state, so it cannot be resumed. Checkpoints whose configuration, vocabularies or architecture differ\n"
          "are refused.");
  f.add_positionals("CHECKPOINT...", "the checkpoints to average (or --run and --last)");
  f.add("--run", "", "a run's output directory: average its kept checkpoints (train --keep-last K)");
  f.add("--last", "0", "with --run: how many of the newest kept checkpoints (0: all)");
  f.add("--out", "", "where to write the average (required)");
  f.add_switch("--force", "replace --out if it exists");
  if (!f.parse(argc, argv)) {
    std::cout << f.help();
    return 0;
  }
  f.require("--out");
  const int64_t last = f.integer("--last");
  if (last < 0) throw UsageError(message("average: --last must be at least 0, got ", last));
  std::vector<std::string> paths = f.positionals();
  if (f.has("--run")) {
    if (!paths.empty()) throw UsageError("average: give checkpoints or --run, not both");
    paths = kept_checkpoints(f.text("--run"));
    if (paths.empty())
      throw UsageError(message("average: no model-step-N.safetensors in ", f.text("--run"),
                               " (train with --save-every N --keep-last K keeps them)"));
    if (last > 0 && static_cast<size_t>(last) < paths.size())
      paths.erase(paths.begin(), paths.end() - static_cast<std::ptrdiff_t>(last));
  } else if (f.given("--last")) {
    throw UsageError("average: --last is for --run");
  }
  if (paths.empty()) throw UsageError("average: give the checkpoints to average, or --run DIR");
  if (const std::string input = input_written_over(paths, f.text("--out")); !input.empty())
    throw UsageError(message("average: --out ", f.text("--out"), " is ", input,
                             ", one of the checkpoints to average: the average (no optimizer or training state) "
                             "would replace it; write it elsewhere"));
  check_output_flag("average", "--out", f.text("--out"), f.on("--force"));
  average_checkpoints(paths, f.text("--out"));
  std::cout << "averaged " << counted(static_cast<long long>(paths.size()), "checkpoint") << " into " << f.text("--out")
            << "\n";
  return 0;
}

}  // namespace gradformer
