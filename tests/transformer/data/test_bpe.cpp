#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <thread>

#include "catch.h"
#include "transformer/data/bpe.h"
#include "transformer/data/pre_tokenize.h"

using namespace gradformer;
using Ids = std::vector<int64_t>;
using Pieces = std::vector<std::string>;

namespace {

/// A JSON string literal of text: quotes and backslashes escaped.
std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

/// An encoder.json whose ids 0..255 are the single bytes (id = byte value), written in GPT-2's
/// byte characters, followed by `extra` tokens (given in byte characters) with ids 256, 257, ...
/// With skip_byte given, that byte is left out and the ids after it close the gap.
std::string encoder_json(const std::vector<std::string>& extra, int skip_byte = -1) {
  std::string json = "{";
  int next_id = 0;
  for (int b = 0; b < 256; ++b) {
    if (b == skip_byte) continue;
    json +=
        json_string(gpt2_bytes_to_text(std::string(1, static_cast<char>(b)))) + ": " + std::to_string(next_id++) + ", ";
  }
  for (const std::string& token : extra) json += json_string(token) + ": " + std::to_string(next_id++) + ", ";
  json.resize(json.size() - 2);
  return json + "}";
}

// Six merges, in rank order. "Ġ" is U+0120, GPT-2's character for the space byte.
const std::string kMerges = "#version: 0.2\nĠ t\nh e\nĠt he\nl l\nll o\ne r\n";
// Their tokens: 256 "Ġt", 257 "he", 258 "Ġthe", 259 "ll", 260 "llo", 261 "er".
const std::vector<std::string> kTokens = {"Ġt", "he", "Ġthe", "ll", "llo", "er"};

BytePairEncoding small_bpe(const std::string& merges = kMerges) {
  return BytePairEncoding::parse_gpt2(encoder_json(kTokens), "encoder.json", merges, "vocab.bpe");
}

std::string encoder_error(const std::string& json) {
  return test::error_message<DataError>(
      [&] { BytePairEncoding::parse_gpt2(json, "encoder.json", kMerges, "vocab.bpe"); });
}

std::string vocab_error(const std::string& merges) {
  return test::error_message<DataError>(
      [&] { BytePairEncoding::parse_gpt2(encoder_json(kTokens), "encoder.json", merges, "vocab.bpe"); });
}

/// GPT-2's bpe() as encoder.py writes it, on strings, as an independent reference: while some
/// neighbouring pair is a merge, join every occurrence of the one of lowest rank, left to right.
Pieces reference_bpe(const std::vector<BytePairEncoding::Merge>& merges, const std::string& pre_token) {
  std::map<BytePairEncoding::Merge, size_t> ranks;
  for (size_t r = 0; r < merges.size(); ++r) ranks.emplace(merges[r], r);
  Pieces word;
  for (const char c : pre_token) word.emplace_back(1, c);
  while (word.size() > 1) {
    size_t best = merges.size();
    for (size_t i = 0; i + 1 < word.size(); ++i) {
      const auto it = ranks.find({word[i], word[i + 1]});
      if (it != ranks.end()) best = std::min(best, it->second);
    }
    if (best == merges.size()) break;
    const auto& [first, second] = merges[best];
    Pieces joined;
    for (size_t i = 0; i < word.size();) {
      const bool here = i + 1 < word.size() && word[i] == first && word[i + 1] == second;
      joined.push_back(here ? first + second : word[i]);
      i += here ? 2 : 1;
    }
    word = joined;
  }
  return word;
}

/// A string of 1 to max_length characters from alphabet.
std::string random_string(std::mt19937& rng, const std::string& alphabet, size_t max_length) {
  std::string text(1 + rng() % max_length, ' ');
  for (char& c : text) c = alphabet[rng() % alphabet.size()];
  return text;
}

}  // namespace

TEST_CASE("GPT-2's byte characters: printable bytes stand for themselves, the other 68 take U+0100 on") {
  const auto& table = gpt2_byte_characters();
  // The three printable ranges of bytes_to_unicode().
  for (char32_t b = '!'; b <= '~'; ++b) CHECK(table[b] == b);
  for (char32_t b = 0xA1; b <= 0xAC; ++b) CHECK(table[b] == b);
  for (char32_t b = 0xAE; b <= 0xFF; ++b) CHECK(table[b] == b);
  // The rest in byte order: 0..32 (33 bytes), 127, 128..160 (33 bytes), 173: 68 in all.
  std::vector<int> moved;
  for (int b = 0; b <= 32; ++b) moved.push_back(b);
  moved.push_back(127);
  for (int b = 128; b <= 160; ++b) moved.push_back(b);
  moved.push_back(173);
  REQUIRE(moved.size() == 68);
  for (size_t i = 0; i < moved.size(); ++i) CHECK(table[static_cast<size_t>(moved[i])] == 0x100 + i);
  // The familiar ones: space is 'Ġ' (U+0120), newline 'Ċ' (U+010A), tab 'ĉ' (U+0109).
  CHECK(table[' '] == 0x120);
  CHECK(table['\n'] == 0x10A);
  CHECK(table['\t'] == 0x109);
  CHECK(gpt2_bytes_to_text(" hi\n") == "ĠhiĊ");
}

TEST_CASE("GPT-2's byte characters convert back to every byte") {
  std::string all_bytes;
  for (int b = 0; b < 256; ++b) all_bytes += static_cast<char>(b);
  CHECK(gpt2_text_to_bytes(gpt2_bytes_to_text(all_bytes), "test") == all_bytes);
  CHECK(gpt2_text_to_bytes("ĠhiĊ", "test") == " hi\n");
  CHECK_THROWS_MSG(gpt2_text_to_bytes("a中", "test"), DataError, "test: character U+4E2D stands for no byte");
  CHECK_THROWS_MSG(gpt2_text_to_bytes("a\xff", "test"), DataError, "test: not UTF-8 at byte 1");
}

TEST_CASE("bpe joins the pair of lowest rank first, as GPT-2's bpe() does") {
  const BytePairEncoding bpe = small_bpe();
  REQUIRE(bpe.size() == 262);
  REQUIRE(bpe.merges().size() == 6);
  // " the": (Ġ,t) rank 0 -> Ġt h e; (h,e) rank 1 -> Ġt he; (Ġt,he) rank 2 -> Ġthe.
  CHECK(bpe.bpe(" the") == Pieces{" the"});
  // "hello": (h,e) 1 -> he l l o; (l,l) 3 -> he ll o; (ll,o) 4 -> he llo.
  CHECK(bpe.bpe("hello") == Pieces{"he", "llo"});
  // "there": (h,e) rank 1 beats (e,r) rank 5 -> t he r e, and no pair is left to join.
  CHECK(bpe.bpe("there") == Pieces{"t", "he", "r", "e"});
  // " ther": Ġt h e r -> Ġt he r -> Ġthe r.
  CHECK(bpe.bpe(" ther") == Pieces{" the", "r"});
  // Occurrences are joined left to right without overlap.
  CHECK(bpe.bpe("lll") == Pieces{"ll", "l"});
  CHECK(bpe.bpe("llll") == Pieces{"ll", "ll"});
  CHECK(bpe.bpe("x") == Pieces{"x"});
  CHECK(bpe.bpe("").empty());
}

TEST_CASE("bpe follows the merges' order in vocab.bpe, not their tokens' ids") {
  // The same merges with "e r" moved first: in "there" it now wins over "h e".
  const BytePairEncoding bpe = small_bpe("#version: 0.2\ne r\nĠ t\nh e\nĠt he\nl l\nll o\n");
  CHECK(bpe.bpe("there") == Pieces{"t", "h", "er", "e"});
  CHECK(bpe.encode({"there"}) == Ids{'t', 'h', 261, 'e'});
}

TEST_CASE("encode gives the ids of encoder.json for each pre-token's pieces") {
  const BytePairEncoding bpe = small_bpe();
  CHECK(bpe.encode({" the"}) == Ids{258});
  CHECK(bpe.encode({"hello", " the", "re"}) == Ids{257, 260, 258, 'r', 'e'});
  CHECK(bpe.encode({"there"}) == Ids{'t', 257, 'r', 'e'});
  CHECK(bpe.encode({}).empty());
  CHECK(bpe.id("he") == 257);
  CHECK(bpe.id("eh") == -1);
  CHECK(bpe.token(258) == " the");
}

TEST_CASE("decode gives back the bytes, whatever they are") {
  const BytePairEncoding bpe = small_bpe();
  CHECK(bpe.decode({258, 257, 260}) == " thehello");
  CHECK(bpe.decode({}).empty());
  const std::vector<std::string> texts = {
      "hello there, the other", std::string("\x00\x01\t\n\r\x1b\x7f", 7),  // control characters
      "\xff\xfe\x80\xc3\x28\xed\xa0\x80",                       // not UTF-8: bad bytes, a broken pair, a surrogate
      "\xf0\x9f\x98\x80 \xe4\xb8\xad\xe6\x96\x87 caf\xc3\xa9",  // emoji, CJK, an accented letter
  };
  for (const std::string& text : texts) {
    INFO("text of " << text.size() << " bytes");
    CHECK(bpe.decode(bpe.encode({text})) == text);
  }
  CHECK_THROWS_MSG(bpe.decode({258, 262}), ValueError, "id 262 is outside the vocabulary of 262 tokens");
  CHECK_THROWS_MSG(bpe.decode({-1}), ValueError, "id -1 is outside");
}

TEST_CASE("random bytes cut into random pre-tokens round-trip through encode and decode") {
  const BytePairEncoding bpe = small_bpe();
  std::mt19937 rng(25);
  // Bytes drawn mostly from the merges' letters and space, so that merges do fire, and any byte.
  const std::string letters = " thelor";
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::string> pre_tokens;
    std::string text;
    const int count = static_cast<int>(rng() % 6);
    for (int t = 0; t < count; ++t) {
      std::string pre_token;
      const int length = 1 + static_cast<int>(rng() % 8);
      for (int i = 0; i < length; ++i) {
        pre_token += rng() % 4 == 0 ? static_cast<char>(rng() % 256) : letters[rng() % letters.size()];
      }
      text += pre_token;
      pre_tokens.push_back(pre_token);
    }
    const Ids ids = bpe.encode(pre_tokens);
    CHECK(ids.size() <= text.size());
    CHECK(bpe.decode(ids) == text);
  }
}

TEST_CASE("vocab.bpe with Windows line ends reads as with '\\n'") {
  const BytePairEncoding bpe = small_bpe("#version: 0.2\r\nĠ t\r\nh e\r\nĠt he\r\nl l\r\nll o\r\ne r\r\n");
  CHECK(bpe.merges() == small_bpe().merges());
  CHECK(bpe.encode({" the", "hello"}) == Ids{258, 257, 260});
}

TEST_CASE("read_gpt2 reads the two files from disk") {
  const auto dir = std::filesystem::temp_directory_path() / "gradformer_test_bpe";
  std::filesystem::create_directories(dir);
  const std::string encoder_path = (dir / "encoder.json").string();
  const std::string vocab_path = (dir / "vocab.bpe").string();
  std::ofstream(encoder_path, std::ios::binary) << encoder_json(kTokens);
  std::ofstream(vocab_path, std::ios::binary) << kMerges;
  const BytePairEncoding bpe = BytePairEncoding::read_gpt2(encoder_path, vocab_path);
  CHECK(bpe.encode({" the"}) == Ids{258});
  const std::string missing = (dir / "missing.json").string();
  CHECK_THROWS_MSG(BytePairEncoding::read_gpt2(missing, vocab_path), DataError, missing + ": cannot open");
  std::filesystem::remove_all(dir);
}

TEST_CASE("a malformed encoder.json is a DataError naming the file and the value") {
  CHECK(encoder_error("[1, 2]").find("encoder.json: expected an object of token -> id, found: array") !=
        std::string::npos);
  CHECK(encoder_error("{\"a\": 0").find("encoder.json: ") == 0);  // the JSON reader's error, prefixed
  CHECK(
      encoder_error("{\"a\": \"zero\"}").find("encoder.json: token \"a\": its id must be an integer, found: string") !=
      std::string::npos);
  CHECK(encoder_error("{\"a\": 0, \"b\": 2}").find("encoder.json: token \"b\" has id 2, outside 0 .. 1") !=
        std::string::npos);
  CHECK(encoder_error("{\"a\": 0, \"b\": 0}").find("encoder.json: id 0 is given to both \"a\" and \"b\"") !=
        std::string::npos);
  CHECK(encoder_error("{\"\\u4e2d\": 0}").find("encoder.json: token \"中\": character U+4E2D stands for no byte") !=
        std::string::npos);
  // Byte 'q' missing: a text holding it could not be encoded.
  const std::string no_q = encoder_json({}, 'q');
  CHECK(encoder_error(no_q).find("byte 113 (\"q\") is not a token") != std::string::npos);
  CHECK(encoder_error("{\"a\": 0, \"\": 1}").find("token 1 is empty") != std::string::npos);
  // JSON allows a name twice; a token with two ids is an error.
  CHECK(encoder_error("{\"a\": 0, \"a\": 1}")
            .find("encoder.json and vocab.bpe: BytePairEncoding: token \"a\" has two ids, 0 and 1") !=
        std::string::npos);
}

TEST_CASE("a malformed vocab.bpe is a DataError naming the file, the line and the value") {
  CHECK(vocab_error("h e\n").find("vocab.bpe:1: expected a version comment such as \"#version: 0.2\", found \"h e\"") !=
        std::string::npos);
  CHECK(vocab_error("#version: 0.2\nh e\nl l o\n")
            .find("vocab.bpe:3: expected a merge, two tokens separated by a space, found \"l l o\"") !=
        std::string::npos);
  CHECK(vocab_error("#version: 0.2\nh e\n\nl l\n").find("vocab.bpe:3: expected a merge") != std::string::npos);
  CHECK(vocab_error("#version: 0.2\nh e\nl l").find("vocab.bpe: the last line has no line end") != std::string::npos);
  CHECK(vocab_error("#version: 0.2\nh 中\n").find("vocab.bpe:2: merge \"h 中\": character U+4E2D") !=
        std::string::npos);
  CHECK(
      vocab_error("#version: 0.2\nh e\nl l\nh e\n").find("vocab.bpe:4: merge \"h e\" appears twice, first on line 2") !=
      std::string::npos);
  CHECK(vocab_error("#version: 0.2\nh e\n\xff\n").find("vocab.bpe: not UTF-8 at byte 18") != std::string::npos);
}

TEST_CASE("an empty vocab.bpe or one with the comment alone means no merges: every byte its own token") {
  for (const std::string merges : {"", "#version: 0.2\n"}) {
    const BytePairEncoding bpe = small_bpe(merges);
    CHECK(bpe.merges().empty());
    CHECK(bpe.encode({" the"}) == Ids{' ', 't', 'h', 'e'});
  }
}

TEST_CASE("merges that make a token encoder.json lacks are an error when encoding meets one") {
  const BytePairEncoding bpe =
      BytePairEncoding::parse_gpt2(encoder_json({}), "encoder.json", "#version: 0.2\na b\n", "vocab.bpe");
  CHECK(bpe.encode({"ba"}) == Ids{'b', 'a'});
  CHECK_THROWS_MSG(bpe.encode({"cab"}), DataError, "the merges make \"ab\" from \"cab\", which is not a token");
}

TEST_CASE("text pre-tokenized as GPT-2 does, then encoded") {
  const BytePairEncoding bpe = small_bpe();
  // Pre-tokens " the", " hello", " there". " hello": Ġ h e l l o -> Ġ he l l o -> Ġ he ll o ->
  // Ġ he llo, and "Ġ he" is no merge. " there": Ġt h e r e -> Ġt he r e -> Ġthe r e.
  const std::string text = " the hello there";
  const Ids ids = bpe.encode(gpt2_pre_tokens(text));
  CHECK(ids == Ids{258, ' ', 257, 260, 258, 'r', 'e'});
  CHECK(bpe.decode(ids) == text);
}

TEST_CASE("bpe gives GPT-2's pieces for random merges in any order, overlapping, reused and unknown") {
  // Merges drawn at random from strings of a two- or three-letter alphabet: their order need not be
  // one learning could give ("aa a" may come before "a a"), two merges may make the same string
  // ("a ab" and "aa b"), and a side may be a string no merge makes. Tokens: the bytes and every
  // merge's result, so that encode works too.
  for (uint32_t seed = 0; seed < 300; ++seed) {
    std::mt19937 rng(seed);
    const std::string alphabet = seed % 2 ? "ab" : "abc";
    std::vector<BytePairEncoding::Merge> merges;
    std::set<BytePairEncoding::Merge> seen;
    const size_t merge_count = rng() % 25;
    while (merges.size() < merge_count) {
      BytePairEncoding::Merge merge{random_string(rng, alphabet, 3), random_string(rng, alphabet, 3)};
      if (seen.insert(merge).second) merges.push_back(merge);
    }
    std::vector<std::string> tokens;
    for (int b = 0; b < 256; ++b) tokens.emplace_back(1, static_cast<char>(b));
    std::set<std::string> known(tokens.begin(), tokens.end());
    for (const auto& [left, right] : merges) {
      if (known.insert(left + right).second) tokens.push_back(left + right);
    }
    const BytePairEncoding bpe(tokens, merges);
    for (int trial = 0; trial < 20; ++trial) {
      const std::string pre_token = random_string(rng, alphabet, 14);
      INFO("seed " << seed << ", pre-token \"" << pre_token << "\"");
      const Pieces expected = reference_bpe(merges, pre_token);
      REQUIRE(bpe.bpe(pre_token) == expected);
      Ids ids;
      for (const std::string& piece : expected) ids.push_back(bpe.id(piece));
      REQUIRE(bpe.encode({pre_token}) == ids);
    }
  }
}

TEST_CASE("a merge of two merged tokens that makes no token is an error too") {
  const BytePairEncoding bpe =
      BytePairEncoding::parse_gpt2(encoder_json({}), "encoder.json", "#version: 0.2\na b\nab c\n", "vocab.bpe");
  CHECK_THROWS_MSG(bpe.encode({"cab"}), DataError, "the merges make \"ab\" from \"cab\"");
  CHECK_THROWS_MSG(bpe.encode({"abc"}), DataError, "the merges make \"abc\" from \"abc\"");
  CHECK(bpe.bpe("xabc") == Pieces{"x", "abc"});  // bpe() gives the pieces all the same
}

TEST_CASE("many threads encode with one BytePairEncoding at once") {
  const BytePairEncoding bpe = small_bpe();
  std::vector<std::string> pre_tokens;
  std::mt19937 rng(3);
  for (int i = 0; i < 2000; ++i) pre_tokens.push_back(random_string(rng, " thelor", 7));
  const Ids expected = bpe.encode(pre_tokens);
  std::vector<Ids> results(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < results.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 3; ++round) results[t] = bpe.encode(pre_tokens);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const Ids& ids : results) CHECK(ids == expected);
  std::string text;
  for (const std::string& pre_token : pre_tokens) text += pre_token;
  CHECK(bpe.decode(expected) == text);
}
