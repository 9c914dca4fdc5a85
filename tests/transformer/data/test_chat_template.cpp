#include "catch.h"
#include "transformer/data/chat_template.h"
#include "transformer/data/data_error.h"

using namespace gradformer;
using Ids = std::vector<int64_t>;

namespace {

const std::vector<Message> kConversation = {{Role::System, "Be brief."},
                                            {Role::User, "2+2?"},
                                            {Role::Assistant, "4"},
                                            {Role::User, "and 3+3?"},
                                            {Role::Assistant, "6"}};

}  // namespace

TEST_CASE("chat templates: chatml written byte for byte, with and without the generation prompt") {
  const auto pieces = render_chat(ChatTemplate::ChatML, kConversation);
  CHECK(chat_text(pieces) ==
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\n2+2?<|im_end|>\n"
        "<|im_start|>assistant\n4<|im_end|>\n<|im_start|>user\nand 3+3?<|im_end|>\n"
        "<|im_start|>assistant\n6<|im_end|>\n");
  const std::vector<Message> question = {{Role::User, "hi"}};
  CHECK(chat_text(render_chat(ChatTemplate::ChatML, question, true)) ==
        "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
  // Scored: each answer and its <|im_end|>, nothing else.
  std::string scored;
  for (const ChatPiece& p : pieces)
    if (p.scored) scored += p.text + "|";
  CHECK(scored == "4|<|im_end|>|6|<|im_end|>|");
}

TEST_CASE("chat templates: llama3 written byte for byte, each content trimmed as its template's trim does") {
  // Leading and trailing whitespace, an ideographic space (U+3000) and a file separator (U+001C,
  // which Python's isspace counts) included; the space inside stays.
  const std::vector<Message> messages = {{Role::User,
                                          " \n\xE3\x80\x80"
                                          "2 + 2?\t"},
                                         {Role::Assistant,
                                          "\x1C"
                                          "4\n\n"}};
  CHECK(chat_text(render_chat(ChatTemplate::Llama3, messages)) ==
        "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n2 + 2?<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n4<|eot_id|>");
  CHECK(chat_text(render_chat(ChatTemplate::Llama3, {{Role::User, "   "}}, true)) ==
        "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\n<|eot_id|>"
        "<|start_header_id|>assistant<|end_header_id|>\n\n");
}

TEST_CASE("chat templates: the tokens of a conversation and which of them the loss scores, token by token") {
  // A bytes tokenizer with chatml's specials: <pad> <s> </s> <unk> 0-3, <|im_start|> 4, <|im_end|> 5,
  // then byte b as 6 + b.
  const Tokenizer t = Tokenizer::bytes({"<|im_start|>", "<|im_end|>"});
  const std::vector<Message> messages = {{Role::User, "hi"}, {Role::Assistant, "yo"}};
  const ChatTokens c = encode_chat(t, render_chat(ChatTemplate::ChatML, messages));
  auto b = [](char ch) { return int64_t{6} + static_cast<unsigned char>(ch); };
  const Ids expected = {4,       b('u'), b('s'),  b('e'), b('r'), b('\n'), b('h'), b('i'), 5,
                        b('\n'), 4,      b('a'),  b('s'), b('s'), b('i'),  b('s'), b('t'), b('a'),
                        b('n'),  b('t'), b('\n'), b('y'), b('o'), 5,       b('\n')};
  CHECK(c.ids == expected);
  std::vector<bool> scored(expected.size(), false);
  scored[21] = scored[22] = scored[23] = true;  // "y", "o" and the answer's <|im_end|>
  CHECK(c.scored == scored);
  CHECK(t.decode(c.ids) == chat_text(render_chat(ChatTemplate::ChatML, messages)));
}

TEST_CASE("chat templates: a tokenizer that lacks a template's tokens, or spells words, is refused") {
  const std::vector<Message> messages = {{Role::User, "hi"}, {Role::Assistant, "yo"}};
  CHECK_THROWS_MSG(encode_chat(Tokenizer::bytes({"<|im_start|>"}), render_chat(ChatTemplate::ChatML, messages)),
                   DataError, "chat template: the tokenizer has no token <|im_end|>");
  CHECK_THROWS_MSG(encode_chat(Tokenizer(), render_chat(ChatTemplate::ChatML, messages)), DataError,
                   "chat template: a words tokenizer cannot spell a template's newlines");
}

TEST_CASE("chat templates: by name, their tokens, and the one a tokenizer's tokens imply") {
  CHECK(chat_template_named("chatml") == ChatTemplate::ChatML);
  CHECK(chat_template_name(chat_template_named("llama3")) == std::string("llama3"));
  CHECK_THROWS_MSG(chat_template_named("zephyr"), ValueError, "chat template: unknown zephyr (chatml, llama3)");
  CHECK(end_of_turn(ChatTemplate::ChatML) == "<|im_end|>");
  CHECK(end_of_turn(ChatTemplate::Llama3) == "<|eot_id|>");
  CHECK(implied_chat_template(Tokenizer::bytes({"<|im_start|>", "<|im_end|>"})) == ChatTemplate::ChatML);
  CHECK(implied_chat_template(Tokenizer::bytes(chat_template_specials(ChatTemplate::Llama3))) == ChatTemplate::Llama3);
  CHECK_FALSE(implied_chat_template(Tokenizer::bytes({"<|im_start|>"})).has_value());
  CHECK_FALSE(implied_chat_template(Tokenizer::bytes()).has_value());
}
