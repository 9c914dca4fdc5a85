#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "catch.h"
#include "transformer/data/learn_bpe.h"
#include "transformer/data/line_reader.h"
#include "transformer/data/tokenizer.h"

using namespace gradformer;
using Ids = std::vector<int64_t>;

namespace {
// What every byte-level tokenizer must do: any text it accepts comes back byte for byte.
void check_round_trip(const Tokenizer& t, const std::string& text) {
  INFO("text: " << text);
  CHECK(t.decode_bytes(t.encode(text)) == text);
}
}  // namespace

TEST_CASE("Tokenizer of words: the vocabulary's ids, unknown words <unk>, decoded joined by spaces") {
  const Vocab vocab = Vocab::build({{"le", "chat"}, {"le", "chien"}});  // le 4, chat 5, chien 6
  const Tokenizer t(vocab);
  CHECK(t.kind_name() == "words");
  CHECK(t.size() == 7);
  CHECK(t.encode("le  chat\tchien") == Ids{4, 5, 6});
  CHECK(t.encode("le oiseau") == Ids{4, Vocab::unk});
  CHECK(t.decode(Ids{4, 6}) == "le chien");
  CHECK(t.piece(5) == "chat");
  CHECK(t.byte_length(5) == 4);
  CHECK(t.byte_length(Vocab::eos) == 0);
  CHECK(t.metadata("tokenizer.target").empty());  // a word model's checkpoint is as it was
  CHECK(t.special("<s>") == Vocab::bos);
  CHECK_THROWS_MSG(t.byte_pair_encoding(), ValueError, "words has no byte-pair encoding");
}

TEST_CASE("Tokenizer of bytes: ids are the specials, then byte value + specials, and any bytes round-trip") {
  const Tokenizer t = Tokenizer::bytes({"<sep>"});
  CHECK(t.size() == 5 + 256);
  CHECK(t.special("<sep>") == 4);
  CHECK_FALSE(t.special("<mask>").has_value());
  CHECK(t.encode("A\n") == Ids{5 + 'A', 5 + '\n'});
  CHECK(t.piece(5 + ' ') == "\xC4\xA0");  // GPT-2's byte character for a space, U+0120
  CHECK(t.piece(Vocab::eos) == "</s>");
  CHECK(t.decode_bytes(Ids{5 + 'h', Vocab::eos}) == "h</s>");
  std::string every_byte;
  for (int b = 0; b < 256; ++b) every_byte += static_cast<char>(b);
  check_round_trip(t, every_byte);
  // Half of "é" (C3 A9) is no text: decode replaces it by U+FFFD (EF BF BD), decode_bytes keeps it.
  CHECK(t.decode(Ids{5 + 'a', 5 + 0xC3}) == "a\xEF\xBF\xBD");
  CHECK(t.decode_bytes(Ids{5 + 'a', 5 + 0xC3}) == "a\xC3");
  CHECK(t.decode(Ids{5 + 0xC3, 5 + 0xA9}) == "\xC3\xA9");
  CHECK_THROWS_MSG(t.decode(Ids{261}), ValueError, "id 261 is outside the vocabulary of 261 tokens");
  CHECK_THROWS_MSG(t.decode(Ids{-1}), ValueError, "id -1");
}

TEST_CASE("Tokenizer::learn_bpe: the first merges of a text worked by hand, offset by the specials") {
  // GPT-2's pre-tokens of "aaab aaab": "aaab" and " aaab". Pairs: aa 4, ab 2, " a" 1 -> aa, then
  // (aa,a) 2 ties (a,b) 2: the smaller pair of ids, (97, 98), wins: ab. Then (aa,ab) 2 -> "aaab".
  const Tokenizer t = Tokenizer::learn_bpe({"aaab aaab"}, 4 + 256 + 3);
  REQUIRE(t.size() == 263);
  CHECK(t.piece(4 + 256) == "aa");
  CHECK(t.piece(4 + 257) == "ab");
  CHECK(t.piece(4 + 258) == "aaab");
  CHECK(t.encode("aaab aaab") == Ids{262, 4 + ' ', 262});
  CHECK(t.byte_length(262) == 4);
  check_round_trip(t, "aaab aaab");
  check_round_trip(t, "a b\n\n  tab\there, 12 3 don't");
  CHECK_THROWS_MSG(Tokenizer::learn_bpe({"x"}, 259), ValueError, "smaller than its 4 specials and the 256 bytes (260)");
  CHECK_THROWS_MSG(t.encode("caf\xE9"), ValueError, "byte 3 is not");
  check_round_trip(t, "caf\xC3\xA9 \xE6\x97\xA5\xE6\x9C\xAC \xF0\x9F\x98\x80!");  // café 日本 😀!
}

TEST_CASE("Tokenizer: a learned token may not spell a special, nor a special be malformed") {
  const BytePairEncoding spells_s = learn_bpe({"<s>", "<s>"}, 258);  // <s, then <s>
  REQUIRE(spells_s.token(257) == "<s>");
  CHECK_THROWS_MSG(Tokenizer::byte_pairs(spells_s), ValueError, "spells the special <s>");
  // Learning never makes them: "<s>" everywhere in the text still leaves it three pieces.
  const Tokenizer learned = Tokenizer::learn_bpe({"<s><s><s><s>"}, 300);
  CHECK(learned.vocab().id("<s>") == Vocab::bos);  // the special, and no learned token besides
  CHECK(learned.encode("<s>").size() >= 2);
  CHECK(learned.decode(learned.encode("<s>")) == "<s>");
  CHECK_THROWS_MSG(Tokenizer::bytes({"sep"}), ValueError, "written <name> without spaces, got \"sep\"");
  CHECK_THROWS_MSG(Tokenizer::bytes({"<s>"}), ValueError, "special token <s> given twice");
}

TEST_CASE("Tokenizer: checkpoint entries and the learn-bpe file give the same tokenizer back") {
  const Tokenizer learned = Tokenizer::learn_bpe({"the cat, the hat; the bat\nthe end"}, 4 + 1 + 256 + 12, {"<sep>"});
  const auto entries = learned.metadata("tokenizer.target");
  CHECK(entries.at("tokenizer.target.kind") == "bpe");
  CHECK(entries.at("tokenizer.target.specials") == "5");
  CHECK(Tokenizer::from_metadata(learned.vocab(), entries, "tokenizer.target", "ckpt") == learned);
  CHECK(Tokenizer::from_json(learned.to_json(), "tok.json") == learned);
  const Tokenizer bytes = Tokenizer::bytes();
  CHECK(Tokenizer::from_json(bytes.to_json(), "tok.json") == bytes);
  const Tokenizer words(Vocab::build({{"a", "b"}}));
  CHECK(Tokenizer::from_json(words.to_json(), "tok.json") == words);
  CHECK(Tokenizer::from_metadata(words.vocab(), {}, "tokenizer.target", "ckpt") == words);
}

TEST_CASE("Tokenizer: malformed checkpoint entries and files are DataErrors naming where") {
  const Tokenizer learned = Tokenizer::learn_bpe({"abab abab"}, 262);
  auto entries = learned.metadata("t");
  entries["t.kind"] = "wordpiece";
  CHECK_THROWS_MSG(Tokenizer::from_metadata(learned.vocab(), entries, "t", "m.safetensors"), DataError,
                   "m.safetensors: t.kind is \"wordpiece\"");
  entries = learned.metadata("t");
  entries["t.specials"] = "x";
  CHECK_THROWS_MSG(Tokenizer::from_metadata(learned.vocab(), entries, "t", "m"), DataError, "t.specials must count");
  entries = learned.metadata("t");
  entries["t.merges"] += "a\n";
  CHECK_THROWS_MSG(Tokenizer::from_metadata(learned.vocab(), entries, "t", "m"), DataError,
                   "merge 3 is \"a\", not two tokens and one space");
  entries = learned.metadata("t");
  entries["t.merges"] = "x y\n";  // "xy" is no token of the vocabulary
  CHECK_THROWS_MSG(Tokenizer::from_metadata(learned.vocab(), entries, "t", "m"), DataError,
                   "makes a token the vocabulary lacks");
  std::string json = learned.to_json();
  json.replace(json.find(R"("kind":"bpe")"), 12, R"("kind":3)");
  CHECK_THROWS_MSG(Tokenizer::from_json(json, "tok.json"), DataError,
                   "tok.json: a tokenizer file needs \"kind\", the string words, bytes or bpe");
  json = learned.to_json();
  json.replace(json.find(R"("specials":["<pad>","<s>")"), 25, R"("specials":["<s>","<pad>")");
  CHECK_THROWS_MSG(Tokenizer::from_json(json, "tok.json"), DataError,
                   "tok.json (\"specials\" then \"tokens\", one a line):1: expected the special <pad>, found '<s>'");
  CHECK_THROWS_MSG(Tokenizer::from_json("{}", "tok.json"), DataError, "tok.json: not a tokenizer file");
  CHECK_THROWS_MSG(Tokenizer::from_json("[1", "tok.json"), DataError, "tok.json: not a tokenizer file");
  CHECK_THROWS_MSG(Tokenizer::read_file("/nonexistent/tok.json"), DataError, "/nonexistent/tok.json: cannot open");
}

TEST_CASE("Tokenizer: a tokenizer's file past 64 MiB is refused as it is read, naming the limit") {
  // A reader builds every JSON value in memory, several times the file's bytes: a file of a number
  // per two bytes took gigabytes before the limit.
  const std::string path =
      (std::filesystem::temp_directory_path() / ("gradformer-big-tokenizer-" + std::to_string(::getpid()) + ".json"))
          .string();
  {
    std::ofstream out(path, std::ios::binary);
    out << '[';
    const std::string ones(1 << 20, '1');
    for (int mib = 0; mib < 64; ++mib) out << ones;
    out << "]";
  }
  CHECK_THROWS_MSG(Tokenizer::read_file(path), ReadError,
                   path + ": more than 67108864 bytes, the most a tokenizer's file may hold");
  std::filesystem::remove(path);
}

TEST_CASE("Tokenizer: a bytes tokenizer's file must hold the 256 bytes in byte order and no merges") {
  // Its ids are byte value + specials: tokens in another order would decode to other bytes.
  auto entries = Tokenizer::bytes().metadata("t");
  std::string lines;
  for (const std::string_view special : Vocab::specials) lines += std::string(special) + "\n";
  for (int b = 255; b >= 0; --b) lines += gpt2_bytes_to_text(std::string(1, static_cast<char>(b))) + "\n";
  CHECK_THROWS_MSG(Tokenizer::from_metadata(Vocab::from_text(lines), entries, "t", "m"), DataError,
                   "m: t: a bytes tokenizer has its specials, then the 256 bytes in byte order and no merges; found "
                   "256 tokens not in byte order and 0 merges");
  const Tokenizer learned = Tokenizer::learn_bpe({"abab abab"}, 262);  // the bytes, then "ab"
  entries = learned.metadata("t");
  entries["t.kind"] = "bytes";
  CHECK_THROWS_MSG(Tokenizer::from_metadata(learned.vocab(), entries, "t", "m"), DataError,
                   "found 258 tokens and 2 merges");
}

TEST_CASE("Tokenizer::from_json: a line end inside a token, special or merge is refused, not split in two") {
  std::string json = Tokenizer::learn_bpe({"abab abab"}, 262).to_json();  // merges "a b", "ab ab"
  const std::string merges = R"("merges":["a b","ab ab"])";
  REQUIRE(json.find(merges) != std::string::npos);
  json.replace(json.find(merges), merges.size(), R"("merges":["a b\nab ab"])");  // one string, two merges
  CHECK_THROWS_MSG(Tokenizer::from_json(json, "tok.json"), DataError, "tok.json: \"merges\" item 0 holds a line end");
  const std::string words = R"({"format": "gradformer-tokenizer", "kind": "words", "specials": [],
      "tokens": ["<pad>", "<s>", "</s>", "<unk>", "le\nchat"], "merges": []})";
  CHECK_THROWS_MSG(Tokenizer::from_json(words, "w.json"), DataError, "w.json: \"tokens\" item 4 holds a line end");
}

TEST_CASE("Tokenizer::learn_bpe: no learned token spells a special in byte characters, whatever its bytes") {
  // The special "<Â«>" is spelled by the token of the bytes 3C C2 AB 3E ("<«>": Â stands for byte
  // C2, « for AB), not by the bytes of its own UTF-8 (3C C3 82 C2 AB 3E).
  const std::string text = "<\u00ab> <\u00ab> <\u00ab> <\u00ab>";
  const Tokenizer t = Tokenizer::learn_bpe({text}, 4 + 1 + 256 + 8, {"<\u00c2\u00ab>"});
  const int64_t special = *t.special("<\u00c2\u00ab>");
  for (int64_t id = 0; id < t.size(); ++id)
    if (id != special) CHECK(t.piece(id) != "<\u00c2\u00ab>");
  check_round_trip(t, text);
  CHECK(t.encode("<\u00ab>").size() > 1);  // never the one token that would spell the special
}

TEST_CASE("Tokenizer ==: GPT-2's tokenizers with the same merges but other ids differ") {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.emplace_back(1, static_cast<char>(b));
  tokens.push_back("ab");
  tokens.push_back("ba");
  const std::vector<BytePairEncoding::Merge> merges = {{"a", "b"}, {"b", "a"}};
  std::vector<std::string> swapped = tokens;
  std::swap(swapped[256], swapped[257]);  // "ab" is 257 here, 256 there
  const Tokenizer a = Tokenizer::gpt2(BytePairEncoding(tokens, merges));
  const Tokenizer b = Tokenizer::gpt2(BytePairEncoding(swapped, merges));
  CHECK(a.encode("ab") != b.encode("ab"));
  CHECK_FALSE(a == b);
  CHECK(a == Tokenizer::gpt2(BytePairEncoding(tokens, merges)));
}

TEST_CASE("Tokenizer: GPT-2's tokenizer is stored as its tokens by id and its merges, and read back the same") {
  // A token order that is not byte order (GPT-2's encoder.json puts '!' first), and a token with a
  // space and a newline byte, which the entries write as Ġ and Ċ.
  std::vector<std::string> tokens;
  for (int b = 255; b >= 0; --b) tokens.emplace_back(1, static_cast<char>(b));
  tokens.push_back(" t");
  tokens.push_back(" th");
  tokens.push_back("\n\n");
  const Tokenizer gpt2 = Tokenizer::gpt2(BytePairEncoding(tokens, {{" ", "t"}, {" t", "h"}, {"\n", "\n"}}));
  const auto entries = gpt2.metadata("tokenizer.target");
  CHECK(entries.at("tokenizer.target.kind") == "gpt2");
  CHECK(entries.at("tokenizer.target.merges") == "Ġ t\nĠt h\nĊ Ċ\n");
  CHECK(entries.at("tokenizer.target.tokens").substr(0, 3) == "ÿ\n");  // id 0 is byte 255, ÿ
  const Tokenizer back = Tokenizer::from_metadata(Vocab(), entries, "tokenizer.target", "f.safetensors");
  CHECK(back == gpt2);
  CHECK_FALSE(back.has_vocab());
  CHECK(back.encode(" the\n\n") == Ids{257, 255 - 'e', 258});
  auto missing = entries;
  missing.erase("tokenizer.target.tokens");
  CHECK_THROWS_MSG(Tokenizer::from_metadata(Vocab(), missing, "tokenizer.target", "f.safetensors"), DataError,
                   "f.safetensors: tokenizer.target.kind is gpt2 but there is no tokenizer.target.tokens");
  auto bad = entries;
  bad["tokenizer.target.merges"] += "t h\n";  // "th" is no token
  CHECK_THROWS_MSG(Tokenizer::from_metadata(Vocab(), bad, "tokenizer.target", "f.safetensors"), DataError,
                   "f.safetensors: tokenizer.target: the merge t h makes a token the vocabulary lacks");
  bad = entries, bad["tokenizer.target.tokens"] += "日\n";
  CHECK_THROWS_MSG(Tokenizer::from_metadata(Vocab(), bad, "tokenizer.target", "f.safetensors"), DataError,
                   "f.safetensors: tokenizer.target.tokens line 260");
}
