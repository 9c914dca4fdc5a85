#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "catch.h"
#include "transformer/data/bpe.h"
#include "transformer/data/data_error.h"
#include "transformer/data/hub_tokenizer.h"
#include "transformer/data/llama3_pre_tokenize.h"
#include "transformer/data/tokenizer.h"

using namespace gradformer;
using Ids = std::vector<int64_t>;

// Small tokenizer.json files written here, each with a vocabulary and merges chosen so that the ids
// of a text can be worked out by hand (written next to each expectation). The byte-level ones give
// the 256 bytes' characters the byte's value as id ("h" 104, "Ġ" for a space 32), so a byte's id is
// its value; the SentencePiece one puts <unk> <s> </s> first, then "<0x00>".."<0xFF>" as 3..258.

namespace {

/// A JSON string: the text in quotes, with quote and backslash escaped (control characters are not
/// used in the tokens below).
std::string quote(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

/// "token": id entries; the merges as "left right" strings or ["left", "right"] pairs.
std::string vocab_json(const std::vector<std::pair<std::string, int64_t>>& vocab) {
  std::string out = "{";
  for (const auto& [token, id] : vocab) out += (out.size() > 1 ? "," : "") + quote(token) + ":" + std::to_string(id);
  return out + "}";
}
std::string merges_json(const std::vector<std::pair<std::string, std::string>>& merges, bool as_pairs) {
  std::string out = "[";
  for (const auto& [l, r] : merges) {
    out += out.size() > 1 ? "," : "";
    out += as_pairs ? "[" + quote(l) + "," + quote(r) + "]" : quote(l + " " + r);
  }
  return out + "]";
}

struct HubFile {
  std::string normalizer = "null", pre_tokenizer = "null", decoder = "null", added = "[]", post = "null";
  std::string model;
  std::string json() const {
    return R"({"version":"1.0","truncation":null,"padding":null,"added_tokens":)" + added + R"(,"normalizer":)" +
           normalizer + R"(,"pre_tokenizer":)" + pre_tokenizer + R"(,"post_processor":)" + post + R"(,"decoder":)" +
           decoder + R"(,"model":)" + model + "}";
  }
};

std::string bpe_model(const std::string& vocab, const std::string& merges, const std::string& options) {
  return R"({"type":"BPE","dropout":null,"continuing_subword_prefix":null,"end_of_word_suffix":null,)" + options +
         R"(,"vocab":)" + vocab + R"(,"merges":)" + merges + "}";
}

/// The 256 byte characters, each with its byte's value as id, then `more` from id 256 on.
std::string byte_level_vocab(const std::vector<std::string>& more) {
  std::vector<std::pair<std::string, int64_t>> vocab;
  for (int b = 0; b < 256; ++b) vocab.emplace_back(gpt2_bytes_to_text(std::string(1, static_cast<char>(b))), b);
  for (const std::string& token : more) vocab.emplace_back(token, static_cast<int64_t>(vocab.size()));
  return vocab_json(vocab);
}

std::string added_token(int64_t id, const std::string& content, bool normalized = false) {
  return R"({"id":)" + std::to_string(id) + R"(,"content":)" + quote(content) +
         R"(,"single_word":false,"lstrip":false,"rstrip":false,"normalized":)" + (normalized ? "true" : "false") +
         R"(,"special":true})";
}

const std::string kByteLevelDecoder =
    R"({"type":"ByteLevel","add_prefix_space":true,"trim_offsets":true,"use_regex":true})";

std::string split_then_byte_level(std::string_view pattern) {
  std::string escaped;  // the pattern as a JSON string: its backslashes doubled
  for (const char c : pattern) escaped += c == '\\' ? std::string("\\\\") : std::string(1, c);
  return R"({"type":"Sequence","pretokenizers":[{"type":"Split","pattern":{"Regex":")" + escaped +
         R"("},"behavior":"Isolated","invert":false},{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":false,"use_regex":false}]})";
}

// GPT-2's pipeline: ByteLevel with its pattern. Merges (rank: token id): 0 "h i" 256, 1 "Ġ t" 257,
// 2 "Ġt h" 258, 3 "Ġth e" 259. Added: <|endoftext|> 260 (normalized, as GPT-2's file has it).
HubFile gpt2_file() {
  HubFile file;
  file.pre_tokenizer = R"({"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true})";
  file.decoder = kByteLevelDecoder;
  file.added = "[" + added_token(260, "<|endoftext|>", true) + "]";
  file.model = bpe_model(byte_level_vocab({"hi", "Ġt", "Ġth", "Ġthe", "<|endoftext|>"}),
                         merges_json({{"h", "i"}, {"Ġ", "t"}, {"Ġt", "h"}, {"Ġth", "e"}}, false),
                         R"("unk_token":null,"fuse_unk":false,"byte_fallback":false)");
  return file;
}

// Llama 3's: Split by its pattern, then ByteLevel; ignore_merges. Merges: 0 "1 2" 256, 1 "12 3" 257,
// 2 "4 5" 258, 3 "45 6" 259, 4 "' T" 260. Token 261 "Ġworld" has no merge that makes it. Added:
// <|begin_of_text|> 262, <|eot_id|> 263; the post-processor puts <|begin_of_text|> first.
HubFile llama3_file(bool ignore_merges = true, std::string_view pattern = kLlama3SplitPattern) {
  HubFile file;
  file.pre_tokenizer = split_then_byte_level(pattern);
  file.decoder = kByteLevelDecoder;
  file.added = "[" + added_token(262, "<|begin_of_text|>") + "," + added_token(263, "<|eot_id|>") + "]";
  file.post =
      R"({"type":"Sequence","processors":[{"type":"ByteLevel","add_prefix_space":true,"trim_offsets":false,"use_regex":true},{"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<|begin_of_text|>","type_id":0}},{"Sequence":{"id":"A","type_id":0}}],"pair":[],"special_tokens":{"<|begin_of_text|>":{"id":"<|begin_of_text|>","ids":[262],"tokens":["<|begin_of_text|>"]}}}]})";
  file.model = bpe_model(byte_level_vocab({"12", "123", "45", "456", "'T", "Ġworld"}),
                         merges_json({{"1", "2"}, {"12", "3"}, {"4", "5"}, {"45", "6"}, {"'", "T"}}, true),
                         std::string(R"("unk_token":null,"fuse_unk":false,"byte_fallback":false,"ignore_merges":)") +
                             (ignore_merges ? "true" : "false"));
  return file;
}

// Llama 2's SentencePiece style: Prepend "▁" and Replace " " -> "▁"; no pre-tokenizer; byte fallback.
// Ids: <unk> 0, <s> 1, </s> 2, <0x00>..<0xFF> 3..258, then ▁ 259, h 260, i 261, t 262, e 263, r 264,
// 日 265, 本 266, 語 267, and the merges' tokens: 0 "▁ h" 268, 1 "▁h i" 269, 2 "h e" 270, 3 "t he" 271,
// 4 "▁ the" 272. Added: <unk> <s> </s>.
std::string sentencepiece_vocab() {
  std::vector<std::pair<std::string, int64_t>> vocab{{"<unk>", 0}, {"<s>", 1}, {"</s>", 2}};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof name, "<0x%02X>", b);
    vocab.emplace_back(name, 3 + b);
  }
  for (const char* token : {"▁", "h", "i", "t", "e", "r", "日", "本", "語", "▁h", "▁hi", "he", "the", "▁the"})
    vocab.emplace_back(token, static_cast<int64_t>(vocab.size()));
  return vocab_json(vocab);
}
const std::string kSentencePieceMerges =
    merges_json({{"▁", "h"}, {"▁h", "i"}, {"h", "e"}, {"t", "he"}, {"▁", "the"}}, false);
const std::string kSentencePieceAdded =
    "[" + added_token(0, "<unk>") + "," + added_token(1, "<s>") + "," + added_token(2, "</s>") + "]";

HubFile sentencepiece_file(bool byte_fallback = true, bool fuse_unk = true) {
  HubFile file;
  file.normalizer =
      R"({"type":"Sequence","normalizers":[{"type":"Prepend","prepend":"▁"},{"type":"Replace","pattern":{"String":" "},"content":"▁"}]})";
  file.decoder =
      R"({"type":"Sequence","decoders":[{"type":"Replace","pattern":{"String":"▁"},"content":" "},{"type":"ByteFallback"},{"type":"Fuse"},{"type":"Strip","content":" ","start":1,"stop":0}]})";
  file.added = kSentencePieceAdded;
  file.post =
      R"({"type":"TemplateProcessing","single":[{"SpecialToken":{"id":"<s>","type_id":0}},{"Sequence":{"id":"A","type_id":0}}],"pair":[],"special_tokens":{"<s>":{"id":"<s>","ids":[1],"tokens":["<s>"]}}})";
  file.model =
      bpe_model(sentencepiece_vocab(), kSentencePieceMerges,
                std::string(R"("unk_token":"<unk>","ignore_merges":false,"fuse_unk":)") +
                    (fuse_unk ? "true" : "false") + R"(,"byte_fallback":)" + (byte_fallback ? "true" : "false"));
  return file;
}

Tokenizer hub(const HubFile& file) { return Tokenizer::hub(HubTokenizer::parse(file.json(), "tokenizer.json")); }

const std::vector<std::string> kHardTexts = {
    "hi there", "1234567",    "DON'T do it, I'LL go",
    "a\n\nb",   "a \n b",     "line\r\nnext",
    "a   b",    "trailing  ", "🙂",
    "日本語",   "  leading",  "mixed 日本 and 🙂!",
    "",
};

}  // namespace

TEST_CASE("a GPT-2 tokenizer.json: ByteLevel pre-tokens, merges by rank, an added token") {
  const Tokenizer t = hub(gpt2_file());
  CHECK(t.kind() == Tokenizer::Kind::Hub);
  CHECK(t.kind_name() == "hub");
  CHECK(t.size() == 261);
  // "hi" and " the": h i -> "hi" 256; Ġ t -> 257, then Ġt h -> 258, then Ġth e -> 259.
  CHECK(t.encode("hi the") == Ids{256, 259});
  // "<|endoftext|>" is found in the text before pre-tokenizing; "x" is its byte 120.
  CHECK(t.encode("hi<|endoftext|>x") == Ids{256, 260, 120});
  CHECK(t.special("<|endoftext|>") == 260);
  CHECK(!t.special("<|eot_id|>"));
  CHECK(!t.bos());
  CHECK(t.piece(259) == "Ġthe");
  CHECK(t.byte_length(259) == 4);  // " the"
  CHECK(t.byte_length(260) == 0);  // a special
  CHECK(t.decode({256, 259, 260}) == "hi the<|endoftext|>");
}

TEST_CASE("a Llama 3 tokenizer.json: its Split pattern, ignore_merges, its specials and bos") {
  const Tokenizer t = hub(llama3_file());
  // 123|456|7: "1 2" then "12 3" make 257, "4 5" then "45 6" make 259, "7" is byte 55.
  CHECK(t.encode("1234567") == Ids{257, 259, 55});
  // "DON" bytes 68 79 78, then the contraction "'T": "' T" makes 260.
  CHECK(t.encode("DON'T") == Ids{68, 79, 78, 260});
  // " world" is a token (261) no merge makes: ignore_merges takes it whole.
  CHECK(t.encode("hello world") == Ids{104, 101, 108, 108, 111, 261});
  CHECK(hub(llama3_file(false)).encode(" world") == Ids{32, 119, 111, 114, 108, 100});
  // The added token in the middle: "hi" (104 105), <|eot_id|> 263, "there" by bytes.
  CHECK(t.encode("hi<|eot_id|>there") == Ids{104, 105, 263, 116, 104, 101, 114, 101});
  CHECK(t.special("<|eot_id|>") == 263);
  CHECK(t.bos() == 262);
  // A prompt gets the post-processor's first token, as the library's encode(text) with specials does.
  CHECK(t.encode_prompt("123") == Ids{262, 257});
  CHECK(t.encode_prompt("").empty());
  CHECK(hub(gpt2_file()).encode_prompt("hi") == hub(gpt2_file()).encode("hi"));  // no post-processor: no bos
  // "a\n\nb": "a" 97, "\n\n" 10 10, "b" 98; emoji: its four bytes.
  CHECK(t.encode("a\n\nb") == Ids{97, 10, 10, 98});
  CHECK(t.encode("🙂") == Ids{0xF0, 0x9F, 0x99, 0x82});
}

TEST_CASE("a Qwen2 tokenizer.json: one digit a pre-token, so no merge joins digits") {
  const Tokenizer t = hub(llama3_file(false, kQwen2SplitPattern));
  CHECK(t.encode("1234567") == Ids{49, 50, 51, 52, 53, 54, 55});
}

TEST_CASE("a StarCoder/SmolLM-style tokenizer.json: Digits, each digit its own piece, then GPT-2's ByteLevel") {
  // The merges of llama3_file (0 "1 2" -> 256, 1 "12 3" -> 257) under GPT-2's pattern alone would
  // join 123; with Digits first, each digit is a piece, so none is merged.
  HubFile file = llama3_file(false);
  file.pre_tokenizer = R"({"type":"Sequence","pretokenizers":[{"type":"Digits","individual_digits":true},)"
                       R"({"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true}]})";
  const Tokenizer t = hub(file);
  CHECK(t.encode("123") == Ids{49, 50, 51});
  // "a12b": Digits gives a | 1 | 2 | b, GPT-2's pattern leaves each whole: 97, 49, 50, 98.
  CHECK(t.encode("a12b") == Ids{97, 49, 50, 98});
  // Without individual_digits a run of digits is one piece: "123" merged to 257 (ranks 0 then 1).
  file.pre_tokenizer = R"({"type":"Sequence","pretokenizers":[{"type":"Digits","individual_digits":false},)"
                       R"({"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true}]})";
  CHECK(hub(file).encode("x123") == Ids{120, 257});
}

TEST_CASE("a Qwen2 tokenizer.json's NFC normalizer: text NFC leaves alone goes through, other text is refused") {
  HubFile file = llama3_file(false, kQwen2SplitPattern);
  file.normalizer = R"({"type":"NFC"})";
  const Tokenizer t = hub(file);
  // ASCII, CJK, kana, Hangul and emoji are NFC as they stand: the same ids as without the normalizer.
  const Tokenizer plain = hub(llama3_file(false, kQwen2SplitPattern));
  for (const std::string text : {"1234567 hi", "日本語 ですね", "한국어", "🙂 ok", "Ça va, déjà"})
    CHECK(t.encode(text) == plain.encode(text));
  // "e" then U+0301 (combining acute) is "é" in NFC, and U+212B (Angstrom sign) is U+00C5: refused,
  // naming the character and its byte offset.
  CHECK_THROWS_MSG(t.encode("cafe\xCC\x81"), ValueError, "the character U+301 at byte 4 is one NFC may change");
  CHECK_THROWS_MSG(t.encode("1 \xE2\x84\xAB"), ValueError, "the character U+212B at byte 2");
}

TEST_CASE("a SentencePiece-style tokenizer.json: Prepend and Replace, byte fallback, Llama 2's decoder") {
  const Tokenizer t = hub(sentencepiece_file());
  // "▁hi▁there": ▁ h (rank 0) -> 268, ▁h i (1) -> 269; h e (2) -> 270, t he (3) -> 271,
  // ▁ the (4) -> 272; r 264, e 263.
  CHECK(t.encode("hi there") == Ids{269, 272, 264, 263});
  CHECK(t.decode({269, 272, 264, 263}) == "hi there");
  // 🙂 is no token: its bytes F0 9F 99 82 are <0xF0>.. = 3 + the byte.
  CHECK(t.encode("🙂") == Ids{259, 3 + 0xF0, 3 + 0x9F, 3 + 0x99, 3 + 0x82});
  CHECK(t.decode({259, 3 + 0xF0, 3 + 0x9F, 3 + 0x99, 3 + 0x82}) == "🙂");
  CHECK(t.encode("日本語") == Ids{259, 265, 266, 267});
  CHECK(t.encode("a\nb") == Ids{259, 3 + 'a', 3 + '\n', 3 + 'b'});
  // Each stretch between added tokens is normalized alone: "there" becomes "▁there", as the
  // library does, so decoding puts a space after </s>.
  CHECK(t.encode("hi</s>there") == Ids{269, 2, 272, 264, 263});
  CHECK(t.decode({269, 2, 272, 264, 263}) == "hi</s> there");
  CHECK(t.special("</s>") == 2);
  CHECK(t.bos() == 1);
  CHECK(t.piece(3 + 0x0A) == "<0x0A>");
  CHECK(t.byte_length(272) == 4);  // "▁the": " the"
  CHECK(t.byte_length(3 + 0xF0) == 1);
  // Half a character decodes to U+FFFD for each byte (the library's ByteFallback).
  CHECK(t.decode({3 + 0xF0, 3 + 0x9F}) == "\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST_CASE("a tokenizer.json without byte fallback: unknown characters become <unk>, fused or not") {
  // "▁xy": ▁ 259, then x and y, both unknown.
  CHECK(hub(sentencepiece_file(false, true)).encode("xy") == Ids{259, 0});
  CHECK(hub(sentencepiece_file(false, false)).encode("xy") == Ids{259, 0, 0});
}

TEST_CASE("a Metaspace tokenizer.json: ▁ for spaces, first piece prefixed, cut before each ▁") {
  HubFile file = sentencepiece_file();
  file.normalizer = "null";
  file.pre_tokenizer = R"({"type":"Metaspace","replacement":"▁","prepend_scheme":"first","split":true})";
  file.decoder = R"({"type":"Metaspace","replacement":"▁","prepend_scheme":"first","split":true})";
  const Tokenizer t = hub(file);
  // "▁hi" | "▁there": as above, 269 and 272 264 263.
  CHECK(t.encode("hi there") == Ids{269, 272, 264, 263});
  CHECK(t.decode(t.encode("hi there")) == "hi there");
  // After an added token the text does not start the text: no ▁ put before "hi" (h i: 260 261).
  CHECK(t.encode("</s>hi") == Ids{2, 260, 261});
}

TEST_CASE("decode(encode(text)) is the text for every pipeline on hard texts") {
  for (const HubFile& file :
       {gpt2_file(), llama3_file(), llama3_file(false, kQwen2SplitPattern), sentencepiece_file()}) {
    const Tokenizer t = hub(file);
    for (const std::string& text : kHardTexts) {
      INFO(file.pre_tokenizer << " on \"" << text << "\"");
      CHECK(t.decode(t.encode(text)) == text);
    }
  }
  const Tokenizer llama3 = hub(llama3_file());
  CHECK(llama3.decode(llama3.encode("hi<|eot_id|>there")) == "hi<|eot_id|>there");
}

TEST_CASE("a hub tokenizer round-trips through a checkpoint's metadata") {
  for (const HubFile& file : {gpt2_file(), llama3_file(), sentencepiece_file()}) {
    const Tokenizer t = hub(file);
    const auto metadata = t.metadata("tokenizer.target");
    CHECK(metadata.at("tokenizer.target.kind") == "hub");
    CHECK(metadata.count("tokenizer.target.json") == 1);
    const Tokenizer back = Tokenizer::from_metadata(Vocab(), metadata, "tokenizer.target", "model.safetensors");
    CHECK(back == t);
    CHECK(back.encode("hi there 1234567 🙂") == t.encode("hi there 1234567 🙂"));
    CHECK(back.bos() == t.bos());
  }
  CHECK_THROWS_MSG(Tokenizer::from_metadata(Vocab(), {{"tokenizer.target.kind", "hub"}}, "tokenizer.target", "m"),
                   DataError, "m: tokenizer.target.kind is hub but there is no tokenizer.target.json");
}

TEST_CASE("Tokenizer::read_file tells a tokenizer.json by its content") {
  const auto path = std::filesystem::temp_directory_path() / ("gradformer-hub-" + std::to_string(::getpid()) + ".json");
  std::ofstream(path) << llama3_file().json();
  const Tokenizer t = Tokenizer::read_file(path.string());
  CHECK(t.kind() == Tokenizer::Kind::Hub);
  CHECK(t.encode("1234567") == Ids{257, 259, 55});
  CHECK(Tokenizer::read_hub_file(path.string()) == t);
  std::filesystem::remove(path);
}

TEST_CASE("a tokenizer.json the reader does not support is refused, naming the part") {
  const auto refused = [](const HubFile& file, const std::string& expected) {
    CHECK_THROWS_MSG(hub(file), DataError, expected);
  };
  HubFile file = gpt2_file();
  file.model = R"({"type":"WordPiece","vocab":{"a":0}})";
  refused(file, "tokenizer.json: model type 'WordPiece' is not supported (supported: BPE)");
  file = sentencepiece_file();
  file.normalizer = R"({"type":"NFKC"})";
  refused(file,
          "tokenizer.json: normalizer type 'NFKC' is not supported (supported: Sequence of Prepend and Replace, "
          "Prepend, Replace, NFC, none)");
  file.normalizer = R"({"type":"Replace","pattern":{"Regex":" +"},"content":"▁"})";
  refused(file, "tokenizer.json: normalizer Replace pattern {\"Regex\":\" +\"} is not supported");
  file = gpt2_file();
  file.pre_tokenizer = R"({"type":"Whitespace"})";
  refused(file, "tokenizer.json: pre_tokenizer type 'Whitespace' is not supported");
  file.pre_tokenizer = split_then_byte_level("\\s+");
  refused(file, "tokenizer.json: pre_tokenizer Split pattern {\"Regex\":\"\\\\s+\"} is not supported");
  file.pre_tokenizer = R"({"type":"Split","pattern":{"Regex":"x"},"behavior":"Removed","invert":false})";
  refused(file, "pre_tokenizer Split pattern");
  file = gpt2_file();
  file.decoder = R"({"type":"WordPiece","prefix":"##"})";
  refused(file, "tokenizer.json: decoder type 'WordPiece' is not supported");
  file = gpt2_file();
  file.model = bpe_model(byte_level_vocab({}), merges_json({{"x", "yz"}}, false), R"("unk_token":null)");
  refused(file, "tokenizer.json: model.merges[0] \"x yz\": its right side \"yz\" is not a token of model.vocab");
  file.model = bpe_model(byte_level_vocab({}), merges_json({{"x", "y"}}, false), R"("unk_token":null)");
  refused(file, "model.merges[0] \"x y\": the token it makes \"xy\" is not a token of model.vocab");
  file.model = bpe_model(byte_level_vocab({}), "[]", R"("unk_token":null)");
  file.model.replace(file.model.find("\"dropout\":null"), 14, "\"dropout\":0.1");
  refused(file, "model.dropout 0.1 is not supported (supported: null)");
  file = gpt2_file();
  file.added =
      R"([{"id":1,"content":"<mask>","single_word":false,"lstrip":true,"rstrip":false,"normalized":false,"special":true}])";
  refused(file, "added token \"<mask>\" (id 1) has lstrip true, which is not supported");
  file = sentencepiece_file();
  file.model.replace(file.model.find("\"unk_token\":\"<unk>\""), 19, "\"unk_token\":\"<nope>\"");
  refused(file, "tokenizer.json: model.unk_token \"<nope>\" is not a token of model.vocab");
  file = gpt2_file();
  file.added = "[" + added_token(300, "<|gap|>") + "]";  // ids 261 .. 299 are no token
  refused(file, "tokenizer.json: no token has id 261");
  CHECK_THROWS_MSG(HubTokenizer::parse("{\"model\": [1,", "tokenizer.json"), DataError,
                   "tokenizer.json: not a tokenizer.json");
}

TEST_CASE("added tokens are matched longest first at the leftmost place") {
  HubFile file = gpt2_file();
  // <|endoftext|> 260 (normalized) and <|end|> 261: at "<|end" both could start; the longer wins.
  file.added = "[" + added_token(260, "<|endoftext|>", true) + "," + added_token(261, "<|end|>") + "]";
  const Tokenizer t = hub(file);
  CHECK(t.size() == 262);
  CHECK(t.encode("<|endoftext|><|end|>") == Ids{260, 261});
  // "x<|end" is no token: its bytes, "<" 60 "|" 124 "e" 101 "n" 110 "d" 100.
  CHECK(t.encode("x<|end") == Ids{120, 60, 124, 101, 110, 100});
}

TEST_CASE("merges are applied lowest rank first, one at a time, the leftmost of equal ranks") {
  HubFile file = gpt2_file();
  // Merges 0 "a a" -> 256 "aa", 1 "aa a" -> 257 "aaa". "aaaa": a a at 0 and 2 (rank 0) -> aa aa;
  // "aaa": a a at 0 -> aa a, then aa a (rank 1) -> aaa.
  file.model =
      bpe_model(byte_level_vocab({"aa", "aaa"}), merges_json({{"a", "a"}, {"aa", "a"}}, false), R"("unk_token":null)");
  file.added = "[]";
  const Tokenizer t = hub(file);
  CHECK(t.encode("aaaa") == Ids{256, 256});
  CHECK(t.encode("aaa") == Ids{257});
  CHECK(t.encode("aaaaa") == Ids{256, 257});
}

TEST_CASE("tokens added to a hub tokenizer: after its ids, found by special(), decoded, kept in its metadata") {
  const Tokenizer base = hub(llama3_file());  // 264 ids, <|eot_id|> 263 among its added tokens
  const Tokenizer t = base.with_added({"<|im_start|>", "<|eot_id|>", "<|im_end|>"});
  CHECK(t.size() == 266);
  CHECK(t.added() == std::vector<std::string>{"<|im_start|>", "<|im_end|>"});  // the one it had is left out
  CHECK(t.special("<|im_start|>") == 264);
  CHECK(t.special("<|im_end|>") == 265);
  CHECK(t.special("<|eot_id|>") == 263);
  // Never produced by encode: a text spelling one is text. Decoded between the runs of the file's ids.
  CHECK(t.encode("hi<|im_end|>") == base.encode("hi<|im_end|>"));
  CHECK(t.decode({264, 104, 105, 265, 263}) == "<|im_start|>hi<|im_end|><|eot_id|>");
  CHECK(t.byte_length(265) == 0);
  CHECK(t.piece(264) == "<|im_start|>");
  const auto metadata = t.metadata("tokenizer.target");
  CHECK(metadata.at("tokenizer.target.added") == "<|im_start|>\n<|im_end|>\n");
  CHECK(Tokenizer::from_metadata(Vocab(), metadata, "tokenizer.target", "m") == t);
}
