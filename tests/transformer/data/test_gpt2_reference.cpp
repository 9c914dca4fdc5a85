// GPT-2's ids from an independent implementation: gpt2_reference/ holds a small encoder.json and
// vocab.bpe in GPT-2's formats and cases.json, ASCII texts with the ids that OpenAI's encoder.py
// algorithm gives them (make_cases.py wrote them, running that algorithm in Python).
#include <fstream>
#include <sstream>

#include "catch.h"
#include "tensor/json.h"
#include "transformer/data/bpe.h"
#include "transformer/data/pre_tokenize.h"

using namespace gradformer;

namespace {

const std::string kDirectory = std::string(GRADFORMER_SOURCE_DIR) + "/tests/transformer/data/gpt2_reference/";

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  REQUIRE(in);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

TEST_CASE("GPT-2's algorithm and this one give the same ids on the reference cases") {
  const BytePairEncoding bpe = BytePairEncoding::read_gpt2(kDirectory + "encoder.json", kDirectory + "vocab.bpe");
  REQUIRE(bpe.size() == 557);
  REQUIRE(bpe.merges().size() == 300);
  // GPT-2's own ids for the single bytes, which the fixture keeps: newline 198, space 220, "!" 0.
  CHECK(bpe.id("\n") == 198);
  CHECK(bpe.id(" ") == 220);
  CHECK(bpe.id("!") == 0);
  CHECK(bpe.id("<|endoftext|>") == 556);
  const Json cases = Json::parse(read_text(kDirectory + "cases.json"));
  REQUIRE(cases.items().size() == 80);
  for (const Json& item : cases.items()) {
    const std::string& text = item.members().at(0).second.text();
    std::vector<int64_t> expected;
    for (const Json& id : item.members().at(1).second.items()) expected.push_back(id.value());
    INFO("text: \"" << text << "\"");
    const std::vector<int64_t> ids = bpe.encode(gpt2_pre_tokens(text));
    CHECK(ids == expected);
    CHECK(bpe.decode(ids) == text);
  }
}
