// A text file as one stream of tokens (transformer/data/text_blocks.h): the held-out tail, the
// random training blocks and their shift, the consecutive evaluation blocks, and every error a file
// can cause, each checked against what the definitions give by hand.
#include <filesystem>
#include <fstream>
#include <random>

#include "catch.h"
#include "tensor/support/error.h"
#include "transformer/data/data_error.h"
#include "transformer/data/text_blocks.h"

using namespace gradformer;

namespace {

std::string temp_file(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("gradformer_test_text_" + std::to_string(std::random_device{}()) + "_" + name))
                               .string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

// Ids 4 + i: what the bytes tokenizer gives the bytes 0, 1, 2, ...
std::vector<int64_t> ids(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(4 + i);
  return out;
}

}  // namespace

TEST_CASE("held_out_start: the last tenth of the bytes, never inside a UTF-8 character") {
  CHECK(held_out_start(std::string(100, 'a')) == 90);
  CHECK(held_out_start(std::string(109, 'a')) == 99);  // 10 of 109 held out: the tenth rounded down
  CHECK(held_out_start("ab") == 2);                    // a tenth of 2 bytes is none
  // "é" is C3 A9: a cut at 90 that falls on A9 moves to the next character.
  const std::string text = std::string(89, 'a') + "\xC3\xA9" + std::string(9, 'b');  // 100 bytes
  CHECK(held_out_start(text) == 91);
}

TEST_CASE("split_text: the bytes tokenizer's ids of both parts, and a file too short names its counts") {
  const Tokenizer bytes = Tokenizer::bytes();
  const std::string text = "abcdefghijklmnopqrst";  // 20 bytes: 18 train, 2 held out
  const TextTokens parts = split_text(text, bytes, 4, "t.txt");
  REQUIRE(parts.train.size() == 18);
  CHECK(parts.train.front() == 4 + 'a');
  CHECK(parts.valid == std::vector<int64_t>{4 + 's', 4 + 't'});
  // context 17 needs 18 training tokens: just fits; 18 needs 19.
  CHECK(split_text(text, bytes, 17, "t.txt").train.size() == 18);
  CHECK_THROWS_MSG(split_text(text, bytes, 18, "t.txt"), DataError,
                   "t.txt: too short for a language model with context 18: the bytes tokenizer makes 20 tokens of it, "
                   "18 in the training part (the first 90% of the bytes) and 2 in the held-out tail; one training "
                   "block needs context + 1 = 19 tokens and the tail at least 2, so about 22 tokens in all");
  // 19 bytes: 1 held out, too few to predict one token from another.
  CHECK_THROWS_MSG(split_text(text.substr(0, 19), bytes, 4, "t.txt"), DataError, "1 in the held-out tail");
}

TEST_CASE("text_eval_batches: consecutive blocks overlapping by one token, each token but the first predicted once") {
  // 10 tokens, context 4: blocks [0..4], [4..8], [8, 9].
  const std::vector<LmBatch> batches = text_eval_batches(ids(10), 4, 2);
  REQUIRE(batches.size() == 2);
  CHECK(batches[0].inputs.to_vector<int64_t>() == std::vector<int64_t>{4, 5, 6, 7, /**/ 8, 9, 10, 11});
  CHECK(batches[0].targets.to_vector<int64_t>() == std::vector<int64_t>{5, 6, 7, 8, /**/ 9, 10, 11, 12});
  CHECK(batches[1].inputs.to_vector<int64_t>() == std::vector<int64_t>{12});
  CHECK(batches[1].targets.to_vector<int64_t>() == std::vector<int64_t>{13});
  CHECK(batches[0].ntokens + batches[1].ntokens == 9);
  // 9 tokens: the last block ends exactly at the end, nothing left over.
  const std::vector<LmBatch> exact = text_eval_batches(ids(9), 4, 8);
  REQUIRE(exact.size() == 1);
  CHECK(exact[0].ntokens == 8);
  CHECK_THROWS_AS(text_eval_batches(ids(1), 4, 2), ValueError);
}

TEST_CASE("predicted_bytes counts every token's bytes but the first's") {
  const Tokenizer bytes = Tokenizer::bytes();
  CHECK(predicted_bytes(bytes.encode("hello"), bytes) == 4);
  const Tokenizer bpe = Tokenizer::learn_bpe({"aaaa aaaa aaaa"}, 262);  // merges "a a", then "aa aa"
  const std::vector<int64_t> tokens = bpe.encode("aaaa aaaa");
  REQUIRE(tokens.size() == 3);               // "aaaa", " ", "aaaa" (GPT-2's pre-tokens: "aaaa", " aaaa")
  CHECK(predicted_bytes(tokens, bpe) == 5);  // " " and "aaaa"
}

TEST_CASE("RandomTextBlocks: targets are the inputs shifted by one, each row a window of the text, resumable") {
  const std::vector<int64_t> tokens = ids(50);
  RandomTextBlocks blocks(tokens, 6, 3, 7);
  CHECK(blocks.batches_per_epoch() == 2);  // 50 tokens / (3 x 6)
  const LmBatch b = blocks.next();
  REQUIRE(b.inputs.shape() == Shape{3, 6});
  CHECK(b.ntokens == 18);
  const std::vector<int64_t> in = b.inputs.to_vector<int64_t>(), out = b.targets.to_vector<int64_t>();
  for (size_t row = 0; row < 3; ++row) {
    const int64_t start = in[row * 6] - 4;
    REQUIRE(start >= 0);
    REQUIRE(start + 6 < 50);  // the block's 7 tokens are inside the text
    for (size_t t = 0; t < 6; ++t) {
      CHECK(in[row * 6 + t] == tokens[static_cast<size_t>(start) + t]);
      CHECK(out[row * 6 + t] == tokens[static_cast<size_t>(start) + t + 1]);
    }
  }
  const auto state = blocks.state();
  CHECK(state.at("data.batches") == "1");
  RandomTextBlocks resumed(tokens, 6, 3, 99);  // another seed: the state decides
  resumed.restore(state, "ckpt");
  for (int i = 0; i < 3; ++i)
    CHECK(resumed.next().inputs.to_vector<int64_t>() == blocks.next().inputs.to_vector<int64_t>());
  CHECK(resumed.batches_drawn() == 4);
  RandomTextBlocks other_text(ids(40), 6, 3, 7);
  CHECK_THROWS_MSG(other_text.restore(state, "ckpt"), CheckpointError,
                   "ckpt: the run trained on 50 tokens, the text now has 40 in its training part");
  CHECK_THROWS_AS(RandomTextBlocks(ids(6), 6, 3, 7), ValueError);  // no room for one block of 7
}

TEST_CASE("read_text_file: any bytes, or UTF-8 text, and a missing, an empty and a non-UTF-8 file named") {
  const std::string binary = temp_file("binary", std::string("a\xFF\x00z", 4));
  CHECK(read_text_file(binary, false) == std::string("a\xFF\x00z", 4));
  CHECK_THROWS_MSG(read_text_file(binary, true), DataError,
                   binary + ": not UTF-8 text: byte 0xFF at offset 1 does not start a valid character");
  const std::string empty = temp_file("empty", "");
  CHECK_THROWS_MSG(read_text_file(empty, false), DataError, empty + ": the file is empty");
  CHECK_THROWS_MSG(read_text_file(empty + ".missing", false), DataError, empty + ".missing: cannot open");
  std::filesystem::remove(binary), std::filesystem::remove(empty);
}

TEST_CASE("one_line shows line ends as a return sign, tabs and other control characters escaped") {
  CHECK(one_line("a\nb\tc\x01 d") == "a⏎b\\tc\\x01 d");
  CHECK(one_line("caf\xC3\xA9") == "caf\xC3\xA9");
  CHECK(one_line("a\xC3 \xA9\xE2\x8F\x8E") == "a\\xC3 \\xA9\xE2\x8F\x8E");  // halves escaped, ⏎ kept
  CHECK(one_line("\xF0\x9F") == "\\xF0\\x9F");
}
