#include <algorithm>
#include <fstream>
#include <sstream>

#include "catch.h"
#include "tensor/support/json.h"
#include "transformer/data/pre_tokenize.h"

using namespace gradformer;
using Pieces = std::vector<std::string>;

// Every expected split below is worked out by hand from GPT-2's pattern (the first alternative that
// matches wins) and the Unicode Character Database's classes, and agrees with the pattern run by
// Python's regex module. unicode_reference/classes.json holds that module's classes of the code
// points where the class changes and of random ones (make_cases.py there wrote it).

TEST_CASE("gpt2_pre_tokens keep the space before a word, a number or punctuation") {
  CHECK(gpt2_pre_tokens("Hello world") == Pieces{"Hello", " world"});
  CHECK(gpt2_pre_tokens("abc123 456") == Pieces{"abc", "123", " 456"});
  CHECK(gpt2_pre_tokens("1a") == Pieces{"1", "a"});
  CHECK(gpt2_pre_tokens("$100.00!!") == Pieces{"$", "100", ".", "00", "!!"});
  CHECK(gpt2_pre_tokens("hi  !?") == Pieces{"hi", " ", " !?"});
}

TEST_CASE("gpt2_pre_tokens split off English contractions, lower case only") {
  CHECK(gpt2_pre_tokens("I'm don't we'll they've you're she'd it's") ==
        Pieces{"I", "'m", " don", "'t", " we", "'ll", " they", "'ve", " you", "'re", " she", "'d", " it", "'s"});
  // The pattern is case-sensitive: "'M" is punctuation, then a word.
  CHECK(gpt2_pre_tokens("I'M") == Pieces{"I", "'", "M"});
  // A contraction is tried only where a match starts: after a space, or inside punctuation, the
  // apostrophe goes with the punctuation.
  CHECK(gpt2_pre_tokens(" 's") == Pieces{" '", "s"});
  CHECK(gpt2_pre_tokens("!!'s") == Pieces{"!!'", "s"});
}

TEST_CASE("gpt2_pre_tokens of whitespace: a run gives its last space to the word after it") {
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

TEST_CASE("gpt2_pre_tokens character classes: ASCII letters, digits, the six whitespace characters, the rest other") {
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

TEST_CASE("gpt2_pre_tokens concatenate back to the text") {
  const std::string text = "It's 2024, and   we've\tgot\r\n\n  100 apples!!\v's x  ";
  std::string joined;
  for (const std::string& piece : gpt2_pre_tokens(text)) joined += piece;
  CHECK(joined == text);
}

TEST_CASE("gpt2_pre_tokens character classes beyond ASCII, from the Unicode Character Database") {
  // Letters: Ll, Lu, Lt, Lm, Lo, in every plane.
  for (const char32_t letter : {0xE9, 0xDF, 0x1C5, 0x2B0, 0xAA, 0xB5, 0x3B1, 0x416, 0x5D0, 0x627, 0x65E5, 0x30C6,
                                0xD55C, 0x1D518, 0x20000, 0x2F800, 0x3134A}) {
    INFO("U+" << std::hex << static_cast<unsigned>(letter));
    CHECK(character_class(letter) == CharacterClass::Letter);
  }
  // Numbers: Nd (Arabic-Indic three, Devanagari one, full-width zero), Nl (Roman twelve), No (½, ², ①).
  for (const char32_t number : {0x663, 0x967, 0xFF10, 0x216B, 0xBD, 0xB2, 0x2460, 0x1D7D9}) {
    INFO("U+" << std::hex << static_cast<unsigned>(number));
    CHECK(character_class(number) == CharacterClass::Number);
  }
  // White_Space beyond ASCII: next line, no-break space, Ogham space, en quad .. hair space, line and
  // paragraph separators, narrow no-break, medium mathematical and ideographic space.
  for (const char32_t space : {0x85, 0xA0, 0x1680, 0x2000, 0x2003, 0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000}) {
    INFO("U+" << std::hex << static_cast<unsigned>(space));
    CHECK(character_class(space) == CharacterClass::Space);
  }
  // Other: combining acute, ×, ÷, zero-width space and joiner, Mongolian vowel separator (no longer
  // White_Space), the byte order mark, emoji, a private-use character, U+FFFD, the last code point,
  // and values past it.
  for (const char32_t other :
       std::initializer_list<char32_t>{0x301, 0xD7, 0xF7, 0x200B, 0x200D, 0x180E, 0xFEFF, 0x1F600, 0x1F3FD, 0xE000,
                                       0xFFFD, 0xE0001, 0x10FFFF, 0x110000, 0xFFFFFFFFu}) {
    INFO("U+" << std::hex << static_cast<unsigned>(other));
    CHECK(character_class(other) == CharacterClass::Other);
  }
}

TEST_CASE("gpt2_pre_tokens character classes agree with Python's regex module") {
  std::ifstream in(std::string(GRADFORMER_SOURCE_DIR) + "/tests/transformer/data/unicode_reference/classes.json");
  REQUIRE(in);
  std::ostringstream text;
  text << in.rdbuf();
  const Json parsed = Json::parse(text.str());
  const std::vector<std::pair<std::string, CharacterClass>> names = {{"Letter", CharacterClass::Letter},
                                                                     {"Number", CharacterClass::Number},
                                                                     {"Space", CharacterClass::Space},
                                                                     {"Other", CharacterClass::Other}};
  size_t checked = 0;
  for (const auto& [name, expected] : parsed.members()) {
    const auto known = std::find_if(names.begin(), names.end(), [&](const auto& n) { return n.first == name; });
    REQUIRE(known != names.end());
    for (const Json& code_point : expected.items()) {
      const auto c = static_cast<char32_t>(code_point.value());
      if (character_class(c) != known->second) FAIL("U+" << std::hex << static_cast<unsigned>(c) << " is not " << name);
      ++checked;
    }
  }
  CHECK(checked == 8071);
}

TEST_CASE("gpt2_pre_tokens of text beyond ASCII") {
  // A letter with a combining mark is a letter then Other: the mark is not \p{L}.
  CHECK(gpt2_pre_tokens("caf\xC3\xA9 na\xC3\xAFve") == Pieces{"caf\xC3\xA9", " na\xC3\xAFve"});
  CHECK(gpt2_pre_tokens("cafe\xCC\x81!") == Pieces{"cafe", "\xCC\x81!"});
  CHECK(gpt2_pre_tokens("\xE6\x97\xA5\xE6\x9C\xAC \xE8\xAA\x9E") ==
        Pieces{"\xE6\x97\xA5\xE6\x9C\xAC", " \xE8\xAA\x9E"});
  // Numbers of other scripts run together with each other, not with letters.
  CHECK(gpt2_pre_tokens("\xD9\xA3\xC2\xBD"
                        "x\xC2\xB2") == Pieces{"\xD9\xA3\xC2\xBD", "x", "\xC2\xB2"});
  // Emoji are Other: a family joined by U+200D, a skin tone, and flags are one run of Other.
  CHECK(gpt2_pre_tokens("hi \xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD\xF0\x9F\x87\xAB\xF0\x9F\x87\xB7") ==
        Pieces{"hi", " \xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD\xF0\x9F\x87\xAB\xF0\x9F\x87\xB7"});
  CHECK(gpt2_pre_tokens("a\xE2\x80\x8D"
                        "b") == Pieces{"a", "\xE2\x80\x8D", "b"});
}

TEST_CASE("gpt2_pre_tokens of Unicode spaces: only U+0020 joins the word after it") {
  const std::string nbsp = "\xC2\xA0", em = "\xE2\x80\x83", ideographic = "\xE3\x80\x80", next_line = "\xC2\x85";
  // No-break space is \s, but ' ?' is U+0020 only: it stands alone before a word.
  CHECK(gpt2_pre_tokens("a" + nbsp + "b") == Pieces{"a", nbsp, "b"});
  CHECK(gpt2_pre_tokens(nbsp + "word") == Pieces{nbsp, "word"});
  // A run of spaces of any kind gives its last character to the word only if it is U+0020.
  CHECK(gpt2_pre_tokens("a" + em + " b") == Pieces{"a", em, " b"});
  CHECK(gpt2_pre_tokens("a " + em + "b") == Pieces{"a", " ", em, "b"});
  CHECK(gpt2_pre_tokens(ideographic + ideographic + "x") == Pieces{ideographic, ideographic, "x"});
  CHECK(gpt2_pre_tokens("x" + next_line + "y" + nbsp) == Pieces{"x", next_line, "y", nbsp});
  CHECK(gpt2_pre_tokens(" \t" + em + "\n") == Pieces{" \t" + em + "\n"});
  // U+001C and U+180E are not \s: punctuation-like Other.
  CHECK(gpt2_pre_tokens("a \x1C"
                        "b") == Pieces{"a", " \x1C", "b"});
  CHECK(gpt2_pre_tokens("a \xE1\xA0\x8E"
                        "b") == Pieces{"a", " \xE1\xA0\x8E", "b"});
}

TEST_CASE("gpt2_pre_tokens: contractions are the ASCII apostrophe and lower case, beside any letters") {
  CHECK(gpt2_pre_tokens("caf\xC3\xA9's") == Pieces{"caf\xC3\xA9", "'s"});
  CHECK(gpt2_pre_tokens("\xC3\xA9'll") == Pieces{"\xC3\xA9", "'ll"});
  CHECK(gpt2_pre_tokens("caf\xC3\xA9'S") == Pieces{"caf\xC3\xA9", "'", "S"});
  // U+2019, the typographic apostrophe, is punctuation.
  CHECK(gpt2_pre_tokens("don\xE2\x80\x99t") == Pieces{"don", "\xE2\x80\x99", "t"});
  CHECK(gpt2_pre_tokens("'s\xC3\xA9") == Pieces{"'s", "\xC3\xA9"});
}

TEST_CASE("gpt2_pre_tokens: text that is not UTF-8 is a ValueError naming the byte and its offset") {
  CHECK_THROWS_MSG(
      gpt2_pre_tokens("caf\xC3"), ValueError,
      "gpt2_pre_tokens: not UTF-8 at offset 3: byte 0xC3 starts a 2-byte sequence that the end of the text cuts short");
  CHECK_THROWS_MSG(gpt2_pre_tokens("ab \xFF"), ValueError, "not UTF-8 at offset 3: byte 0xFF never occurs in UTF-8");
  CHECK_THROWS_MSG(gpt2_pre_tokens("x\xED\xA0\x80"), ValueError,
                   "at offset 1: byte 0xED followed by byte 0xA0 would be a surrogate");
  // The first bad byte is named, wherever the pattern is when it meets it.
  CHECK_THROWS_MSG(gpt2_pre_tokens("a \x80 \xFF"), ValueError, "at offset 2: byte 0x80 is a continuation byte");
}
