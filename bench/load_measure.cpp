// Writes a GPT-2-small-sized checkpoint to measure what loading one costs (bench/load_measure.sh
// runs `gradformer generate` on it under /usr/bin/time -v): GPT-2 small's configuration with random
// weights (gpt2_small_config(), 124M parameters, about 500 MB of float32) and a tokenizer of GPT-2's
// size (256 bytes, 50,000 merges, <|endoftext|>: 50,257 tokens). The merges are made up (every pair
// of lowercase letters, then every triple, then quadruples), since a load's cost depends only on
// how many there are; the weights are random for the same reason.
//
//   build/bench/load_measure OUT.safetensors
#include <cstdio>
#include <string>
#include <vector>

#include "transformer/data/bpe.h"
#include "transformer/data/tokenizer.h"
#include "transformer/model/decoder_only.h"
#include "transformer/store/checkpoint.h"

using namespace gradformer;

namespace {

// `count` merges over lowercase letters, each joining a token made before it and one letter:
// 26^2 pairs, then 26^3 triples, then as many quadruples as are still wanted.
std::vector<BytePairEncoding::Merge> letter_merges(size_t count) {
  std::vector<BytePairEncoding::Merge> merges;
  std::vector<std::string> shorter;
  for (char c = 'a'; c <= 'z'; ++c) shorter.emplace_back(1, c);
  while (merges.size() < count) {
    std::vector<std::string> longer;
    for (const std::string& left : shorter)
      for (char c = 'a'; c <= 'z' && merges.size() < count; ++c) {
        merges.emplace_back(left, std::string(1, c));
        longer.push_back(left + c);
      }
    shorter = std::move(longer);
  }
  return merges;
}

Tokenizer gpt2_sized_tokenizer() {
  std::vector<BytePairEncoding::Merge> merges = letter_merges(50'000);
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.emplace_back(1, static_cast<char>(b));
  for (const auto& [left, right] : merges) tokens.push_back(left + right);
  tokens.emplace_back("<|endoftext|>");
  return Tokenizer::gpt2(BytePairEncoding(std::move(tokens), std::move(merges)));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: load_measure OUT.safetensors\n");
    return 2;
  }
  const TransformerConfig config = gpt2_small_config();
  const DecoderOnly model(config, /*seed=*/1);
  CheckpointInfo info;
  info.config = config;
  info.source_tokenizer = info.target_tokenizer = gpt2_sized_tokenizer();
  save_checkpoint(argv[1], model, config, {}, info);
  std::printf("wrote %s: %lld parameters, a tokenizer of %lld tokens\n", argv[1],
              static_cast<long long>(model.parameter_count()), static_cast<long long>(info.target_tokenizer.size()));
  return 0;
}
