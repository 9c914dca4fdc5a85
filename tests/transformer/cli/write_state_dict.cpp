// write_state_dict CHECKPOINT WEIGHTS SRC_VOCAB TGT_VOCAB: what a PyTorch user would have of a
// gradformer model, for the import tests: the parameters alone under their names (as safetensors'
// save_file writes a state dict, metadata {"format": "pt"}; Adam's moments and gradformer's
// metadata left out) and the two vocabularies as files, one token a line. Creates WEIGHTS' folder.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "transformer/store/checkpoint.h"

int main(int argc, char** argv) {
  using namespace gradformer;
  if (argc != 5) {
    std::cerr << "usage: write_state_dict CHECKPOINT WEIGHTS SRC_VOCAB TGT_VOCAB\n";
    return 2;
  }
  try {
    const CheckpointContents contents = read_checkpoint(argv[1]);
    std::filesystem::create_directories(std::filesystem::path(argv[2]).parent_path());
    save_safetensors(argv[2], contents.parameters, {{"format", "pt"}});
    std::ofstream(argv[3], std::ios::binary) << contents.info.source_tokenizer.vocab().to_text();
    std::ofstream(argv[4], std::ios::binary) << contents.info.target_tokenizer.vocab().to_text();
  } catch (const std::exception& e) {
    std::cerr << "write_state_dict: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
