#include "catch.h"
#include "tensor/support/error.h"
#include "transformer/data/llama3_pre_tokenize.h"

using namespace gradformer;
using Pieces = std::vector<std::string>;

// Every expected split below is worked out by hand from the pattern in llama3_pre_tokenize.h: at
// each place the first alternative that matches wins, and the classes are Unicode's (\p{L} letters,
// \p{N} digits, \s whitespace).

TEST_CASE("llama3_pre_tokens cut digits in threes, qwen2_pre_tokens one by one") {
  CHECK(llama3_pre_tokens("1234567") == Pieces{"123", "456", "7"});
  CHECK(qwen2_pre_tokens("1234567") == Pieces{"1", "2", "3", "4", "5", "6", "7"});
  // A digit never takes the space before it: " 12" is whitespace, then digits.
  CHECK(llama3_pre_tokens("a 12") == Pieces{"a", " ", "12"});
  CHECK(llama3_pre_tokens("$100") == Pieces{"$", "100"});
}

TEST_CASE("llama3_pre_tokens read contractions in any case") {
  // (?i:...): 'T and 'LL are contractions; "DON" is a run of letters.
  CHECK(llama3_pre_tokens("DON'T") == Pieces{"DON", "'T"});
  CHECK(llama3_pre_tokens("I'LL") == Pieces{"I", "'LL"});
  CHECK(llama3_pre_tokens("we'Re they've") == Pieces{"we", "'Re", " they", "'ve"});
  CHECK(qwen2_pre_tokens("DON'T") == Pieces{"DON", "'T"});
  // Not a contraction ('x): the apostrophe is the one character allowed before letters.
  CHECK(llama3_pre_tokens("'xyz") == Pieces{"'xyz"});
}

TEST_CASE("llama3_pre_tokens put one non-letter before a run of letters, never a line end") {
  CHECK(llama3_pre_tokens("hello world") == Pieces{"hello", " world"});
  CHECK(llama3_pre_tokens("!abc") == Pieces{"!abc"});
  CHECK(llama3_pre_tokens("\tabc") == Pieces{"\tabc"});
  CHECK(llama3_pre_tokens("x\nabc") == Pieces{"x", "\n", "abc"});
  CHECK(llama3_pre_tokens("日本語") == Pieces{"日本語"});
  CHECK(llama3_pre_tokens("hi 日本") == Pieces{"hi", " 日本"});
}

TEST_CASE("llama3_pre_tokens of punctuation keep its space and the line ends after it") {
  CHECK(llama3_pre_tokens("hi 🙂") == Pieces{"hi", " 🙂"});
  CHECK(llama3_pre_tokens("a...\n\nb") == Pieces{"a", "...\n\n", "b"});
  CHECK(llama3_pre_tokens("a !?") == Pieces{"a", " !?"});
}

TEST_CASE("llama3_pre_tokens of whitespace: through the last line end, else all but the last space") {
  CHECK(llama3_pre_tokens("a\n\nb") == Pieces{"a", "\n\n", "b"});
  // \s*[\r\n]+ takes " \n" (backing off the space after it), which then leads "b".
  CHECK(llama3_pre_tokens("a \n b") == Pieces{"a", " \n", " b"});
  CHECK(llama3_pre_tokens("a\r\nb") == Pieces{"a", "\r\n", "b"});
  CHECK(llama3_pre_tokens(" \n\n x") == Pieces{" \n\n", " x"});
  // \s+(?!\S): of three spaces before a word it takes two; the third leads the word.
  CHECK(llama3_pre_tokens("a   b") == Pieces{"a", "  ", " b"});
  CHECK(llama3_pre_tokens("a \t b") == Pieces{"a", " \t", " b"});
  // At the end of the text nothing follows: the whole run.
  CHECK(llama3_pre_tokens("a  ") == Pieces{"a", "  "});
  CHECK(llama3_pre_tokens("a\n") == Pieces{"a", "\n"});
  CHECK(llama3_pre_tokens("").empty());
}

TEST_CASE("llama3_pre_tokens refuse text that is not UTF-8") {
  CHECK_THROWS_MSG(llama3_pre_tokens("ab\xC3"), ValueError, "not UTF-8 at offset 2");
}
