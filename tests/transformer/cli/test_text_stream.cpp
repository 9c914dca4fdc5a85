// The stream of generated text (transformer/cli/text_stream.h): whatever the cuts between the pieces
// of bytes, what it gives is the whole text decoded at once (utf8_replace_invalid), and it gives a
// character as soon as its last byte arrives.
#include <random>
#include <string>
#include <vector>

#include "catch.h"
#include "transformer/cli/text_stream.h"
#include "transformer/data/utf8.h"

using namespace gradformer;

TEST_CASE("text stream: a character split between pieces is given whole, once its last byte comes") {
  Utf8Stream s;
  CHECK(s.add("caf") == "caf");
  CHECK(s.add("\xC3") == "");  // é's first byte: held back
  CHECK(s.add("\xA9 \xE6\x97") == "\xC3\xA9 ");
  CHECK(s.add("\xA5") == "\xE6\x97\xA5");  // 日
  CHECK(s.add("\xF0\x9F\x98") == "");
  CHECK(s.add("\x80!") == "\xF0\x9F\x98\x80!");  // 😀
  CHECK(s.finish() == "");
}

TEST_CASE("text stream: invalid bytes and an unfinished end become U+FFFD as a whole decode gives them") {
  Utf8Stream s;
  CHECK(s.add("a\x80") == "a\xEF\xBF\xBD");  // a lone continuation byte
  CHECK(s.add("\xE0") == "");
  CHECK(s.add("\x80z") == "\xEF\xBF\xBD\xEF\xBF\xBDz");  // E0 80: an overlong start, then 80 alone
  CHECK(s.add("\xE6\x97") == "");
  CHECK(s.finish() == "\xEF\xBF\xBD");  // cut short at the end
}

TEST_CASE("text stream: any cuts of any bytes give the bytes decoded at once") {
  std::mt19937 random(5);
  // Bytes that make characters of each length, invalid sequences and their fragments.
  const std::vector<std::string> parts{"a",       " ",        "\xC3\xA9", "\xE6\x97\xA5", "\xF0\x9F\x98\x80", "\x80",
                                       "\xC3",    "\xE6\x97", "\xF0\x9F", "\xE0\x80",     "\xED\xA0\x80",     "\xFF",
                                       "\xC0\xAF"};
  for (int trial = 0; trial < 300; ++trial) {
    std::string bytes;
    for (int i = 0; i < 12; ++i) bytes += parts[random() % parts.size()];
    Utf8Stream s;
    std::string given;
    for (size_t at = 0; at < bytes.size();) {
      const size_t n = 1 + random() % 4;
      given += s.add(std::string_view(bytes).substr(at, n));
      at += n;
    }
    given += s.finish();
    INFO("trial " << trial);
    CHECK(given == utf8_replace_invalid(bytes));
  }
}
