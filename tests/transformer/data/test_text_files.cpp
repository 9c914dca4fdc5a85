#include <filesystem>
#include <fstream>
#include <sstream>

#include "catch.h"
#include "transformer/data/text_files.h"

using namespace gradformer;
using Catch::Matchers::Matches;
using Sentences = std::vector<std::vector<std::string>>;
using Words = std::vector<std::string>;

namespace {

Sentences sentences(const std::string& text, int64_t max_tokens = 0) {
  std::istringstream in(text);
  return parse_sentences(in, "sentences.txt", max_tokens);
}

LabelledCorpus labelled(const std::string& text, int64_t max_tokens = 0, const std::vector<std::string>& known = {}) {
  std::istringstream in(text);
  return parse_labelled(in, "labelled.tsv", max_tokens, known);
}

std::string sentences_error(const std::string& text, int64_t max_tokens = 0) {
  return test::error_message<DataError>([&] { sentences(text, max_tokens); });
}

std::string labelled_error(const std::string& text, int64_t max_tokens = 0,
                           const std::vector<std::string>& known = {}) {
  return test::error_message<DataError>([&] { labelled(text, max_tokens, known); });
}

std::vector<int64_t> label_ids(const LabelledCorpus& corpus) {
  std::vector<int64_t> ids;
  for (const LabelledSentence& example : corpus.examples) ids.push_back(example.label);
  return ids;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("gradformer_test_" + name)).string();
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

}  // namespace

// ---- sentences, one a line ------------------------------------------------------------------------

TEST_CASE("sentences are read one a line, split on runs of spaces, blank lines skipped") {
  CHECK(sentences("\xEF\xBB\xBF"
                  "le  chat   noir .\r\n\r\n   \n  un chien  \nil\n") ==
        Sentences{{"le", "chat", "noir", "."}, {"un", "chien"}, {"il"}});
  CHECK(sentences("no line end") == Sentences{{"no", "line", "end"}});
  CHECK(sentences("caf\xC3\xA9 .\n") == Sentences{{"caf\xC3\xA9", "."}});  // UTF-8 "café"
}

TEST_CASE("sentences: a line with a tab is refused, naming file, line and column, as looking like a TSV file") {
  CHECK_THAT(sentences_error("a b\n\nle chat\tthe cat\n"),
             Matches("sentences\\.txt:3: holds a tab \\(column 8\\): a file of sentences has one sentence a line, .*"
                     "looks like a TSV file \\(source<TAB>target pairs, label<TAB>sentence examples\\).*"));
  CHECK_THROWS_MSG(sentences("pos\tgood film\n"), DataError, "sentences.txt:1: holds a tab (column 4)");
  CHECK(sentences(" \t \n a \n").size() == 1);  // a line of spaces and tabs is blank, not a TSV line
}

TEST_CASE("sentences: max_tokens allows exactly that many tokens and refuses one more") {
  CHECK(sentences("a b c\nd\n", 3) == Sentences{{"a", "b", "c"}, {"d"}});
  CHECK_THAT(sentences_error("a b c\nd e f g\n", 3),
             Matches("sentences\\.txt:2: sentence has 4 tokens, more than the maximum of 3"));
  CHECK(sentences("a b c d e f g h\n", 0).size() == 1);  // 0: no limit
  CHECK_THROWS_MSG(sentences("a\n", -1), ValueError, "read_sentences: max_tokens must be 0 (no limit) or positive");
}

TEST_CASE("sentences: a line that is not UTF-8 is an error naming the line and the byte") {
  CHECK_THROWS_MSG(sentences("le chat\ncaf\xE9 noir\n"), DataError,
                   "sentences.txt:2: not valid UTF-8 (byte 0xE9 at column 4)");
}

TEST_CASE("sentences and labelled sentences: a line over 1 MiB is a ReadError naming the file and line") {
  const std::string endless(kMaxLineBytes + 1, 'x');  // a file with no line ends, say
  CHECK_THROWS_MSG(sentences("one\n" + endless), ReadError, "sentences.txt:2: line longer than 1048576 bytes");
  CHECK_THROWS_MSG(labelled("pos\tgood\n" + endless), ReadError, "labelled.tsv:2: line longer than 1048576 bytes");
  const std::string path = temp_path("sentences_long_line.txt");
  write_file(path, endless);
  CHECK_THROWS_MSG(read_sentences(path), ReadError, path + ":1: line longer than 1048576 bytes");
  CHECK_THROWS_MSG(read_labelled(path), ReadError, path + ":1: line longer than 1048576 bytes");
  std::filesystem::remove(path);
}

TEST_CASE("sentences: a file without a sentence is an error") {
  CHECK_THAT(sentences_error(""), Matches("sentences\\.txt: holds no sentence at all .*"));
  CHECK_THROWS_MSG(sentences("\n  \r\n\t\n"), DataError, "sentences.txt: holds no sentence at all");
  CHECK_THROWS_MSG(sentences("\xEF\xBB\xBF\r\n"), DataError, "sentences.txt: holds no sentence at all");
}

TEST_CASE("read_sentences reads a file and names it in its errors") {
  const std::string path = temp_path("sentences.txt");
  write_file(path,
             "\xEF\xBB\xBF"
             "one  two\r\n\r\nthree\r\n");
  CHECK(read_sentences(path) == Sentences{{"one", "two"}, {"three"}});
  CHECK_THROWS_MSG(read_sentences(path, 1), DataError, path + ":1: sentence has 2 tokens, more than the maximum of 1");
  write_file(path, "one\ttwo\n");
  CHECK_THROWS_MSG(read_sentences(path), DataError, path + ":1: holds a tab");
  std::filesystem::remove(path);
  CHECK_THROWS_MSG(read_sentences(path), DataError, path + ": cannot open for reading");
  const std::string dir = temp_path("a_directory_of_sentences");
  std::filesystem::create_directories(dir);
  CHECK_THROWS_MSG(read_sentences(dir), DataError, dir + ": is a directory, not a file of sentences");
  std::filesystem::remove(dir);
}

// ---- labelled sentences, label<TAB>sentence -------------------------------------------------------

TEST_CASE("labelled: labels in the order they first appear, each example indexing them") {
  const LabelledCorpus corpus = labelled(
      "\xEF\xBB\xBF"
      "neg\tnot  good .\r\n\r\n  pos  \t great film\r\nneutral\tok\n \t \nneg\tbad\npos\tfine\n");
  CHECK(corpus.labels == Words{"neg", "pos", "neutral"});
  CHECK(label_ids(corpus) == std::vector<int64_t>{0, 1, 2, 0, 1});
  REQUIRE(corpus.examples.size() == 5);
  CHECK(corpus.examples[0].tokens == Words{"not", "good", "."});
  CHECK(corpus.examples[1].tokens == Words{"great", "film"});  // spaces around the label and sentence dropped
  CHECK(corpus.examples[4].tokens == Words{"fine"});
  CHECK(labelled("b\tx\na\ty\n").labels == Words{"b", "a"});  // not sorted
}

TEST_CASE("labelled: each malformed line is an error naming file, line and what is wrong") {
  CHECK_THAT(labelled_error("a\tx\nno tab here\n"), Matches("labelled\\.tsv:2: no tab: expected label<TAB>sentence"));
  CHECK_THROWS_MSG(labelled("a\tx\tb\n"), DataError, "labelled.tsv:1: more than one tab: expected label<TAB>sentence");
  CHECK_THAT(labelled_error("a\tx\n  \ty\n"), Matches("labelled\\.tsv:2: empty label: expected label<TAB>sentence"));
  CHECK_THAT(labelled_error("\n\nvery good\tfilm\n"),
             Matches("labelled\\.tsv:3: label 'very good' holds whitespace: a label is one word"));
  CHECK_THAT(labelled_error("a\tx\nb\t  \n"), Matches("labelled\\.tsv:2: empty sentence"));
  CHECK_THROWS_MSG(labelled("a\tx\nb\tca\xFF\n"), DataError, "labelled.tsv:2: not valid UTF-8 (byte 0xFF at column 5)");
  CHECK_THROWS_MSG(labelled("a\tx\n", -1), ValueError, "read_labelled: max_tokens must be 0 (no limit) or positive");
}

TEST_CASE("labelled: max_tokens allows exactly that many tokens and refuses one more") {
  CHECK(labelled("a\tw1 w2\nb\tw3\n", 2).examples.size() == 2);
  CHECK_THAT(labelled_error("a\tw1 w2\nb\tw1 w2 w3\n", 2),
             Matches("labelled\\.tsv:2: sentence has 3 tokens, more than the maximum of 2"));
}

TEST_CASE("labelled: a file without an example is an error, and so is a training file of one class") {
  CHECK_THAT(labelled_error(""), Matches("labelled\\.tsv: holds no labelled sentence at all .*"));
  CHECK_THROWS_MSG(labelled("\r\n \n"), DataError, "labelled.tsv: holds no labelled sentence at all");
  CHECK_THAT(labelled_error("pos\tgood\npos\tfine\n"),
             Matches("labelled\\.tsv: every sentence has the label 'pos': a classifier needs at least two classes"));
  // Read with the training labels, one class is enough: a test file may hold one.
  const LabelledCorpus test = labelled("pos\tgood\npos\tfine\n", 0, {"neg", "pos"});
  CHECK(test.labels == Words{"neg", "pos"});
  CHECK(label_ids(test) == std::vector<int64_t>{1, 1});
}

TEST_CASE("labelled with known labels: examples index the known labels, another label is an error") {
  const std::vector<std::string> known = {"neutral", "pos", "neg"};
  const LabelledCorpus corpus = labelled("neg\tbad\npos\tgood\nneg\tawful\n", 0, known);
  CHECK(corpus.labels == known);  // the known order, not the file's; "neutral" kept though absent
  CHECK(label_ids(corpus) == std::vector<int64_t>{2, 1, 2});
  CHECK_THAT(labelled_error("pos\tgood\n\nmixed\tso so\n", 0, known),
             Matches("labelled\\.tsv:3: label 'mixed' is not one of the training labels \\(neutral, pos, neg\\)"));
  CHECK_THROWS_MSG(labelled("a\tx\n", 0, {"a", ""}), ValueError, "read_labelled: known label 2 '' is empty");
  CHECK_THROWS_MSG(labelled("a\tx\n", 0, {"a b"}), ValueError, "known label 1 'a b' is empty or holds whitespace");
  CHECK_THROWS_MSG(labelled("a\tx\n", 0, {"a", "b", "a"}), ValueError, "read_labelled: known label 'a' is given twice");
}

TEST_CASE("read_labelled reads a file and names it in its errors") {
  const std::string path = temp_path("labelled.tsv");
  write_file(path,
             "\xEF\xBB\xBF"
             "neg\tnot good\r\npos\tgood\r\n\r\n");
  const LabelledCorpus corpus = read_labelled(path);
  CHECK(corpus.labels == Words{"neg", "pos"});
  CHECK(label_ids(corpus) == std::vector<int64_t>{0, 1});
  CHECK(corpus.examples[0].tokens == Words{"not", "good"});
  CHECK(label_ids(read_labelled(path, 0, {"pos", "neg"})) == std::vector<int64_t>{1, 0});
  CHECK_THROWS_MSG(read_labelled(path, 1), DataError, path + ":1: sentence has 2 tokens, more than the maximum of 1");
  CHECK_THROWS_MSG(read_labelled(path, 0, {"pos"}), DataError,
                   path + ":1: label 'neg' is not one of the training labels (pos)");
  std::filesystem::remove(path);
  CHECK_THROWS_MSG(read_labelled(path), DataError, path + ": cannot open for reading");
  const std::string dir = temp_path("a_directory_of_labelled_sentences.tsv");
  std::filesystem::create_directories(dir);
  CHECK_THROWS_MSG(read_labelled(dir), DataError, dir + ": is a directory, not a TSV file of labelled sentences");
  std::filesystem::remove(dir);
}
