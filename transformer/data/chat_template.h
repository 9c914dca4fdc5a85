// How a conversation becomes the one sequence of tokens a language model reads: each message wrapped
// in the template's special tokens, which mark where a turn starts, whose it is and where it ends.
// They are tokens of their own, not text, and the model learns to write the end-of-turn token when
// its answer is done, which is how generating knows to stop. This library's tokenizers never spell
// them from text; a hub tokenizer matches its added tokens in text, as the tokenizers library does,
// so there a message holding "<|im_end|>" ends its turn, as Hugging Face's apply_chat_template would.
//   chatml  <|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello!<|im_end|>\n
//           (the format of Qwen2's and SmolLM2's templates, without the system message they put
//           first when a conversation has none)
//   llama3  <|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>
//           <|start_header_id|>assistant<|end_header_id|>\n\nHello!<|eot_id|>
//           (Llama 3's, each message's content trimmed of whitespace at both ends, as its template does)
// Rendered as pieces, each a special token or a text, and marked when the fine-tuning loss scores
// it: the assistant's answers and their end-of-turn tokens, nothing the user or the system wrote.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "transformer/data/conversations.h"
#include "transformer/data/tokenizer.h"

namespace gradformer {

enum class ChatTemplate { ChatML, Llama3 };

/// "chatml", "llama3".
const char* chat_template_name(ChatTemplate t);
/// The template of that name; ValueError "chat template: unknown NAME (chatml, llama3)" otherwise.
ChatTemplate chat_template_named(std::string_view name);
/// The special tokens the template writes, as text, in the order a tokenizer that lacks them adds them.
std::vector<std::string> chat_template_specials(ChatTemplate t);
/// The token that ends a turn: <|im_end|> or <|eot_id|>.
std::string end_of_turn(ChatTemplate t);
/// The template a tokenizer's special tokens imply: llama3 when it has all of Llama 3's, else
/// chatml when it has <|im_start|> and <|im_end|>, else none.
std::optional<ChatTemplate> implied_chat_template(const Tokenizer& tokenizer);

/// A piece of a rendered conversation: a special token (its text) or plain text, and whether the
/// fine-tuning loss scores its tokens.
struct ChatPiece {
  std::string text;
  bool special = false;
  bool scored = false;
};

/// The messages as the template writes them, in order. With `generation_prompt`, ending with the
/// header of an assistant's turn, for a model to write the answer after it.
std::vector<ChatPiece> render_chat(ChatTemplate t, const std::vector<Message>& messages,
                                   bool generation_prompt = false);
/// The pieces' texts joined: the template's output, byte for byte.
std::string chat_text(const std::vector<ChatPiece>& pieces);

/// A rendered conversation as token ids, and per id whether the loss scores it.
struct ChatTokens {
  std::vector<int64_t> ids;
  std::vector<bool> scored;
};

/// The pieces as ids: each special the tokenizer's id for its text, each text encode()d on its own
/// (so an answer's tokens are the ones a model writes after the turn's header, as when it
/// generates). DataError "chat template: the tokenizer has no token NAME" for a special the
/// tokenizer lacks, and for a words tokenizer, which cannot spell a template's newlines.
ChatTokens encode_chat(const Tokenizer& tokenizer, const std::vector<ChatPiece>& pieces);

}  // namespace gradformer
