#include <filesystem>
#include <fstream>
#include <sstream>

#include "catch.h"
#include "tensor/support/files.h"
#include "transformer/data/tsv.h"

using namespace gradformer;

namespace {

std::vector<SentencePair> parse(const std::string& text, int64_t max_tokens = 0) {
  std::istringstream in(text);
  return parse_tsv(in, "corpus.tsv", max_tokens);
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("gradformer_test_" + name)).string();
}

}  // namespace

TEST_CASE("split_words splits on runs of spaces and tabs") {
  CHECK(split_words("  le  chat\tnoir ") == std::vector<std::string>{"le", "chat", "noir"});
  CHECK(split_words("   ").empty());
  CHECK(join_words({"the", "cat", "."}) == "the cat .");
}

TEST_CASE("tsv reads pairs of whitespace-tokenised sentences") {
  const auto pairs = parse("le chat .\tthe cat .\r\nun  chien\ta dog\n");
  REQUIRE(pairs.size() == 2);
  CHECK(pairs[0].source == std::vector<std::string>{"le", "chat", "."});
  CHECK(pairs[0].target == std::vector<std::string>{"the", "cat", "."});
  CHECK(pairs[1].source == std::vector<std::string>{"un", "chien"});
  CHECK(pairs[1].target == std::vector<std::string>{"a", "dog"});
  CHECK(parse("\xEF\xBB\xBF"
              "a\tb\n")[0]
            .source == std::vector<std::string>{"a"});  // byte-order mark
}

TEST_CASE("tsv errors name the file and line") {
  CHECK_THROWS_MSG(parse("a\tb\nno tab here\n"), DataError, "corpus.tsv:2: no tab");
  CHECK_THROWS_MSG(parse("a\tb\tc\n"), DataError, "corpus.tsv:1: more than one tab");
  CHECK_THROWS_MSG(parse("a\tb\n \tb\n"), DataError, "corpus.tsv:2: empty source sentence");
  CHECK_THROWS_MSG(parse("a\tb\nc\t\n"), DataError, "corpus.tsv:2: empty target sentence");
  CHECK_THROWS_MSG(parse("a b c\tx\n", 2), DataError,
                   "corpus.tsv:1: source sentence has 3 tokens, more than the maximum of 2");
  CHECK_THROWS_MSG(parse("a\tx y z\n", 2), DataError, "corpus.tsv:1: target sentence has 3 tokens");
  CHECK(parse("a b\tx y\n", 2).size() == 1);
  CHECK_THROWS_MSG(parse(""), DataError, "corpus.tsv: no sentence pairs");
  CHECK_THROWS_MSG(parse("a\tb\n", -1), ValueError, "max_tokens");
}

TEST_CASE("tsv skips blank lines, the usual trailing one included, and counts lines as a user does") {
  CHECK(parse("a\tb\n\n").size() == 1);
  CHECK(parse("a\tb\r\n\r\n  \t \nc\td\n\n").size() == 2);
  CHECK_THROWS_MSG(parse("\n\na\tb\nno tab\n"), DataError, "corpus.tsv:4: no tab");  // blank lines still count
  CHECK_THROWS_MSG(parse("\n \n"), DataError, "corpus.tsv: no sentence pairs");
}

TEST_CASE("tsv refuses text that is not UTF-8 where it is read, naming the line and the byte") {
  // Latin-1 "é" (0xE9) where UTF-8 wants two bytes: once caught only when the checkpoint was saved
  CHECK_THROWS_MSG(parse("le chat\tthe cat\ncaf\xE9\tcoffee\n"), DataError,
                   "corpus.tsv:2: not valid UTF-8 (byte 0xE9 at column 4); save the file as UTF-8");
  CHECK(parse("caf\xC3\xA9\tcoffee\n")[0].source == std::vector<std::string>{"caf\xC3\xA9"});  // UTF-8 "café"
  CHECK_THROWS_MSG(parse("a\tb\xC0\xAF\n"), DataError,
                   "corpus.tsv:1: not valid UTF-8 (byte 0xC0 at column 4)");  // overlong
}

TEST_CASE("tsv lines: one entry per line of the file, nothing for a blank or tab-only one") {
  std::istringstream in("a\tb\n\n \t \nc d\te\r\n\t\n");
  const std::vector<std::optional<SentencePair>> lines = parse_tsv_lines(in, "five.tsv");
  REQUIRE(lines.size() == 5);
  CHECK(lines[0] == SentencePair{{"a"}, {"b"}});
  CHECK_FALSE(lines[1].has_value());
  CHECK_FALSE(lines[2].has_value());
  CHECK(lines[3] == SentencePair{{"c", "d"}, {"e"}});
  CHECK_FALSE(lines[4].has_value());
  std::istringstream blank("\n\t\n");
  CHECK_THROWS_MSG(parse_tsv_lines(blank, "blank.tsv"), DataError, "blank.tsv: no sentence pairs");
  std::istringstream bad("a\tb\n\nno tab\n");
  CHECK_THROWS_MSG(parse_tsv_lines(bad, "bad.tsv"), DataError, "bad.tsv:3: no tab");
}

TEST_CASE("tsv: a line over 1 MiB is a ReadError naming the file and line") {
  CHECK_THROWS_MSG(parse("a\tb\n" + std::string(kMaxLineBytes + 1, 'x')), ReadError,
                   "corpus.tsv:2: line longer than 1048576 bytes");
  CHECK(parse("a\t" + std::string(kMaxLineBytes - 2, 'x') + "\n")[0].target[0].size() == kMaxLineBytes - 2);
  const std::string path = temp_path("tsv_long_line.tsv");
  std::ofstream(path, std::ios::binary) << "a\tb\n" << std::string(kMaxLineBytes + 1, 'x');
  CHECK_THROWS_MSG(read_tsv_lines(path), ReadError, path + ":2: line longer than 1048576 bytes");
  CHECK_THROWS_MSG(read_tsv(path), ReadError, path + ":2: line longer than 1048576 bytes");
  std::filesystem::remove(path);
}

TEST_CASE("tsv reading a directory says so") {
  const std::string dir = temp_path("a_directory.tsv");
  std::filesystem::create_directories(dir);
  CHECK_THROWS_MSG(read_tsv(dir), DataError,
                   dir + ": is a directory, not a TSV file");  // was "read failed after line 0"
  std::filesystem::remove(dir);
}

TEST_CASE("tsv reading a missing file names the file") {
  const std::string path = temp_path("does_not_exist.tsv");
  std::filesystem::remove(path);
  CHECK_THROWS_MSG(read_tsv(path), DataError, path + ": cannot open for reading");
}

TEST_CASE("tsv written pairs read back unchanged") {
  const std::vector<SentencePair> pairs = {{{"le", "chat", "."}, {"the", "cat", "."}}, {{"x"}, {"y", "z"}}};
  const std::string path = temp_path("round_trip.tsv");
  write_tsv(path, pairs);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str() == "le chat .\tthe cat .\nx\ty z\n");
  CHECK(read_tsv(path) == pairs);
  CHECK_THROWS_MSG(read_tsv(path, 2), DataError, path + ":1: source sentence has 3 tokens");
  std::filesystem::remove(path);
  CHECK_THROWS_MSG(write_tsv(path, {{{"a\tb"}, {"c"}}}), DataError,
                   "pair 1 holds an empty token or one with whitespace");
  CHECK_THROWS_MSG(write_tsv(path, {{{"a"}, {}}}), DataError, "pair 1 has an empty side");
  // Read back, the mark would be gone: refused, and nothing written.
  CHECK_THROWS_MSG(
      write_tsv(path, {{{"\xEF\xBB\xBFword", "b"}, {"c"}}}), DataError,
      "write_tsv: pair 1's first token starts with a UTF-8 byte-order mark (EF BB BF), which reading strips");
  CHECK_THROWS_MSG(write_tsv(path, {{{"\xEF\xBB\xBF"}, {"c"}}}), DataError,
                   "pair 1's first token starts with a UTF-8 byte-order mark");
  CHECK(!std::filesystem::exists(path));
  // Anywhere else it reads back unchanged.
  const std::vector<SentencePair> marked = {{{"a"},
                                             {"\xEF\xBB\xBF"
                                              "c"}},
                                            {{"\xEF\xBB\xBF"
                                              "d"},
                                             {"e"}}};
  write_tsv(path, marked);
  CHECK(read_tsv(path) == marked);
  std::filesystem::remove(path);
  CHECK_THROWS_MSG(write_tsv(temp_path("no_such_dir/x.tsv"), pairs), OutputError,
                   "x.tsv: cannot create the temporary file");
}
