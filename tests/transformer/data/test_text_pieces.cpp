// A text read a piece at a time (transformer/data/text_pieces.h): cut only where no token straddles
// the cut, so the pieces' ids one after the other are the whole text's, for every tokenizer and
// every block size.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "catch.h"
#include "transformer/data/data_error.h"
#include "transformer/data/text_pieces.h"
#include "transformer/data/vocab.h"

using namespace gradformer;

namespace {

// `text` as a file to read from (the C library's temporary file, removed when closed).
std::unique_ptr<std::FILE, int (*)(std::FILE*)> readable_file(const std::string& text) {
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> file(std::tmpfile(), &std::fclose);
  REQUIRE(file);
  std::fwrite(text.data(), 1, text.size(), file.get());
  std::rewind(file.get());
  return file;
}

}  // namespace

TEST_CASE("text pieces: the pieces' ids are the whole text's, for every tokenizer and block size") {
  // Words, contractions, numbers, punctuation runs, runs of spaces, tabs, blank lines, a non-ASCII
  // letter beside a space: every kind of pre-token, and places to cut and places not to.
  std::string text;
  for (int i = 0; i < 30; ++i)
    text += "the cat's " + std::to_string(i * 37) + " dogs.\n\nA  b\tc \xC3\xA9 x\nfoo  bar!? 3.14 it'll\n  end";
  const Tokenizer bpe = Tokenizer::learn_bpe({text}, 320);
  const Tokenizer words(Vocab::build({{"the", "cat's", "dogs.", "A", "b", "c", "x", "foo", "bar!?"}}));
  const Tokenizer bytes = Tokenizer::bytes();
  for (const Tokenizer* tokenizer : {&bpe, &words, &bytes}) {
    INFO(tokenizer->kind_name());
    const std::vector<int64_t> whole = tokenizer->encode(text);
    for (const size_t block : {size_t{1}, size_t{3}, size_t{7}, size_t{64}, size_t{1} << 20}) {
      INFO("block " << block);
      std::vector<int64_t> ids;
      size_t expected_offset = 0, pieces = 0;
      read_text_pieces(
          readable_file(text).get(), "text", tokenizer->kind(),
          [&](std::string_view piece, size_t offset) {
            CHECK(offset == expected_offset);
            CHECK(text.compare(offset, piece.size(), piece) == 0);
            expected_offset += piece.size(), ++pieces;
            for (const int64_t id : tokenizer->encode(piece)) ids.push_back(id);
          },
          block);
      CHECK(expected_offset == text.size());
      CHECK(ids == whole);
      if (block <= 7) CHECK(pieces > 30);  // cut at least once a line
    }
  }
}

TEST_CASE("text pieces: where a cut may fall, and a text without one refused past its limit") {
  const Tokenizer bytes = Tokenizer::bytes(), words(Vocab::build({{"a"}}));
  CHECK(last_token_boundary(bytes.kind(), "ab  cd") == 6);         // bytes: anywhere
  CHECK(last_token_boundary(words.kind(), "ab\tcd ef\ngh") == 5);  // words: before a space or a tab, not a line end
  CHECK(last_token_boundary(words.kind(), "ab\tcd", 3) == 0);      // nothing from byte 3 on
  // Byte-level tokens (any kind but words and bytes: the rules are the pre-tokens').
  const Tokenizer bpe = Tokenizer::learn_bpe({std::string_view("ab cd ab cd")}, 262);
  CHECK(last_token_boundary(bpe.kind(), "ab cd") == 2);        // before the space: " cd" is the next pre-token
  CHECK(last_token_boundary(bpe.kind(), "ab\ncd") == 3);       // after the line end
  CHECK(last_token_boundary(bpe.kind(), "ab\n\ncd") == 0);     // "ab\n\n" would end in the one pre-token "\n\n"
  CHECK(last_token_boundary(bpe.kind(), "ab  cd") == 0);       // two spaces: a run of whitespace
  CHECK(last_token_boundary(bpe.kind(), "ab \xC3\xA9") == 0);  // a letter past ASCII: not looked into
  CHECK(last_token_boundary(bpe.kind(), "ab cd", 3) == 2);     // byte 3 shows the space before it starts " cd"
  CHECK(last_token_boundary(bpe.kind(), "ab cd", 4) == 0);     // nothing new past byte 4
  const std::string endless(100, 'x');
  CHECK_THROWS_MSG(
      read_text_pieces(
          readable_file(endless).get(), "standard input", words.kind(), [](std::string_view, size_t) {}, 16, 50),
      ReadError, "standard input: more than 50 bytes without a place to cut it between tokens");
}

TEST_CASE("text pieces: merges learned from pre-tokens counted a piece at a time are the whole text's") {
  // What learn-bpe does with a file: no pre-token straddles a cut, so the counts, and the merges, are
  // those of the text read whole, whatever the block.
  std::string text;
  for (int i = 0; i < 40; ++i) text += "low lower lowest newer wider " + std::to_string(i % 7) + "\nnew  widest\n\n";
  const Tokenizer whole = Tokenizer::learn_bpe({std::string_view(text)}, 300);
  for (const size_t block : {size_t{1}, size_t{5}, size_t{64}}) {
    INFO("block " << block);
    PreTokenCounts counts;
    read_text_pieces(
        readable_file(text).get(), "text", Tokenizer::Kind::Bpe,
        [&](std::string_view piece, size_t) { Tokenizer::count_pre_tokens(counts, piece); }, block);
    const Tokenizer pieces = Tokenizer::learn_bpe_from_counts(counts, 300);
    CHECK(pieces.byte_pair_encoding().merges() == whole.byte_pair_encoding().merges());
    CHECK(pieces.encode(text) == whole.encode(text));
  }
}
