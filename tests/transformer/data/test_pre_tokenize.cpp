#include "catch.h"
#include "transformer/data/pre_tokenize.h"

using namespace gradformer;
using Pieces = std::vector<std::string>;

// Every expected split below is worked out by hand from GPT-2's pattern (the first alternative that
// matches wins) and agrees with the pattern run by Python's regex module.

TEST_CASE("pre-tokens keep the space before a word, a number or punctuation") {
  CHECK(gpt2_pre_tokens("Hello world") == Pieces{"Hello", " world"});
  CHECK(gpt2_pre_tokens("abc123 456") == Pieces{"abc", "123", " 456"});
  CHECK(gpt2_pre_tokens("1a") == Pieces{"1", "a"});
  CHECK(gpt2_pre_tokens("$100.00!!") == Pieces{"$", "100", ".", "00", "!!"});
  CHECK(gpt2_pre_tokens("hi  !?") == Pieces{"hi", " ", " !?"});
}

TEST_CASE("pre-tokens split off English contractions, lower case only") {
  CHECK(gpt2_pre_tokens("I'm don't we'll they've you're she'd it's") ==
        Pieces{"I", "'m", " don", "'t", " we", "'ll", " they", "'ve", " you", "'re", " she", "'d", " it", "'s"});
  // The pattern is case-sensitive: "'M" is punctuation, then a word.
  CHECK(gpt2_pre_tokens("I'M") == Pieces{"I", "'", "M"});
  // A contraction is tried only where a match starts: after a space, or inside punctuation, the
  // apostrophe goes with the punctuation.
  CHECK(gpt2_pre_tokens(" 's") == Pieces{" '", "s"});
  CHECK(gpt2_pre_tokens("!!'s") == Pieces{"!!'", "s"});
}

TEST_CASE("pre-tokens of whitespace: a run gives its last space to the word after it") {
  CHECK(gpt2_pre_tokens("a   b") == Pieces{"a", "  ", " b"});
  CHECK(gpt2_pre_tokens("a \n b") == Pieces{"a", " \n", " b"});
  CHECK(gpt2_pre_tokens("\t x") == Pieces{"\t", " x"});
  // Only a space joins a word: a newline before one stands alone (\s+ after \s+(?!\S) fails).
  CHECK(gpt2_pre_tokens("a\n\nb") == Pieces{"a", "\n", "\n", "b"});
  // At the end of the text the whole run is one piece.
  CHECK(gpt2_pre_tokens("x  ") == Pieces{"x", "  "});
  CHECK(gpt2_pre_tokens(" ") == Pieces{" "});
  CHECK(gpt2_pre_tokens("").empty());
}

TEST_CASE("character classes: ASCII letters, digits, the six whitespace characters, the rest other") {
  CHECK(character_class('q') == CharacterClass::Letter);
  CHECK(character_class('Q') == CharacterClass::Letter);
  CHECK(character_class('7') == CharacterClass::Number);
  for (const char32_t space : {U' ', U'\t', U'\n', U'\v', U'\f', U'\r'})
    CHECK(character_class(space) == CharacterClass::Space);
  // The file and unit separators are not White_Space, so not \s.
  CHECK(character_class(0x1C) == CharacterClass::Other);
  CHECK(character_class(0x7F) == CharacterClass::Other);
  CHECK(character_class('_') == CharacterClass::Other);
}

TEST_CASE("pre-tokens concatenate back to the text") {
  const std::string text = "It's 2024, and   we've\tgot\r\n\n  100 apples!!\v's x  ";
  std::string joined;
  for (const std::string& piece : gpt2_pre_tokens(text)) joined += piece;
  CHECK(joined == text);
}

TEST_CASE("text outside ASCII is not pre-tokenized yet: a ValueError, not a wrong split") {
  CHECK_THROWS_MSG(gpt2_pre_tokens("caf\xc3\xa9"), ValueError, "byte 195 at offset 3 is outside ASCII");
  CHECK_THROWS_MSG(character_class(0xE9), ValueError, "U+00E9 is outside ASCII");
}
