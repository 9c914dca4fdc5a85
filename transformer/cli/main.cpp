// gradformer: train, use and inspect Transformers from the command line.
//   gradformer train --task copy          the Annotated Transformer's copy task, in seconds
//   gradformer train --task toy-translation
//   gradformer train --data train.tsv --valid valid.tsv
//   gradformer translate --checkpoint runs/toy-translation/model.safetensors < sources.txt
//   gradformer score --checkpoint model.safetensors --data pairs.tsv
//   gradformer gradcheck                   every op's and layer's gradient check, as a table
//   gradformer params --preset base        parameter count and FLOPs per token
//   gradformer generate --checkpoint runs/toy-lm/model.safetensors --prompt 'le chat' 
//   gradformer train --arch encoder-only --task mlm     BERT-style pre-training (then --task classify)
//   gradformer classify --checkpoint runs/encoder-only-classify/model.safetensors < sentences.txt
// A mistake on the command line is one line on stderr and exit status 2; any other error
// (a bad file, a bad checkpoint) one line and status 1. Never a stack trace.
#include <cstring>
#include <iostream>
#include <string>

#include "transformer/cli/commands.h"
#include "transformer/cli/flags.h"

namespace {

constexpr const char* kUsage =
    "usage: gradformer <command> [flags]\n"
    "\n"
    "commands:\n"
    "  train       train a Transformer (--arch encoder-decoder | decoder-only | encoder-only, --task ...)\n"
    "  translate   translate sentences from stdin with a trained checkpoint\n"
    "  score       log-probability of each target given its source under a checkpoint\n"
    "  gradcheck   run the gradient check of every op and layer and print a table\n"
    "  params      parameter count and FLOPs per token of a model configuration\n"
    "  generate    continue a prompt with a decoder-only checkpoint (sampling with temperature, top-k, top-p)\n"
    "  classify    label sentences from stdin with an encoder-only classifier checkpoint\n"
    "\n"
    "gradformer <command> --help describes each command's flags.\n";

}  // namespace

int main(int argc, char** argv) {
  using namespace gradformer;
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h") || !std::strcmp(argv[1], "help")) {
    std::cout << kUsage;
    return argc < 2 ? 2 : 0;
  }
  const std::string command = argv[1];
  try {
    if (command == "train") return train_command(argc, argv);
    if (command == "translate") return translate_command(argc, argv);
    if (command == "score") return score_command(argc, argv);
    if (command == "gradcheck") return gradcheck_command(argc, argv);
    if (command == "params") return params_command(argc, argv);
    if (command == "generate") return generate_command(argc, argv);
    if (command == "classify") return classify_command(argc, argv);
    std::cerr << "gradformer: unknown command '" << command << "'\n" << kUsage;
    return 2;
  } catch (const UsageError& e) {
    std::cerr << "gradformer " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "gradformer " << command << ": error: " << e.what() << "\n";
    return 1;
  }
}
