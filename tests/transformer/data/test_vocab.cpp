#include <filesystem>
#include <fstream>

#include "catch.h"
#include "transformer/data/line_reader.h"
#include "transformer/data/vocab.h"

using namespace gradformer;

namespace {
const std::vector<std::vector<std::string>> kSentences = {
    {"the", "cat", "sat"}, {"the", "dog", "sat"}, {"a", "cat"}, {"the", "end"}};
}

TEST_CASE("vocab puts the specials first then tokens by frequency with ties alphabetical") {
  const Vocab vocab = Vocab::build(kSentences);
  // counts: the 3, cat 2, sat 2, a 1, dog 1, end 1
  const std::vector<std::string> expected = {"<pad>", "<s>", "</s>", "<unk>", "the", "cat", "sat", "a", "dog", "end"};
  REQUIRE(vocab.size() == 10);
  for (int64_t i = 0; i < vocab.size(); ++i) CHECK(vocab.token(i) == expected[static_cast<size_t>(i)]);
  CHECK(vocab.id("<pad>") == Vocab::pad);
  CHECK(vocab.id("<s>") == Vocab::bos);
  CHECK(vocab.id("</s>") == Vocab::eos);
  CHECK(vocab.id("<unk>") == Vocab::unk);
}

TEST_CASE("vocab building is deterministic and independent of sentence order") {
  auto reversed = kSentences;
  std::reverse(reversed.begin(), reversed.end());
  CHECK(Vocab::build(kSentences) == Vocab::build(reversed));
  CHECK(Vocab::build(kSentences).to_text() == Vocab::build(kSentences).to_text());
}

TEST_CASE("vocab min_count and max_size drop the rarest tokens") {
  const Vocab frequent = Vocab::build(kSentences, 2);
  CHECK(frequent.size() == 7);  // specials + the cat sat
  CHECK(frequent.id("dog") == Vocab::unk);
  const Vocab capped = Vocab::build(kSentences, 1, 6);
  CHECK(capped.size() == 6);
  CHECK(capped.token(5) == "cat");
  CHECK_THROWS_MSG(Vocab::build(kSentences, 0), ValueError, "min_count");
  CHECK_THROWS_MSG(Vocab::build(kSentences, 1, 3), ValueError, "max_size");
  CHECK_THROWS_MSG(Vocab::build({{"two words"}}), DataError, "whitespace");
}

TEST_CASE("vocab encodes unknown words as unk and decodes every id") {
  const Vocab vocab = Vocab::build(kSentences);
  const std::vector<int64_t> ids = vocab.encode({"the", "zebra", "sat"});
  CHECK(ids == std::vector<int64_t>{4, Vocab::unk, 6});
  CHECK(vocab.decode(ids) == std::vector<std::string>{"the", "<unk>", "sat"});
  CHECK(vocab.decode({1, 4, 2, 0}) == std::vector<std::string>{"<s>", "the", "</s>", "<pad>"});
  CHECK_THROWS_MSG(vocab.token(10), IndexError, "id 10 is outside [0, 10)");
  CHECK_THROWS_MSG(vocab.token(-1), IndexError, "id -1");
}

// Found by fuzzing (tests/fuzz/fuzz_data): a corpus line "a <pad>\tb </s> c" encoded its words
// as pad and eos, so the batch masked a real word out of the loss and ended a target early.
TEST_CASE("vocab encodes words that spell <pad>, <s> or </s> as unk, not as markers") {
  const Vocab vocab = Vocab::build(kSentences);
  CHECK(vocab.encode({"the", "<pad>", "<s>", "</s>", "<unk>", "sat"}) ==
        std::vector<int64_t>{4, Vocab::unk, Vocab::unk, Vocab::unk, Vocab::unk, 6});
  CHECK(vocab.id("<pad>") == Vocab::pad);  // the lookup itself still knows the specials
}

TEST_CASE("strip_specials drops bos and pad and stops at eos") {
  CHECK(strip_specials({1, 5, 6, 3, 2, 7, 0}) == std::vector<int64_t>{5, 6, 3});
  CHECK(strip_specials({5, 0, 6}) == std::vector<int64_t>{5, 6});
  CHECK(strip_specials({2, 5}).empty());
}

TEST_CASE("vocab round trips through its text form") {
  const Vocab vocab = Vocab::build(kSentences);
  const std::string text = vocab.to_text();
  CHECK(text.rfind("<pad>\n<s>\n</s>\n<unk>\nthe\ncat\n", 0) == 0);
  CHECK(Vocab::from_text(text) == vocab);
  CHECK(Vocab::from_text(text.substr(0, text.size() - 1)) == vocab);  // without the last newline
  CHECK(Vocab().size() == 4);
  CHECK(Vocab::from_text(Vocab().to_text()) == Vocab());
}

TEST_CASE("vocab text errors name the source and line") {
  CHECK_THROWS_MSG(Vocab::from_text("<pad>\n<s>\n</s>\n<unk>\ncat\ndog\ncat\n", "src.vocab"), DataError,
                   "src.vocab:7: duplicate token 'cat' (first on line 5)");
  CHECK_THROWS_MSG(Vocab::from_text("<pad>\n<s>\n<unk>\n</s>\n", "v"), DataError, "v:3: expected the special </s>");
  CHECK_THROWS_MSG(Vocab::from_text("<pad>\n<s>\n", "v"), DataError, "v: a vocabulary needs at least the 4 specials");
  CHECK_THROWS_MSG(Vocab::from_text("<pad>\n<s>\n</s>\n<unk>\n\ncat\n", "v"), DataError, "v:5: empty token");
  CHECK_THROWS_MSG(Vocab::from_text("<pad>\n<s>\n</s>\n<unk>\na b\n", "v"), DataError,
                   "v:5: token 'a b' holds whitespace");
  CHECK_THROWS_MSG(Vocab::from_text("<pad>\n<s>\n</s>\n<unk>\n<s>\n", "v"), DataError, "v:5: duplicate token '<s>'");
}

TEST_CASE("vocab files: one token a line, line N the token of id N - 1, read as every user file is") {
  const std::string path = (std::filesystem::temp_directory_path() / "gradformer_test_vocab_file.txt").string();
  auto write = [&](const std::string& text) { std::ofstream(path, std::ios::binary) << text; };
  write("\xEF\xBB\xBF<pad>\r\n<s>\r\n</s>\r\n<unk>\r\nchat\r\nle");  // a byte-order mark, Windows ends, no last end
  const Vocab vocab = Vocab::read_file(path);
  CHECK(vocab.size() == 6);
  CHECK(vocab.id("chat") == 4);
  CHECK(vocab.id("le") == 5);
  write("<pad>\n<s>\n</s>\n<unk>\nchat\n\n");  // a blank line is an empty token, not skipped
  CHECK_THROWS_MSG(Vocab::read_file(path), DataError, path + ":6: empty token");
  write("<s>\n<pad>\n</s>\n<unk>\n");
  CHECK_THROWS_MSG(Vocab::read_file(path), DataError, path + ":1: expected the special <pad>, found '<s>'");
  write("<pad>\n<s>\n</s>\n<unk>\n" + std::string(kMaxLineBytes + 1, 'x'));  // an endless line: gradformer import's
  CHECK_THROWS_MSG(Vocab::read_file(path), ReadError, path + ":5: line longer than 1048576 bytes");
  std::filesystem::remove(path);
  CHECK_THROWS_MSG(Vocab::read_file(path), DataError, path + ": cannot open for reading: No such file");
  const std::string dir = std::filesystem::temp_directory_path().string();
  CHECK_THROWS_MSG(Vocab::read_file(dir), DataError, dir + ": is a directory, not a vocabulary file");
}
