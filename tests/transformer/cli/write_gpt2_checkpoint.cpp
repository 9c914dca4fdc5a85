// write_gpt2_checkpoint CHECKPOINT [--always-end | --always-pad] [--gpt2 DIR]: a tiny untrained model of GPT-2's
// architecture with a tokenizer in GPT-2's format (tests/transformer/train/tiny_gpt2.h), saved as a
// decoder-only checkpoint, for the tests of `gradformer generate` and `gradformer trace` on GPT-2
// checkpoints. --always-end makes <|endoftext|> the most likely next token after any prompt; --gpt2
// reads the tokenizer from DIR's encoder.json and vocab.bpe, GPT-2's released files. --always-pad
// gives it gradformer's bytes tokenizer instead (<pad> <s> </s> <unk>, then the 256 bytes) and makes
// <pad> the most likely next token: what a barely trained text model may do.
#include <filesystem>
#include <iostream>
#include <string>

#include "../train/tiny_gpt2.h"

int main(int argc, char** argv) {
  using namespace gradformer;
  if (argc < 2) {
    std::cerr << "usage: write_gpt2_checkpoint CHECKPOINT [--always-end | --always-pad] [--gpt2 DIR]\n";
    return 2;
  }
  try {
    bool always_end = false, always_pad = false;
    Tokenizer tokens = tiny_gpt2::tokenizer();
    for (int i = 2; i < argc; ++i) {
      const std::string flag = argv[i];
      if (flag == "--always-end") {
        always_end = true;
      } else if (flag == "--always-pad") {
        always_pad = true, tokens = Tokenizer::bytes();
      } else if (flag == "--gpt2" && i + 1 < argc) {
        const std::string dir = argv[++i];
        tokens = Tokenizer::gpt2(BytePairEncoding::read_gpt2(dir + "/encoder.json", dir + "/vocab.bpe"));
      } else {
        std::cerr << "write_gpt2_checkpoint: unknown argument " << flag << "\n";
        return 2;
      }
    }
    DecoderOnly model(tiny_gpt2::config(tokens.size()), /*seed=*/7);
    if (always_end) tiny_gpt2::always_end(model, tokens.byte_pair_encoding().id("<|endoftext|>"));
    if (always_pad) tiny_gpt2::always_end(model, Vocab::pad);
    const std::filesystem::path path(argv[1]);
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
    tiny_gpt2::save(path.string(), model, tokens);
  } catch (const std::exception& e) {
    std::cerr << "write_gpt2_checkpoint: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
