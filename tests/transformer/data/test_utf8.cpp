// transformer/data/utf8.h: strict UTF-8 as Python reads it. The hand-written cases below follow
// the Unicode Standard's table of well-formed byte sequences (utf8.h); unicode_reference/
// utf8_cases.json holds byte strings with what Python's decoder makes of them (make_cases.py).

#include "catch.h"
#include "tensor/support/json.h"
#include "tensor/support/utf8.h"
#include "transformer/data/data_error.h"
#include "transformer/data/line_reader.h"
#include "transformer/data/pre_tokenize.h"
#include "transformer/data/utf8.h"

using namespace gradformer;

namespace {

const std::string kDirectory = std::string(GRADFORMER_SOURCE_DIR) + "/tests/transformer/data/unicode_reference/";

std::string from_hex(const std::string& hex) {
  std::string bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) bytes += static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16));
  return bytes;
}

std::string utf8(char32_t code_point) {
  std::string out;
  append_utf8(out, code_point);
  return out;
}

}  // namespace

TEST_CASE("utf8: code points encode to the bytes of the Unicode Standard's table") {
  CHECK(utf8(U'A') == "A");
  CHECK(utf8(0) == std::string(1, '\0'));
  CHECK(utf8(0x80) == "\xC2\x80");
  CHECK(utf8(0xE9) == "\xC3\xA9");  // é
  CHECK(utf8(0x7FF) == "\xDF\xBF");
  CHECK(utf8(0x800) == "\xE0\xA0\x80");
  CHECK(utf8(0x65E5) == "\xE6\x97\xA5");  // 日
  CHECK(utf8(0xFFFD) == "\xEF\xBF\xBD");
  CHECK(utf8(0x10000) == "\xF0\x90\x80\x80");
  CHECK(utf8(0x1F600) == "\xF0\x9F\x98\x80");  // 😀
  CHECK(utf8(0x10FFFF) == "\xF4\x8F\xBF\xBF");
  CHECK_THROWS_MSG(utf8(0xD800), ValueError, "append_utf8: U+D800 is a surrogate");
  CHECK_THROWS_MSG(utf8(0x110000), ValueError, "append_utf8: U+110000 is above U+10FFFF");
}

TEST_CASE("utf8: every code point reads back from its bytes, with its length") {
  for (char32_t c = 0; c <= 0x10FFFF; ++c) {
    if (c >= 0xD800 && c <= 0xDFFF) continue;
    const std::string bytes = utf8(c);
    const Utf8Step step = read_utf8(bytes, 0);
    if (!step.valid || step.code_point != c || step.length != bytes.size()) {
      FAIL("U+" << std::hex << static_cast<unsigned>(c) << " does not read back");
    }
  }
  const Utf8Step step = read_utf8("x\xE6\x97\xA5y", 1);
  CHECK(step.valid);
  CHECK(step.code_point == 0x65E5);
  CHECK(step.length == 3);
}

TEST_CASE("utf8: bytes that are not UTF-8, each kind named with its byte and offset") {
  const auto error = [](std::string_view bytes, size_t offset) {
    try {
      decode_utf8(bytes, offset, "op");
    } catch (const ValueError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error("ab\x80", 2) ==
        "op: not UTF-8 at offset 2: byte 0x80 is a continuation byte, which cannot start a character");
  CHECK(error("\xC0\x80", 0) ==
        "op: not UTF-8 at offset 0: byte 0xC0 never occurs in UTF-8 (it could only start an overlong form)");
  CHECK(error("\xF5\x80\x80\x80", 0) ==
        "op: not UTF-8 at offset 0: byte 0xF5 never occurs in UTF-8 (it would start a code point above U+10FFFF)");
  CHECK(error("x\xE6\x97", 1) ==
        "op: not UTF-8 at offset 1: byte 0xE6 starts a 3-byte sequence that the end of the text cuts short");
  CHECK(error("\xE0\x80\x80", 0) ==
        "op: not UTF-8 at offset 0: byte 0xE0 followed by byte 0x80 would be an overlong form (a code point that has a "
        "shorter one)");
  CHECK(error("\xF0\x8F\xBF\xBF", 0) ==
        "op: not UTF-8 at offset 0: byte 0xF0 followed by byte 0x8F would be an overlong form (a code point that has a "
        "shorter one)");
  CHECK(error("\xED\xA0\x80", 0) ==
        "op: not UTF-8 at offset 0: byte 0xED followed by byte 0xA0 would be a surrogate (U+D800..U+DFFF)");
  CHECK(error("\xF4\x90\x80\x80", 0) ==
        "op: not UTF-8 at offset 0: byte 0xF4 followed by byte 0x90 would be a code point above U+10FFFF");
  CHECK(error("\xF0\x9F\x98x", 0) ==
        "op: not UTF-8 at offset 0: byte 0xF0 starts a 4-byte sequence, but byte 0x78 at offset 3 is not a "
        "continuation byte (0x80..0xBF)");
  CHECK(error("\xC3\xA9", 0) == "no error");
}

TEST_CASE("utf8: each maximal invalid subpart becomes one U+FFFD") {
  const std::string fffd = "\xEF\xBF\xBD";
  CHECK(utf8_replace_invalid("caf\xC3\xA9") == "caf\xC3\xA9");
  CHECK(utf8_replace_invalid("a\x80"
                             "b") == "a" + fffd + "b");
  CHECK(utf8_replace_invalid("\xE0\x80\x80") == fffd + fffd + fffd);  // E0 cannot be followed by 80
  CHECK(utf8_replace_invalid("\xF0\x9F\x98x") == fffd + "x");         // a 4-byte sequence cut after 3
  CHECK(utf8_replace_invalid("\xF4\x90\x80\x80") == fffd + fffd + fffd + fffd);
  CHECK(utf8_replace_invalid("\xED\xA0\x80") == fffd + fffd + fffd);
  CHECK(utf8_replace_invalid("\xE6\x97") == fffd);
  CHECK(utf8_replace_invalid("").empty());
}

// Validity is tensor/support/utf8.h's invalid_utf8_at, the library's one validator: here it, read_utf8 and
// gpt2_pre_tokens must all stop where Python's decoder does.
TEST_CASE("utf8: validity, the first error and the replacement agree with Python's decoder") {
  const Json parsed = Json::parse(read_whole_file(kDirectory + "utf8_cases.json"));
  REQUIRE(parsed.items().size() == 466);
  int invalid = 0;
  for (const Json& item : parsed.items()) {
    const std::string bytes = from_hex(item.members().at(0).second.text());
    const std::string replaced = from_hex(item.members().at(1).second.text());
    const Json& error = item.members().at(2).second;
    INFO("bytes: " << item.members().at(0).second.text());
    CHECK(utf8_replace_invalid(bytes) == replaced);
    CHECK(invalid_utf8_at(bytes).has_value() == !error.items().empty());
    if (error.items().empty()) {
      CHECK_NOTHROW(gpt2_pre_tokens(bytes));
      continue;
    }
    ++invalid;
    // The first error: where Python's strict decoder stops, and the bytes it names (end - start),
    // which are the maximal invalid subpart that errors='replace' turns into one U+FFFD.
    const size_t start = static_cast<size_t>(error.items().at(0).value());
    const size_t end = static_cast<size_t>(error.items().at(1).value());
    size_t offset = 0;
    while (offset < bytes.size() && read_utf8(bytes, offset).valid) offset += read_utf8(bytes, offset).length;
    CHECK(offset == start);
    CHECK(invalid_utf8_at(bytes) == start);
    CHECK(read_utf8(bytes, offset).length == end - start);
    CHECK_THROWS_MSG(decode_utf8(bytes, offset, "op"), ValueError, message("op: not UTF-8 at offset ", start, ": "));
    CHECK_THROWS_MSG(gpt2_pre_tokens(bytes), ValueError, message("gpt2_pre_tokens: not UTF-8 at offset ", start, ": "));
  }
  CHECK(invalid == 317);
}

TEST_CASE("utf8: printable escapes what a terminal would act on, hide or cut, and keeps the rest") {
  using namespace std::string_literals;
  CHECK(printable("a\0b"s) == "a\\0b");               // a NUL would end the message
  CHECK(printable("ok\rlie") == "ok\\rlie");          // a carriage return would overwrite it
  CHECK(printable("\x1b[31mred") == "\\x1B[31mred");  // an escape sequence would colour the terminal
  CHECK(printable("del\x7f") == "del\\x7F");
  CHECK(printable("\xEF\xBB\xBFhead") == "\\u{FEFF}head");  // a byte order mark, invisible
  CHECK(printable("cut \xEF") == "cut \\xEF");              // not UTF-8: the byte as it is
  CHECK(printable("\xC3\xA9t\xC3\xA9 \xE2\x80\xAEtxt.exe") == "\xC3\xA9t\xC3\xA9 \\u{202E}txt.exe");  // é kept
  CHECK(printable("\xC2\x85") == "\\u{0085}");  // a C1 control (next line)
  CHECK(printable("soft\xC2\xADhyphen \xE2\x81\xA0joined \xF3\xA0\x80\x81tag") ==
        "soft\\u{00AD}hyphen \\u{2060}joined \\u{E0001}tag");  // invisible: soft hyphen, word joiner, a tag
  CHECK(printable("tab\tand\nline") == "tab\tand\nline");
  CHECK(printable("\xE4\xB8\xAD \xF0\x9F\x98\x80 \xC4\xA0") == "\xE4\xB8\xAD \xF0\x9F\x98\x80 \xC4\xA0");  // 中 😀 Ġ
  const std::string hostile = "\0\r\x1b\xEF\xBB\xBF\xFF\xE2\x80\x8B"s;
  CHECK(printable(printable(hostile)) == printable(hostile));  // escaping twice changes nothing
}

TEST_CASE("utf8: every library error's message is printable, whatever bytes it quotes") {
  using namespace std::string_literals;
  const DataError error(message("train.txt:3: token '", "a\0b\rc"s, "' is unknown"));
  CHECK(std::string(error.what()) == "train.txt:3: token 'a\\0b\\rc' is unknown");
  const ValueError from_c_string("byte \xFF here");
  CHECK(std::string(from_c_string.what()) == "byte \\xFF here");
}
