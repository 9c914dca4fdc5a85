// gradformer trace: one sentence through a trained encoder-decoder, or (--train) one training step
// on a sentence pair, or one prompt through a decoder-only model (GPT-2 too: lm_trace.h). Without --checkpoint it
// traces runs/toy-translation's model, or else the first-use model: a small toy-translation model trained once, by the
// same train() as `gradformer train`, into runs/trace-model, and reused after.
#include <filesystem>
#include <iostream>
#include <optional>

#include "tensor/support/files.h"
#include "tensor/support/saved_state.h"
#include "transformer/cli/commands.h"
#include "transformer/cli/flags.h"
#include "transformer/data/line_reader.h"
#include "transformer/data/tsv.h"
#include "transformer/inspect/lm_trace.h"
#include "transformer/inspect/trace.h"
#include "transformer/inspect/train_trace.h"
#include "transformer/store/checkpoint.h"

namespace gradformer {
namespace {

constexpr const char* kTrainedModel = "runs/toy-translation/model.safetensors";

constexpr const char* kSummary =
    "Walk one sentence through a trained encoder-decoder, stage by stage in the order of the paper's\n"
    "figure 1: tokens and ids, embedding and positions, each encoder layer (where every head looks, what\n"
    "each sub-layer does to the vectors), then decoding one token at a time (the prefix, where\n"
    "cross-attention looks, the most likely next tokens, the choice).\n"
    "\n"
    "With --train and a pair, SENTENCE TARGET, walk one training step instead: the pair teacher-forced,\n"
    "each target position's probability of the right word and its loss, the mean loss (label-smoothed\n"
    "if the model was trained so), where the backward pass starts (dL/dlogits at one position: softmax's\n"
    "P minus the target q, over the tokens averaged, beside what backward computed; --position, --top),\n"
    "the backward pass (the gradient's norm at every sub-layer's output, decoder then encoder, and per\n"
    "layer of parameters), the loss after one gradient-descent step, and what Adam would do instead to\n"
    "the weight of the largest gradient (its moments and its update, beside SGD's).\n"
    "\n"
    "A decoder-only checkpoint (gradformer train --arch decoder-only, or GPT-2 from gradformer import --gpt2)\n"
    "reads SENTENCE as its prompt: the prompt's tokens (pieces and text), then for each layer and head the\n"
    "causal attention over them (a row per token, in percent; a long prompt's rows as their strongest\n"
    "keys; --layer and --head show fewer), and the most likely next tokens with their probabilities. E.g.\n"
    "  gradformer trace --checkpoint gpt2.safetensors --layer 5 \"The meaning of life is\"\n"
    "\n"
    "Without --checkpoint: runs/toy-translation/model.safetensors if it exists, or else a small\n"
    "toy-translation model trained on first use (seconds) into runs/trace-model and reused after.";

std::string checkpoint_to_trace(const Flags& f) {
  if (f.has("--checkpoint")) return f.text("--checkpoint");
  if (std::filesystem::exists(kTrainedModel)) {
    std::cerr << "gradformer trace: tracing " << kTrainedModel << " (--checkpoint to trace another)\n";
    return kTrainedModel;
  }
  const std::string path = first_use_model_path();
  if (std::filesystem::exists(path))
    std::cerr << "gradformer trace: tracing the first-use model " << path << " (--checkpoint to trace another)\n";
  return first_use_model(f.integer("--first-use-steps"), kTrainedModel);
}

void write_page(const std::string& path, const std::string& page) {
  write_file_whole(path, page);
  std::cout << "\nwrote " << path << " (open it in a browser)\n";
}

std::vector<std::string> sentence(const std::string& text, const char* what) {
  // User text, checked as LineReader checks every line of a file.
  if (const auto problem = utf8_problem(text)) throw UsageError(message("trace: the ", what, " is ", *problem));
  return split_words(text);
}

// The sentence, or with --train the pair: usage errors for a missing or empty one, or text that is not UTF-8.
std::pair<std::vector<std::string>, std::vector<std::string>> sentences(const Flags& f) {
  const std::vector<std::string>& given = f.positionals();
  const size_t wanted = f.on("--train") ? 2 : 1;
  if (wanted == 2 && f.given("--beam")) throw UsageError("trace: --beam is not used with --train");
  for (const char* flag : {"--lr", "--position"})
    if (wanted == 1 && f.given(flag)) throw UsageError(message("trace: ", flag, " is used with --train only"));
  if (given.size() != wanted || split_words(given[0]).empty() || (wanted == 2 && split_words(given[1]).empty()))
    throw UsageError(wanted == 1 ? "trace: give the sentence to trace, e.g. gradformer trace --checkpoint "
                                   "model.safetensors \"le chat noir mange .\""
                                 : "trace: --train takes a pair, e.g. gradformer trace --train \"je suis heureux .\" "
                                   "\"i am happy .\"");
  return {sentence(given[0], "sentence"), wanted == 2 ? sentence(given[1], "target") : std::vector<std::string>{}};
}

// trace --train reads its pair as words (train_trace.h): a model of bytes or BPE tokens is refused.
void refuse_subwords_for_train(const CheckpointInfo& info) {
  if (info.source_tokenizer.kind() != Tokenizer::Kind::Words || info.target_tokenizer.kind() != Tokenizer::Kind::Words)
    throw UsageError(message("trace: --train walks a model of words; this checkpoint's tokenizer is ",
                             info.target_tokenizer.kind_name(), " (trace it without --train)"));
}

// A decoder-only model: the prompt's tokens, each layer's and head's attention, the next tokens.
int trace_decoder_only(const Flags& f, CheckpointFile file) {
  if (f.on("--train"))
    throw UsageError("trace: --train walks an encoder-decoder's training step; this model is decoder-only");
  if (f.given("--beam"))
    throw UsageError("trace: --beam is for an encoder-decoder's translation; this model is decoder-only");
  LoadedDecoderOnly ckpt = load_decoder_only_checkpoint(std::move(file));
  const Tokenizer& tokenizer = ckpt.info.target_tokenizer;
  const TransformerConfig& c = ckpt.model->config();
  const int64_t top = f.given("--top") ? f.integer_in("--top", 1, tokenizer.size(), " (the vocabulary's size)")
                                       : std::min<int64_t>(10, tokenizer.size());
  LmTraceView view;
  if (f.has("--layer")) view.layer = f.integer_in("--layer", 0, c.layers - 1, " (the model's layers)");
  if (f.has("--head")) view.head = f.integer_in("--head", 0, c.heads - 1, " (the model's heads)");
  std::optional<LmTrace> t;
  try {  // a page too large is refused before the forward pass keeps every head's T x T weights
    t = trace_prompt(*ckpt.model, tokenizer, f.positionals()[0],
                     {.top = top, .page = f.has("--html") ? std::optional(view) : std::nullopt});
  } catch (const PageSizeError& e) {
    throw UsageError(e.what());
  }
  std::cout << lm_trace_text(*t, view);
  if (f.has("--html")) write_page(f.text("--html"), lm_trace_html(*t, view));
  return 0;
}

// trace --train: one training step of `ckpt`'s encoder-decoder on the pair, printed (and drawn with --html).
int trace_training_step(const Flags& f, LoadedCheckpoint& ckpt, const std::vector<std::string>& source,
                        const std::vector<std::string>& target, double lr) {
  refuse_subwords_for_train(ckpt.info);
  const auto smoothing = ckpt.info.state.find("options.label_smoothing");
  const TrainStepTrace t = trace_train_step(
      *ckpt.model, ckpt.info.source_tokenizer.vocab(), ckpt.info.target_tokenizer.vocab(), source, target,
      {.label_smoothing = smoothing == ckpt.info.state.end()
                              ? 0.0  // a model gradformer did not train (import): none that we know of
                              : parse_number(smoothing->second, "the checkpoint's options.label_smoothing"),
       .lr = lr,
       .source_eos = ckpt.info.source_eos,
       .position = f.given("--position") ? f.integer_in("--position", 0, static_cast<int64_t>(target.size()),
                                                        " (the target's words, then </s>)")
                                         : -1,
       .top = f.integer("--top")});
  std::cout << train_trace_text(t);
  if (f.has("--html")) write_page(f.text("--html"), train_trace_html(t));
  return 0;
}

}  // namespace

int trace_command(int argc, char** argv) {
  Flags f("trace", kSummary);
  f.add_positionals("\"SENTENCE\" [\"TARGET\"]",
                    "the source sentence (quote it), or a decoder-only model's prompt: words separated by spaces, or "
                    "any text for a model of bytes or BPE tokens (GPT-2's too); with --train, then its translation");
  f.add("--checkpoint", "", "a model saved by gradformer train or import (default: see above)");
  f.add_switch("--train", "trace one training step on the pair SENTENCE TARGET");
  f.add("--lr", "0.5", "--train: the learning rate of the gradient-descent step");
  f.add("--position", "",
        "--train: the target position whose dL/dlogits to show (default: the one of the largest loss)");
  f.add("--beam", "1", "also run beam search with this many beams and show them at every step (1: greedy only)");
  f.add("--top", "5",
        "next-token candidates shown at every step (a decoder-only model's: 10 unless given; --train: the rows of "
        "dL/dlogits)");
  f.add("--layer", "", "decoder-only: show this layer's heads only (from 0; default: every layer)");
  f.add("--head", "", "decoder-only: show this head of each layer only (from 0; default: every head)");
  f.add("--html", "", "also write the walk as one self-contained HTML page (heatmaps, tables) to this file");
  f.add_switch("--force", "replace the --html file if it exists");
  f.add("--first-use-steps", "0", "training steps of the first-use model, when it is trained (0: its recipe's)");
  f.add("--threads", "0", "threads (0: all cores)");
  if (!f.parse(argc, argv)) {
    std::cout << f.help();
    return 0;
  }
  const auto [source, target] = sentences(f);
  (void)f.integer_in("--beam", 1), (void)f.integer_in("--top", 1);  // the upper bounds are the model's, below
  (void)f.integer_in("--first-use-steps", 0, 1000000);
  const double lr = f.number("--lr");
  if (!(lr >= 0 && lr <= 1000)) throw UsageError(message("trace: --lr must be from 0 to 1000, got ", f.text("--lr")));
  apply_threads(f);
  const std::string checkpoint = checkpoint_to_trace(f);
  refuse_output_over_input("trace", "--html", f.text("--html"), {checkpoint}, "the checkpoint to trace", "the page");
  if (f.has("--html")) check_output_flag("trace", "--html", f.text("--html"), f.on("--force"));
  CheckpointFile file = read_checkpoint_file(checkpoint);
  if (file.arch == Architecture::DecoderOnly) return trace_decoder_only(f, std::move(file));
  for (const char* flag : {"--layer", "--head"})
    if (f.has(flag)) throw UsageError(message("trace: ", flag, " is for a decoder-only model's trace"));
  LoadedCheckpoint ckpt = load_checkpoint(std::move(file));
  const int64_t vocab = ckpt.info.target_tokenizer.size();
  (void)f.integer_in("--beam", 1, vocab, " (the target vocabulary's size)");
  (void)f.integer_in("--top", 1, vocab, " (the target vocabulary's size)");
  if (f.on("--train")) return trace_training_step(f, ckpt, source, target, lr);
  const SentenceTrace t =
      trace_sentence(*ckpt.model, ckpt.info.source_tokenizer, ckpt.info.target_tokenizer, source,
                     {.beam = f.integer("--beam"), .top = f.integer("--top"), .source_eos = ckpt.info.source_eos});
  std::cout << trace_text(t);
  if (f.has("--html")) write_page(f.text("--html"), trace_html(t));
  return 0;
}

}  // namespace gradformer
