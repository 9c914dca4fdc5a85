#include "transformer/evaluate/chat_session.h"

#include "transformer/data/data_error.h"

namespace gradformer {

namespace {

int64_t end_of_turn_id(const Tokenizer& tokenizer, ChatTemplate chat) {
  for (const std::string& name : chat_template_specials(chat))
    if (!tokenizer.special(name))
      throw DataError(message("chat: the tokenizer has no ", name, ", which the ", chat_template_name(chat),
                              " template writes (a model fine-tuned with train --task sft has it)"));
  return *tokenizer.special(end_of_turn(chat));
}

}  // namespace

std::vector<int64_t> not_in_answers(const Tokenizer& tokenizer, ChatTemplate chat, int64_t model_rows) {
  std::vector<int64_t> never;
  for (int64_t id = 0; id < tokenizer.special_count(); ++id) never.push_back(id);
  for (int64_t id = tokenizer.size(); id < model_rows; ++id) never.push_back(id);
  for (const std::string& name : chat_template_specials(chat))
    if (name != end_of_turn(chat))
      if (const auto id = tokenizer.special(name)) never.push_back(*id);
  return never;
}

ChatSession::ChatSession(DecoderOnly& model, const Tokenizer& tokenizer, ChatTemplate chat, std::string system)
    : model_(model), tokenizer_(tokenizer), chat_(chat), end_of_turn_(end_of_turn_id(tokenizer, chat)) {
  set_system(std::move(system));
}

void ChatSession::set_system(std::string system) {
  system_ = std::move(system);
  reset();
}

void ChatSession::reset() {
  messages_.clear();
  if (!system_.empty()) messages_.push_back({Role::System, system_});
  cache_ = model_.start_cache(), unread_.clear();
}

// The tokens the template writes after what the cache holds: all of it for the first turn; later,
// what follows the last answer's end-of-turn (chatml's newline), the user's turn and the assistant's
// header. The answers' own tokens are in the cache as the model drew them.
std::vector<int64_t> ChatSession::new_turn_ids(const std::string& text) const {
  std::vector<Message> next = messages_;
  next.push_back({Role::User, text});
  std::vector<ChatPiece> pieces = render_chat(chat_, next, /*generation_prompt=*/true);
  if (cache_.length > 0) {
    const std::vector<ChatPiece> before = render_chat(chat_, messages_);
    size_t after_end = before.size();  // just after the last answer's end-of-turn
    while (after_end > 0 && !(before[after_end - 1].special && before[after_end - 1].scored)) --after_end;
    pieces.erase(pieces.begin(), pieces.begin() + static_cast<std::ptrdiff_t>(after_end));
  }
  return encode_chat(tokenizer_, pieces).ids;
}

std::optional<ChatSession::Turn> ChatSession::answer(const std::string& text, SamplingOptions o, Generator& gen,
                                                     const std::function<void(int64_t)>& on_token) {
  std::vector<int64_t> fresh = unread_;
  const std::vector<int64_t> turn = new_turn_ids(text);
  fresh.insert(fresh.end(), turn.begin(), turn.end());
  // The last token drawn is never read: room for max_len + 1 - what is read.
  const int64_t room = model_.config().max_len + 1 - cache_.length - static_cast<int64_t>(fresh.size());
  if (room < 2) return std::nullopt;  // not even one token of answer and its end
  o.max_tokens = std::min(o.max_tokens, room), o.eos = end_of_turn_;
  const std::vector<int64_t> never = not_in_answers(tokenizer_, chat_, model_.config().tgt_vocab);
  o.never.insert(o.never.end(), never.begin(), never.end());
  Turn t{.read = static_cast<int64_t>(fresh.size()), .cached = cache_.length};
  t.written = generate_after(model_, cache_, fresh, o, gen, on_token);
  // Not read yet: the end-of-turn, or for an answer cut by max_tokens its last token, then the
  // end-of-turn that closes it as the model would have.
  const bool ended = t.written.back() == end_of_turn_;
  unread_ = ended ? std::vector<int64_t>{end_of_turn_} : std::vector<int64_t>{t.written.back(), end_of_turn_};
  t.answer = tokenizer_.decode(ended ? std::vector<int64_t>(t.written.begin(), t.written.end() - 1) : t.written);
  messages_.push_back({Role::User, text});
  messages_.push_back({Role::Assistant, t.answer});
  return t;
}

}  // namespace gradformer
