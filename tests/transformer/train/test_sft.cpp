// Supervised fine-tuning (transformer/train/sft.h, decoder-only task sft): the vocabulary grown by
// the template's tokens with the mean row, the loss on the answers only, a run from a saved model
// that records its template, and resuming it bit for bit.
#include <cmath>

#include "autograd/helpers.h"
#include "training_helpers.h"
#include "transformer/data/data_error.h"
#include "transformer/model/encoder_only.h"
#include "transformer/model/masks.h"
#include "transformer/store/checkpoint.h"
#include "transformer/train/sft.h"
#include "transformer/train/trainer.h"

using namespace gradformer;
using test::TempDir;

namespace {

double largest_difference(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = a.to(DType::Float64).contiguous().to_vector<double>(),
                            y = b.to(DType::Float64).contiguous().to_vector<double>();
  REQUIRE(x.size() == y.size());
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
  return worst;
}

TransformerConfig tiny(int64_t vocab, bool tied) {
  TransformerConfig c = decoder_only_config(vocab);
  c.d_model = 16, c.d_ff = 32, c.heads = 2, c.layers = 1, c.max_len = 64, c.dropout = 0, c.tie_embeddings = tied;
  return c;
}

/// A small random bytes model saved as train would save it: what sft starts from.
std::string saved_base(const TempDir& dir) {
  const Tokenizer bytes = Tokenizer::bytes();
  const TransformerConfig c = tiny(bytes.size(), true);
  const DecoderOnly model(c, 3);
  const std::string path = dir / "base.safetensors";
  save_checkpoint(path, model, c, {}, {c, {}, bytes, {}});
  return path;
}

/// Instructions whose answers are their inputs reversed: "a b c" -> "c b a".
std::string reversal_data(int n) {
  const char* words[] = {"ab", "cd", "ef", "gh"};
  std::string lines;
  for (int i = 0; i < n; ++i) {
    const std::string a = words[i % 4], b = words[(i / 4) % 4];
    lines += R"({"instruction": "Reverse.", "input": ")" + a + " " + b + R"(", "output": ")" + b + " " + a + "\"}\n";
  }
  return lines;
}

TrainOptions sft_options(const TempDir& dir, const std::string& name, const std::string& base) {
  TrainOptions o = default_train_options("sft", Architecture::DecoderOnly);
  o.data_path = dir / "chat.jsonl", o.init_path = base, o.out_dir = dir / name;
  o.batch_size = 4, o.steps = 6, o.warmup = 2, o.quiet = true;
  return o;
}

}  // namespace

TEST_CASE("grow_vocabulary: the new rows are the mean row, so a new token's logit is the mean of the others") {
  for (bool tied : {true, false}) {
    INFO("tied " << tied);
    TransformerConfig c = tiny(7, tied);
    c.dtype = DType::Float64;
    const DecoderOnly model(c, 1);
    TransformerConfig grown_config = c;
    grown_config.src_vocab = grown_config.tgt_vocab = 9;
    DecoderOnly grown(grown_config, 2, skip_init);
    load_parameters(grown, grow_vocabulary(model.state_dict(), 7, 7, 9), "grown");
    const StateDict after = grown.state_dict();
    CHECK(after.at("embed.weight").shape() == Shape{9, 16});
    const Tensor ids = from_vector(std::vector<int64_t>{1, 4, 6, 2}, {1, 4});
    const Tensor mask = causal_mask(4).unsqueeze(0);
    const std::vector<double> before = model.forward(ids, mask).value().contiguous().to_vector<double>();  // [1, 4, 7]
    const std::vector<double> now = grown.forward(ids, mask).value().contiguous().to_vector<double>();     // [1, 4, 9]
    for (size_t t = 0; t < 4; ++t) {
      double mean = 0;
      for (size_t v = 0; v < 7; ++v) {
        CHECK(now[t * 9 + v] == Approx(before[t * 7 + v]).margin(1e-12));  // the old tokens' logits as they were
        mean += before[t * 7 + v] / 7;
      }
      CHECK(now[t * 9 + 7] == Approx(mean).margin(1e-12));
      CHECK(now[t * 9 + 8] == Approx(mean).margin(1e-12));
    }
  }
  CHECK_THROWS_MSG(grow_vocabulary({}, 7, 7, 6), ValueError,
                   "grow_vocabulary: from 7 ids in 7 rows to 6 ids is no growth of a vocabulary");
}

TEST_CASE("grow_vocabulary of a padded embedding: the new ids take spare rows, set to the mean of the real ones") {
  // 3 ids in 5 rows (an imported model's padding), grown to 4 ids: still 5 rows, row 3 the mean of rows 0-2.
  StateDict p{{"embed.weight", from_vector(std::vector<double>{1, 2, 3, 4, 5, 6, 9, 9, 7, 7}, {5, 2})},
              {"generator.bias", from_vector(std::vector<double>{1, 2, 6, 9, 7}, {5})}};
  const StateDict g = grow_vocabulary(p, 3, 5, 4);
  CHECK(g.at("embed.weight").to_vector<double>() == std::vector<double>{1, 2, 3, 4, 5, 6, 3, 4, 7, 7});
  CHECK(g.at("generator.bias").to_vector<double>() == std::vector<double>{1, 2, 6, 3, 7});
  // Grown past its rows: 3 ids in 4 rows to 6 ids, 6 rows, rows 3-5 the mean.
  const StateDict h = grow_vocabulary({{"generator.bias", from_vector(std::vector<double>{1, 2, 6, 9}, {4})}}, 3, 4, 6);
  CHECK(h.at("generator.bias").to_vector<double>() == std::vector<double>{1, 2, 6, 3, 3, 3});
}

TEST_CASE("with_chat_tokens: the template's missing tokens added after the tokenizer's ids, their rows the mean row") {
  TransformerConfig c = tiny(Tokenizer::bytes().size(), /*tied=*/false);
  c.dtype = DType::Float64;
  const DecoderOnly model(c, 5);
  const Tokenizer bytes = Tokenizer::bytes();
  const ChatModel chat = with_chat_tokens(model, bytes, ChatTemplate::Llama3, 7);  // four tokens: ids 260 to 263
  CHECK(chat.tokenizer.size() == bytes.size() + 4);
  CHECK(chat.tokenizer.special("<|eot_id|>") == bytes.size() + 3);
  CHECK(chat.model->config().tgt_vocab == bytes.size() + 4);
  CHECK(chat.model->dropout_generator()->state() == Generator(7, 1).state());  // dropout as --seed 7 draws it
  const Tensor was = model.embed->weight.value(), now = chat.model->embed->weight.value();  // [260, 16], [264, 16]
  CHECK(largest_difference(now.narrow(0, 0, bytes.size()), was) == 0);
  const Tensor mean_row = mean(was, {0}, true);  // [1, 16]
  for (int64_t id = bytes.size(); id < bytes.size() + 4; ++id)
    CHECK(largest_difference(now.narrow(0, id, 1), mean_row) < 1e-15);
  CHECK(largest_difference(chat.model->output_projection->weight.value().narrow(0, bytes.size(), 1),
                           mean(model.output_projection->weight.value(), {0}, true)) < 1e-15);
  // A tokenizer that has them all: the same model, copied; the tokenizer as it was.
  const ChatModel again = with_chat_tokens(*chat.model, chat.tokenizer, ChatTemplate::Llama3, 7);
  CHECK(again.tokenizer.size() == chat.tokenizer.size());
  CHECK(again.model.get() != chat.model.get());
  CHECK(largest_difference(again.model->embed->weight.value(), now) == 0);
}

TEST_CASE("freeze_all_but_adapters: the adapters, and with target embed the embedding and output layer, train") {
  for (const bool tied : {true, false}) {
    for (const bool embed : {false, true}) {
      INFO("tied " << tied << ", embed " << embed);
      TransformerConfig c = tiny(11, tied);
      c.block.lora = {.rank = 2, .alpha = 2, .embed = embed};
      const DecoderOnly model(c, 1);
      int64_t adapters = 0;
      for (const auto& [name, p] : model.named_parameters()) adapters += is_lora_parameter(name) ? p.numel() : 0;
      CHECK(adapters == 1 * 4 * 2 * (16 + 16));             // one layer: q, k, v, o, each r (in + out)
      const int64_t tables = tied ? 11 * 16 : 2 * 11 * 16;  // tied: the one matrix, counted once
      CHECK(freeze_all_but_adapters(model) == adapters + (embed ? tables : 0));
      CHECK(model.embed->weight.requires_grad() == embed);
      CHECK(model.output_projection->weight.requires_grad() == embed);
      for (const auto& [name, p] : model.named_parameters())
        if (name.find("linear1") != std::string::npos || name.find("norm") != std::string::npos)
          CHECK_FALSE(p.requires_grad());
    }
  }
}

TEST_CASE("chat_sequences: the answers and their end-of-turn scored, a conversation too long refused by its source") {
  const Tokenizer t = Tokenizer::bytes().with_added({"<|im_start|>", "<|im_end|>"});
  const std::vector<Conversation> one = {{{{Role::User, "q"}, {Role::Assistant, "ok"}}, "chat.jsonl:3"}};
  const std::vector<LmSequence> s = chat_sequences(one, t, ChatTemplate::ChatML, 64);
  REQUIRE(s.size() == 1);
  // <|im_start|> u s e r \n q <|im_end|> \n <|im_start|> a s s i s t a n t \n o k <|im_end|> \n
  CHECK(s[0].tokens.size() == 1 + 5 + 1 + 1 + 1 + 1 + 10 + 2 + 1 + 1);
  int64_t scored = 0;
  for (bool b : s[0].scored) scored += b;
  CHECK(scored == 3);  // "o", "k", <|im_end|>
  CHECK(s[0].scored[s[0].tokens.size() - 2]);
  CHECK_FALSE(s[0].scored.back());  // the newline after it
  CHECK_THROWS_MSG(chat_sequences(one, t, ChatTemplate::ChatML, 20), DataError,
                   "chat.jsonl:3: the conversation is 24 tokens as the chatml template writes it; the model reads at "
                   "most 20");
}

TEST_CASE("train sft: a bytes model gets chatml's tokens and two mean rows, learns its answers, records the template") {
  TempDir dir("sft");
  const std::string base = saved_base(dir);
  test::write_text(dir / "chat.jsonl", reversal_data(40));
  TrainOptions o = sft_options(dir, "run", base);
  o.steps = 60, o.lr = 1.0;
  const TrainReport r = train(o);
  const LoadedDecoderOnly tuned = load_decoder_only_checkpoint(r.checkpoint_path);
  CHECK(tuned.info.config.tgt_vocab == 262);
  CHECK(tuned.info.target_tokenizer.added() == std::vector<std::string>{"<|im_start|>", "<|im_end|>"});
  CHECK(tuned.info.state.at("chat.template") == "chatml");
  // 36 conversations trained on, 4 held out; the loss falls.
  CHECK(r.valid_loss > 0);
  CHECK(r.losses.back() < r.losses.front() / 2);
  bool reported = false;
  for (const std::string& line : r.summary) reported = reported || line.rfind("held-out answers (greedy): ", 0) == 0;
  CHECK(reported);
  // Fine-tuning it again keeps its tokens: none added, the vocabulary as it is.
  o.init_path = r.checkpoint_path, o.out_dir = dir / "again", o.steps = 2;
  CHECK(load_decoder_only_checkpoint(train(o).checkpoint_path).info.config.tgt_vocab == 262);
}

TEST_CASE("train sft: resumed from a checkpoint, it continues bit for bit") {
  TempDir dir("sft-resume");
  const std::string base = saved_base(dir);
  test::write_text(dir / "chat.jsonl", reversal_data(20));
  const TrainReport full = train(sft_options(dir, "full", base));
  TrainOptions first = sft_options(dir, "part", base);
  first.stop_after = 3;
  const TrainReport part = train(first);
  TrainOptions second = sft_options(dir, "resumed", base);
  const TrainReport resumed = train(second, part.checkpoint_path);
  CHECK(resumed.first_step == 4);
  CHECK(test::same_bits(resumed.losses, {full.losses.begin() + 3, full.losses.end()}));
}

TEST_CASE("train sft: what it needs is refused by name before any training") {
  TempDir dir("sft-refused");
  const std::string base = saved_base(dir);
  test::write_text(dir / "chat.jsonl", reversal_data(4));
  TrainOptions o = sft_options(dir, "run", base);
  o.init_path = "";
  CHECK_THROWS_MSG(train(o), TrainOptionError, "is empty: decoder-only sft fine-tunes a trained decoder-only model");
  o = sft_options(dir, "run", base);
  o.chat_template = "alpaca";
  CHECK_THROWS_MSG(train(o), TrainOptionError, "must be chatml or llama3, got 'alpaca'");
  // A model of words cannot write a template's line ends; an encoder-only one generates nothing.
  const Tokenizer words(Vocab::build({{"le", "chat"}}));
  const TransformerConfig c = tiny(words.size(), true);
  save_checkpoint(dir / "words.safetensors", DecoderOnly(c, 1), c, {}, {c, {}, words, {}});
  o = sft_options(dir, "run", dir / "words.safetensors");
  CHECK_THROWS_MSG(train(o), DataError, "words.safetensors's tokenizer is words (a closed list of whitespace words)");
  EncoderOnlyConfig e{.vocab = words.size(), .classes = 2};
  e.d_model = 16, e.d_ff = 32, e.heads = 2, e.layers = 1;
  save_encoder_only_checkpoint(dir / "encoder.safetensors", EncoderOnly(e, 1), {}, {e, words.vocab(), {"a", "b"}, {}});
  o = sft_options(dir, "run", dir / "encoder.safetensors");
  CHECK_THROWS_MSG(train(o), CheckpointError,
                   "encoder.safetensors is an encoder-only checkpoint; sft fine-tunes a decoder-only one (--init)");
  test::write_text(dir / "chat.jsonl", "{\"instruction\": \"a\"}\n");
  CHECK_THROWS_MSG(train(sft_options(dir, "run", base)), DataError, "chat.jsonl:1: \"output\" is missing");
}

TEST_CASE("train sft with LoRA: only the adapters move and have Adam moments, the base weights stay bit for bit") {
  TempDir dir("sft-lora");
  // A model whose tokenizer has chatml's tokens already: nothing is added, the embedding stays frozen.
  const Tokenizer chat = Tokenizer::bytes().with_added(chat_template_specials(ChatTemplate::ChatML));
  const TransformerConfig c = tiny(chat.size(), true);
  const std::string base = dir / "chat-base.safetensors";
  save_checkpoint(base, DecoderOnly(c, 3), c, {}, {c, {}, chat, {}});
  test::write_text(dir / "chat.jsonl", reversal_data(40));
  TrainOptions o = sft_options(dir, "lora", base);
  o.steps = 30, o.lr = 1.0;
  o.block.lora.rank = 2, o.block.lora.alpha = 4, o.block.lora = parse_lora_targets("q,v,ffn", o.block.lora);
  const TrainReport r = train(o);
  CHECK(r.losses.back() < r.losses.front());
  const CheckpointFile tuned = read_checkpoint_file(r.checkpoint_path);
  CHECK(tuned.info.config.block.lora == o.block.lora);
  const CheckpointFile start = read_checkpoint_file(base);
  // d 16, d_ff 32: W^Q 2 (16 + 16) = 64, W^V the same, the feed-forward's two 2 (16 + 32) = 96 each: 320
  int64_t adapters = 0;
  for (const auto& [name, t] : tuned.parameters) {
    INFO(name);
    if (is_lora_parameter(name)) {
      adapters += t.numel();
      if (name.back() == 'B') CHECK(max(mul(t, t)).item() > 0);  // trained away from zero
    } else {
      CHECK(t.to_vector<float>() == start.parameters.at(name).to_vector<float>());
    }
  }
  CHECK(adapters == 320);
  // Adam's moments for the adapters alone: m and v of each of the 8 adapter tensors.
  int64_t moments = 0;
  for (const auto& [name, t] : tuned.optimizer_state)
    moments += name.rfind("adam.m.", 0) == 0 || name.rfind("adam.v.", 0) == 0 ? 1 : 0;
  CHECK(moments == 2 * 8);
}

TEST_CASE("train sft with LoRA on a model that lacked the template's tokens trains the embedding too") {
  TempDir dir("sft-lora-embed");
  const std::string base = saved_base(dir);  // bytes: chatml's two tokens are added, their rows the mean row
  test::write_text(dir / "chat.jsonl", reversal_data(40));
  TrainOptions o = sft_options(dir, "lora", base);
  o.block.lora.rank = 2, o.block.lora.alpha = 2;
  const TrainReport r = train(o);
  const CheckpointFile tuned = read_checkpoint_file(r.checkpoint_path), start = read_checkpoint_file(base);
  LoraOptions expected = o.block.lora;
  expected.embed = true;  // frozen, the new rows would stay the mean row: <|im_end|> could never be told apart
  CHECK(tuned.info.config.block.lora == expected);
  const Tensor grown = tuned.parameters.at("embed.weight"), was = start.parameters.at("embed.weight");
  CHECK(grown.narrow(0, 0, was.size(0)).contiguous().to_vector<float>() != was.to_vector<float>());
  CHECK(tuned.parameters.at("decoder.layers.0.linear1.weight").to_vector<float>() ==
        start.parameters.at("decoder.layers.0.linear1.weight").to_vector<float>());
  int64_t moments = 0;  // the 8 adapter tensors of q, k, v, o and the embedding
  for (const auto& [name, t] : tuned.optimizer_state)
    moments += name.rfind("adam.m.", 0) == 0 || name.rfind("adam.v.", 0) == 0 ? 1 : 0;
  CHECK(moments == 2 * 9);
}

TEST_CASE("train sft with LoRA: resumed, it continues bit for bit, and adapters on a model that has them are refused") {
  TempDir dir("sft-lora-resume");
  const std::string base = saved_base(dir);
  test::write_text(dir / "chat.jsonl", reversal_data(20));
  auto lora = [&](const std::string& name) {
    TrainOptions o = sft_options(dir, name, base);
    o.block.lora.rank = 3, o.block.lora.alpha = 3;
    return o;
  };
  const TrainReport full = train(lora("full"));
  TrainOptions first = lora("part");
  first.stop_after = 3;
  const TrainReport part = train(first);
  const TrainReport resumed = train(lora("resumed"), part.checkpoint_path);
  CHECK(test::same_bits(resumed.losses, {full.losses.begin() + 3, full.losses.end()}));
  TrainOptions again = lora("again");
  again.init_path = full.checkpoint_path;
  CHECK_THROWS_MSG(
      train(again), TrainOptionError,
      "has adapters of rank 3 on q,k,v,o,embed already: fine-tune them as they are (leave out --lora-rank), "
      "or fold them into its weights first (gradformer merge-lora)");
  TrainOptions wide = lora("wide");
  wide.block.lora.rank = 17;  // wider than d_model 16
  CHECK_THROWS_MSG(train(wide), TrainOptionError,
                   "lora rank 17 is more than the narrower side of a 16 -> 16 projection");
  TrainOptions text = default_train_options("text", Architecture::DecoderOnly);
  text.text_path = dir / "chat.jsonl", text.block.lora = first.block.lora;
  CHECK_THROWS_MSG(train(text), TrainOptionError,
                   "is for fine-tuning a trained model (decoder-only sft), not decoder-only text");
}
