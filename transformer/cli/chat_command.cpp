// gradformer chat: a conversation with a fine-tuned decoder-only model (train --task sft). Each line
// of standard input is a user's turn; the answer is printed as it is generated, on one line. The
// key/value cache is kept across turns: a turn reads only its own new tokens (the previous answer's
// end-of-turn, the user's message, the assistant's header), so its cost does not grow with the
// conversation except through attention over the cache.
#include <unistd.h>

#include <iostream>

#include "transformer/cli/commands.h"
#include "transformer/cli/flags.h"
#include "transformer/cli/text_stream.h"
#include "transformer/data/chat_template.h"
#include "transformer/data/line_reader.h"
#include "transformer/evaluate/chat_session.h"
#include "transformer/store/checkpoint.h"

namespace gradformer {

namespace {

constexpr const char* kSummary =
    "Talk with a decoder-only model fine-tuned on conversations (gradformer train --task sft). Each line of\n"
    "standard input is your turn; the model's answer follows on one line, printed as it is written, until its\n"
    "end-of-turn token or --max-tokens. The conversation's keys and values stay cached, so a turn reads only\n"
    "its new tokens. When the conversation fills the model's context (its max-len), the turn is refused with a\n"
    "message: /reset starts again. Lines that start with / are commands:\n"
    "  /reset         forget the conversation (the system message stays)\n"
    "  /system TEXT   a new system message, and a new conversation\n"
    "  /quit          end (as the end of the input does)\n"
    "E.g.  printf 'Reverse: ab cd\\n/reset\\nReverse: ef gh\\n/quit\\n' | gradformer chat --checkpoint "
    "runs/chat/model.safetensors";

// The model's answer to a line, printed as it comes; a turn that does not fit is refused on stderr.
void answer(ChatSession& session, const Tokenizer& tokenizer, const std::string& line, const SamplingOptions& o,
            Generator& gen, bool stats) {
  const int64_t end = session.end_of_turn();
  AnswerText text(tokenizer);
  const auto turn = session.answer(line, o, gen, [&](int64_t id) {
    if (id != end) std::cout << text.add(id) << std::flush;
  });
  if (!turn) {
    std::cerr << "gradformer chat: the conversation fills the model's context; /reset starts a new one\n";
    return;
  }
  std::cout << text.finish() << "\n" << std::flush;
  if (stats)
    std::cerr << "(read " << turn->read << " new tokens after " << turn->cached << " cached; wrote "
              << turn->written.size() << ")\n";
}

// --template, else the template the checkpoint was fine-tuned with, else the one its tokenizer
// implies, else chatml; a UsageError when the tokenizer lacks one of its tokens.
ChatTemplate template_of(const Flags& f, const LoadedDecoderOnly& ckpt, const std::string& path) {
  const Tokenizer& tokenizer = ckpt.info.target_tokenizer;
  const auto recorded = ckpt.info.state.find("chat.template");
  ChatTemplate chat = ChatTemplate::ChatML;
  if (f.has("--template")) {
    chat = chat_template_named(f.choice("--template", {"chatml", "llama3"}));
  } else if (recorded != ckpt.info.state.end()) {
    chat = chat_template_named(recorded->second);
  } else if (const auto implied = implied_chat_template(tokenizer)) {
    chat = *implied;
  }
  for (const std::string& name : chat_template_specials(chat))
    if (!tokenizer.special(name))
      throw UsageError(message("chat: ", path, "'s tokenizer has no ", name, ", which the ", chat_template_name(chat),
                               " template writes: fine-tune the model first (gradformer train --task sft --init ", path,
                               ")"));
  return chat;
}

// Each line of standard input a turn or a command, until /quit or the input's end. A "> " prompt
// when the input is a terminal.
void converse(ChatSession& session, const Tokenizer& tokenizer, const SamplingOptions& o, Generator& gen, bool stats) {
  const bool prompt = ::isatty(STDIN_FILENO) != 0;
  LineReader lines(stdin, "standard input");
  for (std::string line;;) {
    if (prompt) std::cout << "> " << std::flush;
    try {
      if (!lines.next(line)) break;
    } catch (const ReadError&) {
      throw;
    } catch (const DataError& e) {  // a line that is not UTF-8: say so and read on
      std::cerr << "gradformer chat: " << e.what() << "\n";
      continue;
    }
    if (line == "/quit") break;
    if (line == "/reset") {
      session.reset();
    } else if (line.rfind("/system", 0) == 0 && (line.size() == 7 || line[7] == ' ')) {
      session.set_system(line.size() > 8 ? line.substr(8) : "");
    } else if (!line.empty()) {
      answer(session, tokenizer, line, o, gen, stats);
    }
  }
}

}  // namespace

int chat_command(int argc, char** argv) {
  Flags f("chat", kSummary);
  f.add("--checkpoint", "", "a decoder-only model fine-tuned with gradformer train --task sft (required)");
  f.add("--system", "", "a system message, first in the conversation (default: none)");
  f.add("--template", "",
        "chatml or llama3 (default: the one the checkpoint was fine-tuned with, else the one its tokenizer implies)");
  declare_sampling_flags(f, "256", "tokens of one answer at most, its end-of-turn included", "0.7",
                         "the sampling generator's seed: the same seed and turns give the same answers");
  f.add_switch("--stats",
               "after each answer, say on stderr how many tokens it read and wrote, and how many were cached");
  f.add("--threads", "0", "threads (0: all cores)");
  if (!f.parse(argc, argv)) {
    std::cout << f.help();
    return 0;
  }
  f.require("--checkpoint");
  const SamplingOptions o = sampling_options(f, "chat");
  if (const auto problem = utf8_problem(f.text("--system"))) throw UsageError("chat: --system is " + *problem);
  apply_threads(f);
  const std::string path = f.text("--checkpoint");
  LoadedDecoderOnly ckpt = load_decoder_only_checkpoint(path);
  const Tokenizer& tokenizer = ckpt.info.target_tokenizer;
  const ChatTemplate chat = template_of(f, ckpt, path);
  ChatSession session(*ckpt.model, tokenizer, chat, f.text("--system"));
  Generator gen(sampling_seed(f));
  converse(session, tokenizer, o, gen, f.on("--stats"));
  return 0;
}

}  // namespace gradformer
