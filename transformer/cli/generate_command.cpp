// gradformer generate: text from a decoder-only checkpoint, one token at a time with the key/value
// cache; temperature, top-k and top-p reshape each next-token distribution (transformer/model/sampling.h).
#include <iostream>

#include "transformer/cli/commands.h"
#include "transformer/cli/flags.h"
#include "transformer/data/tsv.h"
#include "transformer/model/sampling.h"
#include "transformer/train/checkpoint.h"
#include "transformer/train/evaluate.h"

namespace gradformer {

int generate_command(int argc, char** argv) {
  Flags f("generate",
          "Continue a prompt with a decoder-only checkpoint (gradformer train --arch decoder-only) and print the\n"
          "generated words on one line. Words of the prompt the model never saw become <unk>.");
  f.add("--checkpoint", "", "a decoder-only model saved by gradformer train (required)");
  f.add("--prompt", "", "the start of the text, whitespace-separated words (default: nothing after <s>)");
  f.add("--max-tokens", "40", "tokens generated at most, </s> included");
  f.add("--temperature", "1", "divides the logits before the softmax; 0: greedy (the most likely token)");
  f.add("--top-k", "0", "sample among the k most likely tokens only (0: all)");
  f.add("--top-p", "1", "sample among the fewest most likely tokens whose probability reaches p (1: all)");
  f.add("--seed", "1", "the sampling generator's seed: the same seed gives the same text");
  f.add("--threads", "0", "threads (0: all cores)");
  if (!f.parse(argc, argv)) {
    std::cout << f.help();
    return 0;
  }
  f.require("--checkpoint");
  SamplingOptions o{.max_tokens = f.integer_in("--max-tokens", 1),
                    .temperature = f.number("--temperature"),
                    .top_k = f.integer_in("--top-k", 0, std::numeric_limits<int64_t>::max(), " (0: all tokens)"),
                    .top_p = f.number("--top-p")};
  if (!(o.temperature >= 0))
    throw UsageError(message("generate: --temperature must be at least 0, got ", f.text("--temperature")));
  if (!(o.top_p > 0 && o.top_p <= 1))
    throw UsageError(message("generate: --top-p must be in (0, 1], got ", f.text("--top-p")));
  (void)f.integer_in("--seed", 0);
  // User text, checked as LineReader checks every line of a file.
  if (const auto problem = utf8_problem(f.text("--prompt"))) throw UsageError("generate: --prompt is " + *problem);
  apply_threads(f);
  const std::string path = f.text("--checkpoint");
  const CheckpointFile file = read_checkpoint_file(path);  // read once, whatever its architecture
  if (file.arch != Architecture::DecoderOnly)
    throw UsageError(message("generate: ", path, " is ", a_architecture(file.arch),
                             " checkpoint; generate needs a decoder-only one (translate and score take "
                             "encoder-decoder ones, classify encoder-only ones)"));
  LoadedDecoderOnly ckpt = load_decoder_only_checkpoint(file);
  const Vocab& vocab = ckpt.info.target_tokenizer.vocab();
  std::vector<int64_t> prompt{Vocab::bos};
  for (int64_t id : vocab.encode(split_words(f.text("--prompt")))) prompt.push_back(id);
  const int64_t room = ckpt.model->config().max_len + 1 - static_cast<int64_t>(prompt.size());
  if (room < 1)
    throw UsageError(message("generate: the prompt's ", prompt.size() - 1, " words leave no room in max_len ",
                             ckpt.model->config().max_len));
  o.max_tokens = std::min(o.max_tokens, room);
  Generator gen(static_cast<uint64_t>(f.integer("--seed")));
  std::vector<std::string> words = split_words(f.text("--prompt"));
  for (int64_t id : generate(*ckpt.model, prompt, o, gen)) {
    if (id == Vocab::eos) break;
    words.push_back(vocab.token(id));
  }
  std::cout << join_words(words) << "\n";
  return 0;
}

}  // namespace gradformer
