#include "transformer/cli/train_output.h"

#include <filesystem>
#include <iostream>

#include "transformer/cli/flags.h"
#include "transformer/train/run_directory.h"

namespace gradformer {

void refuse_to_replace_run(const std::string& out_dir, const std::string& resume, bool force) {
  refuse_busy_folder(out_dir);  // a run training there: say that, not what --force or --resume would do
  const std::string checkpoint = run_checkpoint_path(out_dir);
  std::error_code error;
  if (force || !std::filesystem::exists(checkpoint, error)) return;
  if (!resume.empty() && same_file(resume, checkpoint)) return;  // the test RunFolder makes
  throw UsageError(message(
      "train: ", checkpoint, " already holds a trained model; give --force to replace that run ",
      "(its checkpoint, loss.svg, attention maps and metrics file go when the new run has saved; nothing else in ",
      out_dir, "), or --resume ", shell_word(checkpoint), " to continue it (or --out for another folder)"));
}

std::string shell_word(const std::string& text) {
  const bool plain = !text.empty() && text.find_first_not_of(
                                          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                          "0123456789._-+/=:,@%") == std::string::npos;
  if (plain) return text;
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string how_to_use(const TrainReport& report) {
  const std::string path = shell_word(report.checkpoint_path);
  if (report.arch == Architecture::EncoderOnly)
    return report.task == "mlm" ? "fine-tune it: gradformer train --arch encoder-only --task classify --init " + path +
                                      (report.own_data ? " --data labelled.tsv" : "")
                                : "classify with it: gradformer classify --checkpoint " + path + " < sentences.txt";
  // A decoder-only model translates by continuing "source <sep>", greedily as in training.
  if (report.arch == Architecture::DecoderOnly) {
    if (report.task == "toy-lm")
      return "generate with it: gradformer generate --checkpoint " + path + " --prompt 'le chat'";
    if (report.task == "text")
      return "generate with it: gradformer generate --checkpoint " + path + " --prompt 'The ' --max-tokens 200";
    if (report.task == "sft")
      return "ask it: gradformer generate --checkpoint " + path + " --prompt 'your question' --temperature 0";
    if (report.task == "lm")
      return "generate with it: gradformer generate --checkpoint " + path + " --prompt 'your first words'";
    return "translate with it: gradformer generate --checkpoint " + path + " --prompt '" +
           (report.task == "toy-translation" ? "le chat noir ." : "a source sentence") + " <sep>' --temperature 0";
  }
  return "translate with it: gradformer translate --checkpoint " + path + " < sources.txt";
}

void print_trained(const TrainReport& report, bool quiet) {
  if (quiet)
    for (const std::string& line : report.summary) std::cout << line << "\n";
  std::cout << how_to_use(report) << "\n" << std::flush;
}

}  // namespace gradformer
