// A conversation with a fine-tuned model, turn by turn, its keys and values cached across turns: a
// turn reads only its new tokens (the previous answer's end-of-turn, what the template writes after
// it, the user's message, the assistant's header), so its cost does not grow with the conversation
// except through attention over the cache. What `gradformer chat` drives.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "transformer/data/chat_template.h"
#include "transformer/model/sampling.h"

namespace gradformer {

/// The ids an answer never draws: the specials in front of a tokenizer's ids (<pad> <s> ...), the
/// model's rows past the tokenizer's ids (an imported model's padding), and the template's tokens
/// but its end-of-turn (a turn's start or header is the template's to write, not the model's).
std::vector<int64_t> not_in_answers(const Tokenizer& tokenizer, ChatTemplate chat, int64_t model_rows);

class ChatSession {
 public:
  /// `model` and `tokenizer` must outlive the session; the tokenizer must hold the template's
  /// tokens (DataError naming the first it lacks). `system`: a system message ("" for none).
  ChatSession(DecoderOnly& model, const Tokenizer& tokenizer, ChatTemplate chat, std::string system = "");

  /// Forgets the conversation; the system message stays.
  void reset();
  /// A new system message, and a new conversation.
  void set_system(std::string system);

  /// What a turn did: the tokens it read on top of the cache, how many were cached before, and the
  /// answer's tokens as drawn (its end-of-turn included when the model wrote it).
  struct Turn {
    int64_t read = 0, cached = 0;
    std::vector<int64_t> written = {};
    std::string answer = {};  // the written tokens as text, without the end-of-turn
  };
  /// The model's answer to the user's `text`, each token given to on_token as it is drawn (sampling
  /// as `options` says, at most options.max_tokens, fewer if the context ends sooner; its eos is the
  /// end-of-turn). nullopt, the session unchanged, when the turn does not fit the model's context.
  std::optional<Turn> answer(const std::string& text, SamplingOptions options, Generator& gen,
                             const std::function<void(int64_t)>& on_token = {});

  const std::vector<Message>& messages() const { return messages_; }
  int64_t end_of_turn() const { return end_of_turn_; }
  int64_t cached() const { return cache_.length; }

 private:
  std::vector<int64_t> new_turn_ids(const std::string& text) const;

  DecoderOnly& model_;
  const Tokenizer& tokenizer_;
  ChatTemplate chat_;
  int64_t end_of_turn_;
  std::string system_;
  std::vector<Message> messages_;
  DecoderOnlyCache cache_;
  std::vector<int64_t> unread_;  // drawn, not yet read: the last answer's end-of-turn (and its last token, if cut)
};

}  // namespace gradformer
