// write_tokenizer_checkpoint CHECKPOINT TOKENIZER_JSON: a tiny untrained encoder-decoder whose source
// side is the bytes tokenizer and whose target side is the byte-pair tokenizer in TOKENIZER_JSON (a
// file gradformer learn-bpe wrote), for the tests of `gradformer tokenize --checkpoint` on models that
// are not of words: what the checkpoint stores (vocab.* and tokenizer.* entries) must give back each
// side's tokenizer.
#include <iostream>

#include "transformer/store/checkpoint.h"

int main(int argc, char** argv) {
  using namespace gradformer;
  if (argc != 3) {
    std::cerr << "usage: write_tokenizer_checkpoint CHECKPOINT TOKENIZER_JSON\n";
    return 2;
  }
  try {
    CheckpointInfo info;
    info.source_tokenizer = Tokenizer::bytes();
    info.target_tokenizer = Tokenizer::read_file(argv[2]);
    TransformerConfig& c = info.config;
    c.src_vocab = info.source_tokenizer.size(), c.tgt_vocab = info.target_tokenizer.size();
    c.d_model = 8, c.d_ff = 16, c.heads = 2, c.layers = 1, c.max_len = 16;
    const EncoderDecoder model(c, /*seed=*/1);
    save_checkpoint(argv[1], model, /*optimizer_state=*/{}, info);
  } catch (const std::exception& e) {
    std::cerr << "write_tokenizer_checkpoint: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
