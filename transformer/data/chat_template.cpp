#include "transformer/data/chat_template.h"

#include <algorithm>

#include "transformer/data/data_error.h"
#include "transformer/data/pre_tokenize.h"

namespace gradformer {

namespace {

constexpr const char* kOperation = "chat template";

/// Whitespace as Python's str.isspace() has it (what Jinja's trim strips): the pattern's \s class
/// and the four separators U+001C..U+001F.
bool is_space(const Character& c) {
  return c.character_class == CharacterClass::Space || (c.code_point >= 0x1C && c.code_point <= 0x1F);
}

/// The text without whitespace at either end.
std::string trimmed(std::string_view text) {
  size_t begin = text.size(), end = 0;
  for (size_t i = 0; i < text.size();) {
    const Character c = character_at(text, i, kOperation);
    if (!is_space(c)) {
      begin = std::min(begin, i);
      end = i + c.length;
    }
    i += c.length;
  }
  return begin < end ? std::string(text.substr(begin, end - begin)) : std::string();
}

void add(std::vector<ChatPiece>& pieces, std::string text, bool special, bool scored = false) {
  pieces.push_back({std::move(text), special, scored});
}

// <|im_start|>ROLE\nCONTENT<|im_end|>\n for each message; the answer and its <|im_end|> scored.
std::vector<ChatPiece> chatml(const std::vector<Message>& messages, bool generation_prompt) {
  std::vector<ChatPiece> pieces;
  for (const Message& m : messages) {
    const bool answer = m.role == Role::Assistant;
    add(pieces, "<|im_start|>", true);
    add(pieces, std::string(role_name(m.role)) + "\n", false);
    add(pieces, m.content, false, answer);
    add(pieces, "<|im_end|>", true, answer);
    add(pieces, "\n", false);
  }
  if (generation_prompt) {
    add(pieces, "<|im_start|>", true);
    add(pieces, "assistant\n", false);
  }
  return pieces;
}

// <|begin_of_text|>, then <|start_header_id|>ROLE<|end_header_id|>\n\nCONTENT<|eot_id|> for each
// message, its content trimmed; the answer and its <|eot_id|> scored.
std::vector<ChatPiece> llama3(const std::vector<Message>& messages, bool generation_prompt) {
  std::vector<ChatPiece> pieces;
  add(pieces, "<|begin_of_text|>", true);
  auto header = [&](Role role) {
    add(pieces, "<|start_header_id|>", true);
    add(pieces, role_name(role), false);
    add(pieces, "<|end_header_id|>", true);
    add(pieces, "\n\n", false);
  };
  for (const Message& m : messages) {
    const bool answer = m.role == Role::Assistant;
    header(m.role);
    add(pieces, trimmed(m.content), false, answer);
    add(pieces, "<|eot_id|>", true, answer);
  }
  if (generation_prompt) header(Role::Assistant);
  return pieces;
}

}  // namespace

const char* chat_template_name(ChatTemplate t) { return t == ChatTemplate::ChatML ? "chatml" : "llama3"; }

ChatTemplate chat_template_named(std::string_view name) {
  if (name == "chatml") return ChatTemplate::ChatML;
  if (name == "llama3") return ChatTemplate::Llama3;
  throw ValueError(message("chat template: unknown ", name, " (chatml, llama3)"));
}

std::vector<std::string> chat_template_specials(ChatTemplate t) {
  if (t == ChatTemplate::ChatML) return {"<|im_start|>", "<|im_end|>"};
  return {"<|begin_of_text|>", "<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"};
}

std::string end_of_turn(ChatTemplate t) { return t == ChatTemplate::ChatML ? "<|im_end|>" : "<|eot_id|>"; }

std::optional<ChatTemplate> implied_chat_template(const Tokenizer& tokenizer) {
  for (ChatTemplate t : {ChatTemplate::Llama3, ChatTemplate::ChatML}) {
    bool all = true;
    for (const std::string& name : chat_template_specials(t)) all = all && tokenizer.special(name).has_value();
    if (all) return t;
  }
  return std::nullopt;
}

std::vector<ChatPiece> render_chat(ChatTemplate t, const std::vector<Message>& messages, bool generation_prompt) {
  return t == ChatTemplate::ChatML ? chatml(messages, generation_prompt) : llama3(messages, generation_prompt);
}

std::string chat_text(const std::vector<ChatPiece>& pieces) {
  std::string text;
  for (const ChatPiece& p : pieces) text += p.text;
  return text;
}

ChatTokens encode_chat(const Tokenizer& tokenizer, const std::vector<ChatPiece>& pieces) {
  if (tokenizer.kind() == Tokenizer::Kind::Words)
    throw DataError("chat template: a words tokenizer cannot spell a template's newlines; use bytes, bpe or a hub one");
  ChatTokens out;
  for (const ChatPiece& p : pieces) {
    std::vector<int64_t> ids;
    if (p.special) {
      const std::optional<int64_t> id = tokenizer.special(p.text);
      if (!id) throw DataError(message("chat template: the tokenizer has no token ", p.text));
      ids = {*id};
    } else {
      ids = tokenizer.encode(p.text);
    }
    out.ids.insert(out.ids.end(), ids.begin(), ids.end());
    out.scored.insert(out.scored.end(), ids.size(), p.scored);
  }
  return out;
}

}  // namespace gradformer
