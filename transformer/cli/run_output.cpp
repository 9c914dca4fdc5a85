#include "transformer/cli/run_output.h"

#include <filesystem>
#include <iostream>

#include "nn/safetensors.h"
#include "transformer/cli/flags.h"
#include "transformer/train/run_directory.h"

namespace gradformer {

void refuse_to_replace_run(const std::string& out_dir, const std::string& resume, bool force) {
  const std::string checkpoint = run_checkpoint_path(out_dir);
  std::error_code error;
  if (force || !std::filesystem::exists(checkpoint, error)) return;
  if (!resume.empty() && std::filesystem::equivalent(resume, checkpoint, error)) return;
  throw UsageError(message("train: ", checkpoint, " already holds a trained model; give --force to replace that run ",
                           "(its checkpoint, loss.svg, attention maps and metrics file go; nothing else in ", out_dir,
                           "), or --resume ", shell_word(checkpoint), " to continue it (or --out for another folder)"));
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

std::string how_to_use(const std::string& checkpoint_path) {
  const auto metadata = load_safetensors(checkpoint_path).metadata;
  auto entry = [&](const std::string& key) {
    const auto it = metadata.find(key);
    return it == metadata.end() ? std::string() : it->second;
  };
  const std::string arch = entry("config.arch"), task = entry("state.options.task"), path = shell_word(checkpoint_path);
  if (arch == "encoder-only")
    return task == "mlm" ? "fine-tune it: gradformer train --arch encoder-only --task classify --init " + path
                         : "classify with it: gradformer classify --checkpoint " + path + " < sentences.txt";
  // A decoder-only model translates by continuing "source <sep>" (lm_trainer.h), greedily as in training.
  if (arch == "decoder-only")
    return task == "toy-lm" ? "generate with it: gradformer generate --checkpoint " + path + " --prompt 'le chat'"
                            : "translate with it: gradformer generate --checkpoint " + path +
                                  " --prompt 'le chat noir . <sep>' --temperature 0";
  return "translate with it: gradformer translate --checkpoint " + path + " < sources.txt";
}

void print_trained(const std::vector<std::string>& summary, bool quiet, const std::string& checkpoint_path) {
  if (quiet)
    for (const std::string& line : summary) std::cout << line << "\n";
  std::cout << how_to_use(checkpoint_path) << "\n" << std::flush;
}

}  // namespace gradformer
