#include "catch.h"
#include "transformer/data/data_error.h"
#include "transformer/data/tokenizer.h"

using namespace gradformer;
using Ids = std::vector<int64_t>;

namespace {

const std::vector<std::string> kChatML = {"<|im_start|>", "<|im_end|>"};

}  // namespace

TEST_CASE("added tokens come after every id a tokenizer has, and special() finds them") {
  // bytes: <pad> <s> </s> <unk> 0-3, byte b as 4 + b (260 ids); the added ones 260 and 261.
  const Tokenizer t = Tokenizer::bytes().with_added(kChatML);
  CHECK(t.size() == 262);
  CHECK(t.special("<|im_start|>") == 260);
  CHECK(t.special("<|im_end|>") == 261);
  CHECK(t.special("</s>") == 2);
  CHECK(t.added() == kChatML);
  CHECK(t.vocab().size() == 262);  // the vocabulary a checkpoint keeps names them too, last
  CHECK(t.vocab().token(261) == "<|im_end|>");
  // encode never produces them; decode writes their text; they stand for no bytes of text.
  CHECK(t.encode("<|") == Ids{4 + '<', 4 + '|'});
  CHECK(t.decode({260, 4 + 'h', 4 + 'i', 261}) == "<|im_start|>hi<|im_end|>");
  CHECK(t.piece(261) == "<|im_end|>");
  CHECK(t.byte_length(260) == 0);
  CHECK(t.byte_length(4 + 'h') == 1);
  // A name the tokenizer has already is left out: here <|im_start|> is one of its specials, id 4.
  const Tokenizer one = Tokenizer::bytes({"<|im_start|>"}).with_added(kChatML);
  CHECK(one.added() == std::vector<std::string>{"<|im_end|>"});
  CHECK(one.special("<|im_start|>") == 4);
  CHECK(one.special("<|im_end|>") == 261);  // 5 specials + 256 bytes
  CHECK(t.with_added(kChatML) == t);
}

TEST_CASE("added tokens are kept in a checkpoint's metadata and a tokenizer file, for bytes, bpe and GPT-2's") {
  const Tokenizer bpe = Tokenizer::learn_bpe({"the cat the hat the bat"}, 270);
  const Tokenizer gpt2 = Tokenizer::gpt2(BytePairEncoding(single_byte_tokens(), {}));
  for (const Tokenizer& base : {Tokenizer::bytes({"<sep>"}), bpe, gpt2}) {
    const Tokenizer t = base.with_added(kChatML);
    INFO(t.kind_name());
    CHECK(t.size() == base.size() + 2);
    const auto metadata = t.metadata("tokenizer.target");
    CHECK(metadata.at("tokenizer.target.added") == "<|im_start|>\n<|im_end|>\n");
    const Tokenizer back = Tokenizer::from_metadata(t.has_vocab() ? t.vocab() : Vocab(), metadata, "tokenizer.target",
                                                    "model.safetensors");
    CHECK(back == t);
    CHECK(back.special("<|im_end|>") == base.size() + 1);
    CHECK(back.encode("the cat") == base.encode("the cat"));
    if (t.has_vocab()) CHECK(Tokenizer::from_json(t.to_json(), "t.json") == t);
  }
  // A tokenizer without added tokens writes no entry and no member for them, as before.
  CHECK(bpe.metadata("tokenizer.target").count("tokenizer.target.added") == 0);
  CHECK(bpe.to_json().find("added") == std::string::npos);
}

TEST_CASE("added tokens: what cannot be added is refused, and so is metadata that does not agree") {
  CHECK_THROWS_MSG(Tokenizer().with_added(kChatML), ValueError, "a tokenizer of words cannot take added tokens");
  CHECK_THROWS_MSG(Tokenizer::bytes().with_added({"im end"}), ValueError,
                   "a special token is written <name> without spaces, got \"im end\"");
  // A learned token spelling the name: it stays the text it was learned as.
  std::vector<std::string> tokens = single_byte_tokens();
  for (const char* t : {"<|", "<|x", "<|x|", "<|x|>"}) tokens.emplace_back(t);
  const Tokenizer learned = Tokenizer::byte_pairs(
      BytePairEncoding(tokens, {{"<", "|"}, {"<|", "x"}, {"<|x", "|"}, {"<|x|", ">"}}));  // <|x|>: id 4 + 259
  CHECK_THROWS_MSG(learned.with_added({"<|x|>"}), ValueError,
                   "Tokenizer with_added: <|x|> is token 263 of the byte-pair encoding, learned from text");
  const Tokenizer t = Tokenizer::bytes().with_added(kChatML);
  auto metadata = t.metadata("tokenizer.target");
  metadata["tokenizer.target.added"] = "<|im_end|>\n<|im_start|>\n";  // not the vocabulary's last tokens in order
  CHECK_THROWS_MSG(Tokenizer::from_metadata(t.vocab(), metadata, "tokenizer.target", "m.safetensors"), DataError,
                   "m.safetensors: tokenizer.target.added names 2 tokens that are not the vocabulary's last ones");
}
