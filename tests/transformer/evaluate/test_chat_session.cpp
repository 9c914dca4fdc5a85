// A conversation turn by turn (transformer/evaluate/chat_session.h): each turn reads only its new
// tokens on top of the cache, and answers exactly as generating from the whole conversation afresh.
#include "catch.h"
#include "transformer/data/data_error.h"
#include "transformer/evaluate/chat_session.h"

using namespace gradformer;
using Ids = std::vector<int64_t>;

namespace {

const Tokenizer& chat_bytes() {
  static const Tokenizer t = Tokenizer::bytes().with_added({"<|im_start|>", "<|im_end|>"});
  return t;
}

DecoderOnly& tiny_model(int64_t max_len) {
  static std::map<int64_t, std::unique_ptr<DecoderOnly>> models;
  auto& m = models[max_len];
  if (!m) {
    TransformerConfig c = decoder_only_config(chat_bytes().size());
    c.d_model = 16, c.d_ff = 32, c.heads = 2, c.layers = 2, c.max_len = max_len, c.dropout = 0;
    c.dtype = DType::Float64;
    m = std::make_unique<DecoderOnly>(c, 7);
  }
  return *m;
}

Ids concat(Ids a, const Ids& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

}  // namespace

TEST_CASE("a chat session's turns read only their new tokens and answer as the whole conversation read afresh") {
  DecoderOnly& model = tiny_model(256);
  const Tokenizer& t = chat_bytes();
  ChatSession session(model, t, ChatTemplate::ChatML, "Be brief.");
  const SamplingOptions greedy{.max_tokens = 12, .temperature = 0};
  Generator gen(1);
  const auto first = session.answer("hi", greedy, gen);
  REQUIRE(first);
  const Ids prompt1 =
      encode_chat(t, render_chat(ChatTemplate::ChatML, {{Role::System, "Be brief."}, {Role::User, "hi"}}, true)).ids;
  CHECK(first->cached == 0);
  CHECK(first->read == static_cast<int64_t>(prompt1.size()));
  const int64_t end = *t.special("<|im_end|>");
  SamplingOptions fresh_options = greedy;
  fresh_options.eos = end;
  CHECK(first->written == generate(model, prompt1, fresh_options, gen));
  // The second turn: the cache holds the first prompt and the answer but its last token.
  const auto second = session.answer("and you?", greedy, gen);
  REQUIRE(second);
  CHECK(second->cached == static_cast<int64_t>(prompt1.size() + first->written.size()) - 1);
  // Afresh: the first turn as read and written (closed by <|im_end|> if the answer was cut), then
  // chatml's newline, the new user turn and the assistant's header.
  Ids closed = concat(prompt1, first->written);
  if (closed.back() != end) closed.push_back(end);
  const std::string answer1 = first->answer;
  const std::vector<ChatPiece> after = render_chat(ChatTemplate::ChatML, {{Role::User, "and you?"}},
                                                   true);  // <|im_start|> user\n and you? <|im_end|> \n ...
  const Ids whole = concat(concat(closed, t.encode("\n")), encode_chat(t, after).ids);
  CHECK(second->cached + second->read == static_cast<int64_t>(whole.size()));
  CHECK(second->written == generate(model, whole, fresh_options, gen));
  CHECK(session.messages().size() == 5);  // system, then two turns of two
  session.reset();
  CHECK(session.cached() == 0);
  CHECK(session.messages().size() == 1);  // the system message stays
}

TEST_CASE("a chat session refuses a turn that does not fit, unchanged, and a tokenizer without the template's tokens") {
  DecoderOnly& model = tiny_model(48);
  ChatSession session(model, chat_bytes(), ChatTemplate::ChatML);
  const SamplingOptions greedy{.max_tokens = 4, .temperature = 0};
  Generator gen(1);
  int turns = 0;
  while (session.answer("abc", greedy, gen)) ++turns;
  CHECK(turns >= 1);
  const int64_t cached = session.cached();
  const size_t messages = session.messages().size();
  CHECK_FALSE(session.answer("abc", greedy, gen).has_value());
  CHECK(session.cached() == cached);
  CHECK(session.messages().size() == messages);
  CHECK(cached <= 48);
  CHECK_THROWS_MSG(ChatSession(model, Tokenizer::bytes(), ChatTemplate::ChatML), DataError,
                   "chat: the tokenizer has no <|im_start|>, which the chatml template writes");
}
