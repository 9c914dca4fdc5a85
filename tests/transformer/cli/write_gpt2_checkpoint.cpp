// write_gpt2_checkpoint CHECKPOINT [--always-end]: a tiny untrained model of GPT-2's architecture with a
// tokenizer in GPT-2's format (tests/transformer/train/tiny_gpt2.h), saved as a decoder-only checkpoint,
// for the tests of `gradformer generate` and `gradformer trace` on GPT-2 checkpoints. --always-end
// makes <|endoftext|> the most likely next token after any prompt.
#include <filesystem>
#include <iostream>
#include <string>

#include "../train/tiny_gpt2.h"

int main(int argc, char** argv) {
  using namespace gradformer;
  const bool always_end = argc == 3 && std::string(argv[2]) == "--always-end";
  if (argc != 2 && !always_end) {
    std::cerr << "usage: write_gpt2_checkpoint CHECKPOINT [--always-end]\n";
    return 2;
  }
  try {
    const Tokenizer tokens = tiny_gpt2::tokenizer();
    DecoderOnly model(tiny_gpt2::config(tokens.size()), /*seed=*/7);
    if (always_end) tiny_gpt2::always_end(model, tokens.byte_pair_encoding().id("<|endoftext|>"));
    const std::filesystem::path path(argv[1]);
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
    tiny_gpt2::save(path.string(), model, tokens);
  } catch (const std::exception& e) {
    std::cerr << "write_gpt2_checkpoint: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
