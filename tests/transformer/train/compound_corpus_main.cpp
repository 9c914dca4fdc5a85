// compound_corpus DIR [SEED]: writes the compound corpus (compound_corpus.h) as DIR/train.tsv,
// DIR/valid.tsv and DIR/test.tsv, to train models of words and of subwords on and compare:
//   gradformer train --data DIR/train.tsv --valid DIR/valid.tsv --test DIR/test.tsv --tokenizer bpe --vocab-size 400
#include <cstdio>
#include <exception>
#include <filesystem>
#include <string>

#include "compound_corpus.h"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: compound_corpus DIR [SEED]\n");
    return 2;
  }
  try {
    const std::string dir = argv[1];
    std::filesystem::create_directories(dir);
    const test::CompoundCorpus corpus = test::make_compound_corpus(argc == 3 ? std::stoull(argv[2]) : 1);
    gradformer::write_tsv(dir + "/train.tsv", corpus.train);
    gradformer::write_tsv(dir + "/valid.tsv", corpus.valid);
    gradformer::write_tsv(dir + "/test.tsv", corpus.test);
    std::printf("wrote %zu, %zu and %zu pairs to %s/train.tsv, valid.tsv and test.tsv\n", corpus.train.size(),
                corpus.valid.size(), corpus.test.size(), dir.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "compound_corpus: %s\n", e.what());
    return 1;
  }
  return 0;
}
