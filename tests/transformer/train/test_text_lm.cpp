// A language model of a text file (decoder-only text, transformer/data/text_blocks.h): it learns a
// repeated text, bits per byte from first principles, an exact resume, the tokenizer kept in the
// checkpoint, and every error a file or an option can cause, with its message.
#include <cmath>

#include "training_helpers.h"
#include "transformer/data/text_blocks.h"
#include "transformer/evaluate/evaluate.h"
#include "transformer/model/masks.h"
#include "transformer/train/trainer.h"

using namespace gradformer;
using test::TempDir;

namespace {

std::string repeated(const std::string& line, int times) {
  std::string text;
  for (int i = 0; i < times; ++i) text += line;
  return text;
}

TrainOptions text_options(const TempDir& dir, const std::string& name, const std::string& text) {
  test::write_text(dir / (name + ".txt"), text);
  TrainOptions o = default_train_options("text", Architecture::DecoderOnly);
  o.text_path = dir / (name + ".txt"), o.out_dir = dir / name;
  o.d_model = 32, o.d_ff = 64, o.heads = 2, o.layers = 1, o.dropout = 0, o.context = 24, o.max_len = 24;
  o.batch_size = 8, o.warmup = 20, o.lr = 1, o.quiet = true, o.seed = 3;
  return o;
}

// -log p(token t+1 | the block up to t) summed by hand, each block through its own forward pass
// (no padding, no batching): what score_text must total.
double nats_by_hand(DecoderOnly& model, const std::vector<int64_t>& tokens, int64_t context) {
  InferenceGuard guard(model);
  const int64_t V = model.config().tgt_vocab;
  double total = 0;
  for (size_t start = 0; start + 1 < tokens.size(); start += static_cast<size_t>(context)) {
    const size_t end = std::min(tokens.size(), start + static_cast<size_t>(context) + 1);
    const auto T = static_cast<int64_t>(end - start - 1);
    const Tensor ids = from_vector(std::vector<int64_t>(tokens.begin() + static_cast<std::ptrdiff_t>(start),
                                                        tokens.begin() + static_cast<std::ptrdiff_t>(end) - 1),
                                   {1, T});
    const std::vector<double> logits =
        model.forward(ids, causal_mask(T).unsqueeze(0)).value().contiguous().to_vector<double>();  // [1, T, V]
    for (int64_t t = 0; t < T; ++t) {
      double z = 0;
      for (int64_t v = 0; v < V; ++v) z += std::exp(logits[static_cast<size_t>(t * V + v)]);
      total += std::log(z) - logits[static_cast<size_t>(t * V + tokens[start + static_cast<size_t>(t) + 1])];
    }
  }
  return total;
}

}  // namespace

TEST_CASE(
    "train: decoder-only text learns a repeated text far below the uniform ln(vocab), and says its bits per byte") {
  TempDir dir("text-learns");
  TrainOptions o = text_options(dir, "cat", repeated("the cat sat on the mat.\n", 60));  // 1440 bytes
  o.steps = 120;
  const TrainReport r = train(o);
  REQUIRE(r.losses.size() == 120);
  // Uniform over the 260 ids: ln 260 = 5.56 nats; the text's 10 distinct bytes alone: ln 10 = 2.30.
  // Given the bytes before it, every byte of the text is certain.
  CHECK(r.losses.front() > 4.5);
  CHECK(r.valid_loss < 0.2);
  // The checkpoint keeps the tokenizer (bytes, both sides) and the block length.
  LoadedDecoderOnly saved = load_decoder_only_checkpoint(r.checkpoint_path);
  // The validation is score_text on the held-out tail, to the bit, and the run says its bits per byte.
  const std::vector<int64_t> tail = split_text(test::read_bytes(o.text_path), Tokenizer::bytes(), 24, "cat").valid;
  const TextScore valid = score_text(*saved.model, saved.info.target_tokenizer, tail, 24);
  CHECK(test::same_bits({valid.loss}, {r.valid_loss}));
  CHECK(valid.tokens == 143);  // the last 144 of the 1440 bytes, all but the first predicted
  bool bits_line = false;
  for (const std::string& line : r.summary)
    bits_line |= line.find(message(", bits per byte ", valid.bits_per_byte(), " (143 tokens predicted, 143 bytes)")) !=
                 std::string::npos;
  CHECK(bits_line);
  CHECK(saved.info.target_tokenizer.kind() == Tokenizer::Kind::Bytes);
  CHECK(saved.info.source_tokenizer == Tokenizer());  // one side, the target's: the source left empty
  CHECK(saved.info.config.tgt_vocab == 260);
  CHECK(saved.info.state.at("options.context") == "24");
  CHECK(saved.info.state.at("options.tokenizer") == "bytes");
}

TEST_CASE("score_text stops on a loss that is not finite, naming the block of tokens where it began") {
  const std::string text = repeated("to be or not to be, that is the question. ", 2);
  const Tokenizer tokenizer = Tokenizer::bytes();
  TransformerConfig c = decoder_only_config(tokenizer.size());
  c.d_model = 16, c.d_ff = 32, c.heads = 2, c.layers = 1, c.max_len = 32, c.dropout = 0, c.dtype = DType::Float32;
  DecoderOnly model(c, 5);
  bool found = false;  // every weight finite, the final LayerNorm's gain 3e38: the scores overflow
  for (auto& [name, p] : model.named_parameters())
    if (name == "decoder.norm.weight") Tensor(p.value()).fill_(3e38), found = true;
  REQUIRE(found);
  CHECK_THROWS_MSG(score_text(model, tokenizer, tokenizer.encode(text), 10), ValueError,
                   "score: the loss on tokens 0 to 10 is ");
}

TEST_CASE("score_text: bits per byte is the nats over the predicted tokens over ln 2 times their bytes") {
  const std::string text = repeated("to be or not to be, that is the question. ", 4);  // 172 bytes, ASCII
  for (const Tokenizer& tokenizer : {Tokenizer::bytes(), Tokenizer::learn_bpe({text}, 300)}) {
    INFO(tokenizer.kind_name());
    TransformerConfig c = decoder_only_config(tokenizer.size());
    c.d_model = 16, c.d_ff = 32, c.heads = 2, c.layers = 1, c.max_len = 32, c.dropout = 0, c.dtype = DType::Float64;
    DecoderOnly model(c, 5);
    const std::vector<int64_t> tokens = tokenizer.encode(text);
    // The bytes the predicted tokens stand for: the text but its first token.
    const auto bytes = static_cast<int64_t>(text.size() - tokenizer.decode_bytes({tokens.front()}).size());
    const auto predicted = static_cast<int64_t>(tokens.size()) - 1;
    // A model whose every parameter is 0 gives logits 0: the uniform distribution, ln V nats a token.
    for (const Variable& p : model.parameters()) Tensor(p.value()).fill_(0);  // a view: the same storage
    TextScore s = score_text(model, tokenizer, tokens, 10);
    CHECK(s.tokens == predicted);
    CHECK(s.bytes == bytes);
    CHECK(std::abs(s.loss - std::log(static_cast<double>(tokenizer.size()))) < 1e-12);
    CHECK(std::abs(s.bits_per_byte() - std::log2(static_cast<double>(tokenizer.size())) *
                                           static_cast<double>(predicted) / static_cast<double>(bytes)) < 1e-12);
    if (tokenizer.kind() == Tokenizer::Kind::Bytes) CHECK(std::abs(s.bits_per_byte() - std::log2(260.0)) < 1e-12);
    // A model of random weights: its nats summed block by block by hand.
    DecoderOnly random(c, 6);
    s = score_text(random, tokenizer, tokens, 10);
    const double nats = nats_by_hand(random, tokens, 10);
    CHECK(std::abs(s.loss * static_cast<double>(predicted) - nats) < 1e-9);
    CHECK(std::abs(s.bits_per_byte() - nats / (std::log(2.0) * static_cast<double>(bytes))) < 1e-12);
    CHECK(std::abs(s.perplexity() - std::exp(nats / static_cast<double>(predicted))) < 1e-9);
  }
}

TEST_CASE("train: decoder-only text resumed from a checkpoint continues bit for bit, bytes and bpe") {
  TempDir dir("text-resume");
  const std::string text = repeated("a rose is a rose is a rose. ", 30);  // 840 bytes, ASCII
  for (const std::string tokenizer : {"bytes", "bpe"}) {
    INFO(tokenizer);
    auto options = [&](const std::string& name) {
      TrainOptions o = text_options(dir, tokenizer + name, text);
      o.tokenizer = tokenizer, o.vocab_size = tokenizer == "bpe" ? 265 : 0, o.dropout = 0.1, o.steps = 6;
      return o;
    };
    TrainOptions fo = options("full");
    const TrainReport full = train(fo);
    REQUIRE(full.losses.size() == 6);
    TrainOptions first = options("part");
    first.stop_after = 3;
    const TrainReport part = train(first);
    CHECK(test::same_bits(part.losses, {full.losses.begin(), full.losses.begin() + 3}));
    TrainOptions second = options("resumed");
    second.seed = 99, second.vocab_size = 0;  // the checkpoint's options and tokenizer win
    const TrainReport resumed = train(second, part.checkpoint_path);
    CHECK(resumed.first_step == 4);
    CHECK(test::same_bits(resumed.losses, {full.losses.begin() + 3, full.losses.end()}));
    CHECK(test::same_bits({resumed.valid_loss}, {full.valid_loss}));
    const auto a = load_decoder_only_checkpoint(full.checkpoint_path),
               b = load_decoder_only_checkpoint(resumed.checkpoint_path);
    CHECK(a.info.target_tokenizer == b.info.target_tokenizer);
    CHECK(a.info.target_tokenizer.size() == (tokenizer == "bpe" ? 265 : 260));
    for (const auto& [name, t] : a.model->state_dict()) CHECK(test::bitwise_equal(t, b.model->state_dict().at(name)));
  }
}

TEST_CASE("train: decoder-only text refuses, before training, each file and option it cannot use") {
  TempDir dir("text-errors");
  const std::string text = repeated("abc ", 30);
  TrainOptions o = text_options(dir, "ok", text);
  auto refused = [&](TrainOptions bad) { return test::error_message<Error>([&] { train(bad); }); };
  auto with_text = [&](const std::string& name, const std::string& content) {
    TrainOptions t = o;
    test::write_text(dir / name, content);
    t.text_path = dir / name;
    return t;
  };
  CHECK_THAT(refused(with_text("empty.txt", "")), Catch::Matchers::EndsWith("empty.txt: the file is empty: a language "
                                                                            "model needs text to learn from"));
  CHECK(refused(with_text("short.txt", repeated("ab", 10))) ==
        dir / "short.txt" +
            ": too short for a language model with context 24: the bytes tokenizer makes 20 tokens of it, 18 in the "
            "training part (the first 90% of the bytes) and 2 in the held-out tail; one training block needs context + "
            "1 = 25 tokens and the tail at "
            "least 2, so about 28 tokens in all: give a longer file or a smaller context");
  TrainOptions latin1 = with_text("latin1.txt", "caf\xE9 au lait, " + text);
  latin1.tokenizer = "bpe";
  CHECK(refused(latin1) == dir / "latin1.txt" +
                               ": not UTF-8 text: byte 0xE9 at offset 3 does not start a valid character; byte-pair "
                               "encoding reads UTF-8 text (the bytes tokenizer reads any file)");
  latin1.tokenizer = "bytes";
  latin1.stop_after = 1, latin1.out_dir = dir / "latin1";
  CHECK_NOTHROW(train(latin1));  // any bytes are text to the bytes tokenizer
  TrainOptions missing = o;
  missing.text_path = dir / "missing.txt";
  CHECK_THAT(refused(missing), Catch::Matchers::StartsWith(dir / "missing.txt: cannot open for reading"));
  TrainOptions words = o;
  words.tokenizer = "words";
  CHECK(
      refused(words) ==
      "train: tokenizer words is not for decoder-only text, whose file is read as bytes (its line ends and spaces are "
      "text too; a word unseen in training would be <unk>): use bytes or bpe");
  TrainOptions sized = o;
  sized.vocab_size = 300;
  CHECK(refused(sized) ==
        "train: vocab_size is not used by the bytes tokenizer (its vocabulary is the 4 specials and "
        "the 256 bytes), got 300");
  sized.tokenizer = "bpe", sized.vocab_size = 100;
  CHECK(refused(sized) ==
        "train: vocab_size must be at least 260 for bpe (the 4 specials and the 256 bytes; 0: 1024), got 100");
  TrainOptions wide = o;
  wide.context = 25;
  CHECK(refused(wide) ==
        "train: context must be from 1 to max_len 24 (the model reads context tokens at once), got 25");
  TrainOptions none = o;
  none.text_path = "";
  CHECK(refused(none) == "train: text_path is empty: decoder-only text trains on a text file");
  TrainOptions kind = o;
  kind.tokenizer = "chars";
  CHECK(refused(kind) == "train: tokenizer must be words, bytes or bpe, got 'chars'");
  TrainOptions other = default_train_options("toy-lm", Architecture::DecoderOnly);
  other.text_path = o.text_path;
  CHECK(refused(other) == "train: text_path is not used by decoder-only toy-lm");
  CHECK(!std::filesystem::exists(o.out_dir));  // nothing trained, nothing written
}
