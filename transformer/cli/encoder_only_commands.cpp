// gradformer classify, and the bert-base preset of params.
#include <cstdio>
#include <iostream>

#include "transformer/cli/commands.h"
#include "transformer/cli/flags.h"
#include "transformer/evaluate/evaluate.h"
#include "transformer/store/checkpoint.h"

namespace gradformer {

int classify_command(int argc, char** argv) {
  Flags f("classify",
          "Classify each line of standard input (whitespace-separated tokens) with an encoder-only checkpoint\n"
          "fine-tuned by gradformer train --arch encoder-only --task classify; print one label per line.\n"
          "\n"
          "Output line N is input line N's label: a line that cannot be classified (not UTF-8, longer than the\n"
          "model takes) gives an empty line, a message, and exit status 1 at the end. A line over 1 MiB or an\n"
          "input that cannot be read stops the command (status 1).");
  f.add("--checkpoint", "", "an encoder-only classifier checkpoint (required)");
  f.add("--threads", "0", "threads (0: all cores)");
  if (!f.parse(argc, argv)) {
    std::cout << f.help();
    return 0;
  }
  f.require("--checkpoint");
  apply_threads(f);
  const std::string path = f.text("--checkpoint");
  LoadedEncoderOnly ckpt = load_encoder_only_checkpoint(path, "classify");
  const auto task = ckpt.info.state.find("options.task");
  if (task != ckpt.info.state.end() && task->second != "classify")
    throw CheckpointError(message(path, " was trained with --task ", task->second,
                                  ", so its classifier is untrained: fine-tune it with --task classify --init ", path));
  const int64_t most_words = ckpt.info.config.max_len - 2;  // with <s> and </s>
  const int64_t unclassified = answer_each_line("classify", "classified", [&](const std::vector<std::string>& words) {
    if (static_cast<int64_t>(words.size()) > most_words)
      throw DataError(message("classify: the sentence has ", words.size(), " words; this model takes at most ",
                              most_words, " (its max_len ", ckpt.info.config.max_len, " less <s> and </s>)"));
    const int64_t label = classify(*ckpt.model, ckpt.info.vocab, {words}).front();
    return ckpt.info.labels[static_cast<size_t>(label)];
  });
  return unanswered_status("classify", "classified", unclassified);
}

int bert_base_params() {
  const EncoderOnlyConfig c = EncoderOnlyConfig::bert_base();
  const EncoderOnlyCount n = parameter_count(c);
  auto line = [](const char* what, int64_t count, const char* formula) {
    std::printf("  %-12s %12lld   %s\n", what, static_cast<long long>(count), formula);
  };
  std::printf(
      "preset bert-base: d_model 768, d_ff 3072, heads 12, layers 12, vocabulary 30522, 512 learned positions,\n"
      "2 token types, embedding LayerNorm, post-LN, GELU\n");
  line("embeddings", n.embeddings, "V d + 512 d + 2 d + 2 d");
  line("encoder", n.encoder, "12 (4 d^2 + 4 d + 2 d d_ff + d_ff + d + 4 d)");
  line("pooler", n.pooler, "d^2 + d");
  std::printf("parameters: %lld (%.1fM; BERT's paper: 110M)\n", static_cast<long long>(n.body_and_pooler()),
              static_cast<double>(n.body_and_pooler()) / 1e6);
  line("+ mlm head", n.mlm_head, "d^2 + d + 2 d + V (output tied to the embedding)");
  line("+ classifier", n.classifier, "2 d + 2");
  std::printf("with the pre-training and classification heads: %lld\n", static_cast<long long>(n.total()));
  return 0;
}

}  // namespace gradformer
