// GPT-2's ids from an independent implementation: gpt2_reference/ holds a small encoder.json and
// vocab.bpe in GPT-2's formats and cases.json: texts (ASCII; accented Latin, CJK, Korean, Arabic,
// Cyrillic, emoji, combining marks, numbers of other scripts, every kind of Unicode space; and
// random mixes of them) with the pre-tokens GPT-2's pattern cuts them into and the ids OpenAI's
// encoder.py algorithm gives them (make_cases.py wrote them, running that algorithm and pattern in
// Python with the regex module).

#include "catch.h"
#include "tensor/support/json.h"
#include "transformer/data/bpe.h"
#include "transformer/data/line_reader.h"
#include "transformer/data/pre_tokenize.h"

using namespace gradformer;

namespace {

const std::string kDirectory = std::string(GRADFORMER_SOURCE_DIR) + "/tests/transformer/data/gpt2_reference/";

const Json& member(const Json& object, const std::string& name) {
  for (const auto& [key, value] : object.members()) {
    if (key == name) return value;
  }
  FAIL("a case without \"" << name << "\"");
  throw;  // not reached: FAIL throws
}

struct Case {
  std::string text;
  std::vector<std::string> pre_tokens;
  std::vector<int64_t> ids;
};

std::vector<Case> read_cases() {
  const Json parsed = Json::parse(read_whole_file(kDirectory + "cases.json"));
  std::vector<Case> cases;
  for (const Json& item : parsed.items()) {
    Case c{member(item, "text").text(), {}, {}};
    for (const Json& piece : member(item, "pre_tokens").items()) c.pre_tokens.push_back(piece.text());
    for (const Json& id : member(item, "ids").items()) c.ids.push_back(id.value());
    cases.push_back(std::move(c));
  }
  return cases;
}

bool is_ascii(const std::string& text) {
  for (const char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("GPT-2's algorithm and this one give the same ids on the reference cases") {
  const BytePairEncoding bpe = BytePairEncoding::read_gpt2(kDirectory + "encoder.json", kDirectory + "vocab.bpe");
  REQUIRE(bpe.size() == 657);
  REQUIRE(bpe.merges().size() == 400);
  // GPT-2's own ids for the single bytes, which the fixture keeps: newline 198, space 220, "!" 0.
  CHECK(bpe.id("\n") == 198);
  CHECK(bpe.id(" ") == 220);
  CHECK(bpe.id("!") == 0);
  CHECK(bpe.id("<|endoftext|>") == 656);
  const std::vector<Case> cases = read_cases();
  REQUIRE(cases.size() == 258);
  int non_ascii = 0;
  int merged_non_ascii = 0;  // cases where some merge joins bytes of a non-ASCII character
  for (const Case& c : cases) {
    INFO("text: \"" << c.text << "\"");
    const std::vector<std::string> pre_tokens = gpt2_pre_tokens(c.text);
    CHECK(pre_tokens == c.pre_tokens);
    const std::vector<int64_t> ids = bpe.encode(pre_tokens);
    CHECK(ids == c.ids);
    CHECK(bpe.decode(ids) == c.text);
    if (is_ascii(c.text)) continue;
    ++non_ascii;
    for (const int64_t id : ids) {
      if (bpe.token(id).size() > 1 && !is_ascii(bpe.token(id))) {
        ++merged_non_ascii;
        break;
      }
    }
  }
  // The fixture covers what it claims: most cases hold text outside ASCII, and in most of those the
  // merges matter there too.
  CHECK(non_ascii >= 160);
  CHECK(merged_non_ascii >= 150);
}
