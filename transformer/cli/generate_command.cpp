// gradformer generate: text from a decoder-only checkpoint, one token at a time with the key/value
// cache; temperature, top-k and top-p reshape each next-token distribution (transformer/model/sampling.h).
#include <iostream>

#include "transformer/cli/commands.h"
#include "transformer/cli/flags.h"
#include "transformer/cli/text_stream.h"
#include "transformer/data/chat_template.h"
#include "transformer/data/tokenizer.h"
#include "transformer/data/tsv.h"
#include "transformer/evaluate/chat_session.h"
#include "transformer/evaluate/evaluate.h"
#include "transformer/model/sampling.h"
#include "transformer/store/checkpoint.h"

namespace gradformer {

namespace {

// GPT-2's tokenizer ends a text with <|endoftext|>, an ordinary token of its vocabulary (50256 in the
// released one): found by its text. An imported hub model's ends are its config's eos_token_id, which
// its checkpoint keeps (data.end_of_text, read by the caller); other byte-level models continue
// without end (-1).
int64_t end_of_text(const Tokenizer& tokenizer) {
  if (tokenizer.kind() != Tokenizer::Kind::Bpe || tokenizer.has_vocab()) return -1;
  return tokenizer.byte_pair_encoding().id("<|endoftext|>");
}

// A bytes or bpe model continues raw text: no <s>, no </s> (it learnt running text), and a text
// longer than its max_len in windows: when one is full, its last half is the next one's prompt
// (continue_sequence). GPT-2's stops at <|endoftext|>, which is not printed. The text is printed as
// it is generated.
void continue_text(DecoderOnly& model, const Tokenizer& tokenizer, const std::string& text, SamplingOptions o,
                   Generator& gen, const std::vector<int64_t>& end_of_text_ids) {
  std::vector<int64_t> ids;
  try {
    ids = tokenizer.encode_prompt(text);  // a hub model's <|begin_of_text|> or <s> first
  } catch (const ValueError& e) {
    throw UsageError(
        message("generate: --prompt cannot be read by the model's ", tokenizer.kind_name(), " tokenizer: ", e.what()));
  }
  const int64_t max_len = model.config().max_len;
  if (ids.empty())
    throw UsageError("generate: a " + tokenizer.kind_name() + " model continues text: give a --prompt to continue");
  if (static_cast<int64_t>(ids.size()) > max_len)
    throw UsageError(message("generate: the prompt's ", ids.size(), " tokens do not fit the model's context of ",
                             max_len, " tokens (max_len)"));
  // An imported hub model's end tokens (its config's eos_token_id, kept by the checkpoint), else GPT-2's.
  o.eos = end_of_text_ids.empty() ? end_of_text(tokenizer) : end_of_text_ids.front();
  if (!end_of_text_ids.empty()) o.also_stop.assign(end_of_text_ids.begin() + 1, end_of_text_ids.end());
  // The specials in front (<pad> <s> </s> <unk>) are not text: a barely trained model would print "<pad>".
  for (int64_t id = 0; id < tokenizer.special_count(); ++id) o.never.push_back(id);
  // Rows past the tokenizer's ids (a hub model's padding) are no text.
  for (int64_t id = tokenizer.size(); id < model.config().tgt_vocab; ++id) o.never.push_back(id);
  // The prompt as typed, then the continuation's text as it comes (a character cut by the last token shows as U+FFFD).
  std::cout << text << std::flush;
  Utf8Stream stream;
  continue_sequence(model, ids, o, gen, [&](int64_t id) {
    if (!o.stops(id)) std::cout << stream.add(tokenizer.decode_bytes({id})) << std::flush;
  });
  std::cout << stream.finish() << "\n";
}

// A fine-tuned model (train --task sft) answers the prompt as a user's turn: the prompt written with
// its chat template and the assistant's header after it, as in fine-tuning; the answer is printed
// as it comes, until the end-of-turn token (not printed) or --max-tokens.
void answer(DecoderOnly& model, const Tokenizer& tokenizer, ChatTemplate chat, const std::string& text,
            SamplingOptions o, Generator& gen) {
  const std::vector<int64_t> ids = encode_chat(tokenizer, render_chat(chat, {{Role::User, text}}, true)).ids;
  const int64_t room = model.config().max_len + 1 - static_cast<int64_t>(ids.size());  // the last drawn is not read
  if (room < 1)
    throw UsageError(message("generate: the prompt is ", ids.size(), " tokens as the ", chat_template_name(chat),
                             " template writes it, which leaves no room in the model's context of ",
                             model.config().max_len, " tokens (max_len)"));
  o.max_tokens = std::min(o.max_tokens, room);
  o.eos = *tokenizer.special(end_of_turn(chat));
  o.never = not_in_answers(tokenizer, chat, model.config().tgt_vocab);
  AnswerText written(tokenizer);
  generate(model, ids, o, gen, [&](int64_t id) {
    if (!o.stops(id)) std::cout << written.add(id) << std::flush;
  });
  std::cout << written.finish() << "\n";
}

// A model of words continues "<s> prompt" until </s> or its max_len, and prints the words.
void continue_words(DecoderOnly& model, const Vocab& vocab, const std::string& text, SamplingOptions o,
                    Generator& gen) {
  std::vector<int64_t> prompt{Vocab::bos};
  for (int64_t id : vocab.encode(split_words(text))) prompt.push_back(id);
  const int64_t room = model.config().max_len + 1 - static_cast<int64_t>(prompt.size());
  if (room < 1)
    throw UsageError(message("generate: the prompt's ", prompt.size() - 1, " words leave no room in max_len ",
                             model.config().max_len));
  o.max_tokens = std::min(o.max_tokens, room);
  o.never = {Vocab::pad, Vocab::bos};  // never a target in training: no loss counts <pad>, and <s> only starts
  std::vector<std::string> words = split_words(text);
  for (int64_t id : generate(model, prompt, o, gen)) {
    if (id == Vocab::eos) break;
    words.push_back(vocab.token(id));
  }
  std::cout << join_words(words) << "\n";
}

}  // namespace

void declare_sampling_flags(Flags& f, const char* max_tokens, const char* max_tokens_help, const char* temperature,
                            const char* seed_help) {
  f.add("--max-tokens", max_tokens, max_tokens_help);
  f.add("--temperature", temperature, "divides the logits before the softmax; 0: greedy (the most likely token)");
  f.add("--top-k", "0", "sample among the k most likely tokens only (0: all)");
  f.add("--top-p", "1", "sample among the fewest most likely tokens whose probability reaches p (1: all)");
  f.add("--seed", "1", seed_help);
}

SamplingOptions sampling_options(const Flags& f, const char* command) {
  SamplingOptions o{.max_tokens = f.integer_in("--max-tokens", 1),
                    .temperature = f.number("--temperature"),
                    .top_k = f.integer_in("--top-k", 0, std::numeric_limits<int64_t>::max(), " (0: all tokens)"),
                    .top_p = f.number("--top-p")};
  if (!(o.temperature >= 0))
    throw UsageError(message(command, ": --temperature must be at least 0, got ", f.text("--temperature")));
  if (!(o.top_p > 0 && o.top_p <= 1))
    throw UsageError(message(command, ": --top-p must be in (0, 1], got ", f.text("--top-p")));
  (void)sampling_seed(f);  // checked before any work
  return o;
}

uint64_t sampling_seed(const Flags& f) { return static_cast<uint64_t>(f.integer_in("--seed", 0)); }

int generate_command(int argc, char** argv) {
  Flags f("generate",
          "Continue a prompt with a decoder-only checkpoint (gradformer train --arch decoder-only) and print the\n"
          "generated words on one line. Words of the prompt the model never saw become <unk>. A model of a text\n"
          "file (--text, tokenizer bytes or bpe) or GPT-2 (gradformer import --gpt2) continues the prompt as raw\n"
          "text and prints the prompt and its continuation as they are, line ends included, past its max-len (GPT-2:\n"
          "its context of 1024 tokens) if asked: each full window's last half starts the next. The prompt must fit\n"
          "the context. GPT-2 stops at <|endoftext|>, which is not printed. A model fine-tuned on conversations\n"
          "(train --task sft) answers the prompt as a user's turn, written with its chat template, and stops at\n"
          "its end-of-turn token (--raw: continue the prompt as text instead). E.g.\n"
          "  gradformer generate --checkpoint gpt2.safetensors --prompt \"The meaning of life is\" --top-k 40");
  f.add("--checkpoint", "", "a decoder-only model saved by gradformer train or import --gpt2 (required)");
  f.add("--prompt", "",
        "the start of the text, whitespace-separated words (default: nothing after <s>); a text model's: raw "
        "text (required)");
  declare_sampling_flags(
      f, "40", "new tokens generated at most, </s> or <|endoftext|> included", "1",
      "the sampling generator's seed: the same seed gives the same text (unused by --temperature 0)");
  f.add("--threads", "0", "threads (0: all cores)");
  f.add_switch("--raw", "a fine-tuned model (train --task sft): continue the prompt as text, not as a user's turn");
  if (!f.parse(argc, argv)) {
    std::cout << f.help();
    return 0;
  }
  f.require("--checkpoint");
  const SamplingOptions o = sampling_options(f, "generate");
  // User text, checked as LineReader checks every line of a file.
  if (const auto problem = utf8_problem(f.text("--prompt"))) throw UsageError("generate: --prompt is " + *problem);
  apply_threads(f);
  const std::string path = f.text("--checkpoint");
  // The header read once, whatever its architecture; the parameters then read into the model.
  CheckpointFile file = read_checkpoint_header(path);
  if (file.arch != Architecture::DecoderOnly)
    throw UsageError(message("generate: ", path, " is ", a_architecture(file.arch),
                             " checkpoint; generate needs a decoder-only one (translate and score take "
                             "encoder-decoder ones, classify encoder-only ones)"));
  LoadedDecoderOnly ckpt = load_decoder_only_checkpoint(std::move(file));
  Generator gen(sampling_seed(f));
  if (const auto chat = ckpt.info.state.find("chat.template"); chat != ckpt.info.state.end() && !f.on("--raw")) {
    answer(*ckpt.model, ckpt.info.target_tokenizer, chat_template_named(chat->second), f.text("--prompt"), o, gen);
    return 0;
  }
  if (ckpt.info.target_tokenizer.kind() != Tokenizer::Kind::Words) {
    continue_text(*ckpt.model, ckpt.info.target_tokenizer, f.text("--prompt"), o, gen, ckpt.info.end_of_text);
    return 0;
  }
  continue_words(*ckpt.model, ckpt.info.target_tokenizer.vocab(), f.text("--prompt"), o, gen);
  return 0;
}

}  // namespace gradformer
