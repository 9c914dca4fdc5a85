// Chapter 17: the encoder-only Transformer (BERT). The companion program of
// tutorials/17-encoder-only.md: every listing of the chapter is a piece of this file, and every
// output the chapter shows is what this program prints. It exits non-zero if a claim does not hold.
// --quick trains for a few steps only (the test suite's run): the numbers then differ from the chapter's.
#include <cmath>
#include <cstdio>
#include <map>
#include <string>

#include "claims.h"
#include "nn/all.h"
#include "transformer/data/mlm.h"
#include "transformer/data/toy_corpus.h"
#include "transformer/inspect/diagram.h"
#include "transformer/inspect/svg.h"
#include "transformer/model/encoder_only.h"
#include "transformer/model/masks.h"
#include "transformer/train/trainer.h"

using namespace gradformer;
using namespace tutorial;

namespace {

double largest_change(const Tensor& a, const Tensor& b) {
  const Tensor d = sub(a, b);
  return std::abs(max(maximum(d, neg(d))).item());  // abs: 0, not -0
}

// ---- the figure of BERT's input and heads -------------------------------------------------------------

constexpr double kLeft = 236, kColumn = 94;  // where the first position's column starts, and a column's width

// One row of embedding boxes, one a position, under its label on the left.
void embedding_row(Diagram& d, double y, const std::string& label, const std::vector<std::string>& boxes,
                   const std::vector<const char*>& fills) {
  d.text(kLeft - 14, y + 20, label, {.size = 12, .anchor = "end"});
  for (size_t i = 0; i < boxes.size(); ++i)
    d.box(kLeft + kColumn * static_cast<double>(i), y, kColumn - 8, 30, boxes[i], fills[i]);
}

// The heads over the encoder's output h: the pooler and the classifier on [CLS], the MLM head on
// every other position, scored only where a word was chosen (here the [MASK]).
void draw_heads(Diagram& d, size_t positions, size_t masked) {
  const double c0 = kLeft + (kColumn - 8) / 2;
  d.box(kLeft, 206, kColumn - 8, 30, "pooler", "#e3f1dc");
  d.arrow({{c0, 250}, {c0, 236}});
  d.box(kLeft, 150, kColumn - 8, 30, "classifier", "#e3f1dc");
  d.arrow({{c0, 206}, {c0, 180}});
  d.arrow({{c0, 150}, {c0, 130}});
  d.text(c0, 120, "class [C]", {.size = 12, .bold = true});
  for (size_t i = 1; i < positions; ++i) {
    const double x = kLeft + kColumn * static_cast<double>(i), cx = x + (kColumn - 8) / 2;
    d.arrow({{cx, 250}, {cx, 236}});
    d.box(x, 206, kColumn - 8, 30, "MLM head", "#fde2c2");
    d.arrow({{cx, 206}, {cx, 186}});
    if (i == masked)
      d.text(cx, 176, "\u2192 dort", {.size = 13, .colour = "#c0392b", .bold = true});
    else
      d.text(cx, 176, "not scored", {.size = 10, .colour = "#999"});
  }
  d.text(kLeft - 14, 218, "heads", {.size = 12, .anchor = "end", .bold = true});
  d.text(kLeft - 14, 234, "pooler: p = tanh(W h + b)", {.size = 11, .anchor = "end", .colour = "#555"});
  d.text(kLeft - 14, 170, "classifier: W p + b", {.size = 11, .anchor = "end", .colour = "#555"});
}

// BERT's input and heads (17-bert-input.svg), at BERT-base's sizes: a sentence pair, its three
// embeddings summed position by position, the encoder, and the heads.
void draw_bert_input() {
  const EncoderOnlyConfig c = EncoderOnlyConfig::bert_base();
  const std::vector<std::string> tokens{"[CLS]", "le", "chat", "[MASK]", "[SEP]", "il", "r\u00eave", "[SEP]"};
  const size_t masked = 3, first_b = 5;  // segment A is [CLS] up to the first [SEP], B the rest
  std::vector<std::string> tok, pos, type;
  std::vector<const char*> grey, blue, segment;
  for (size_t i = 0; i < tokens.size(); ++i) {
    tok.push_back(tokens[i]), pos.push_back(message("pos ", i)), type.push_back(i < first_b ? "A" : "B");
    grey.push_back("#eeeeee"), blue.push_back("#dbe9f6"), segment.push_back(i < first_b ? "#fbf3c8" : "#d4f0d4");
  }
  Diagram d(1000, 640);
  d.text(500, 28, "BERT's input and heads, at BERT-base's sizes (a sentence pair, one word masked)", {.size = 16});
  d.text(500, 52, "read from the bottom: the input, its three embeddings summed, the encoder, the heads on top",
         {.size = 13, .colour = "#555"});
  draw_heads(d, tokens.size(), masked);
  d.rect(kLeft - 4, 250, kColumn * static_cast<double>(tokens.size()), 50, "#f4f4f4", "#999", 8);
  d.text(kLeft + kColumn * 4 - 4, 272, message("encoder: ", c.layers, " layers, self-attention over every position"),
         {.size = 13});
  d.text(kLeft + kColumn * 4 - 4, 290, message("h [B, S, d] = [1, ", tokens.size(), ", ", c.d_model, "]"),
         {.size = 12, .colour = "#555"});
  d.arrow({{kLeft + kColumn * 4 - 4, 328}, {kLeft + kColumn * 4 - 4, 300}});
  d.rect(kLeft - 4, 328, kColumn * static_cast<double>(tokens.size()), 30, "#fbf3c8", "#333", 6);
  d.text(kLeft + kColumn * 4 - 4, 348, "sum, then LayerNorm (embed_norm) and dropout", {.size = 13});
  embedding_row(d, 376, message("token: tok_embed [", c.vocab, ", ", c.d_model, "]"), tok, grey);
  embedding_row(d, 426, message("+ position: pos_embed [", c.max_len, ", ", c.d_model, "]"), pos, blue);
  embedding_row(d, 476, message("+ token type: type_embed [", c.types, ", ", c.d_model, "]"), type, segment);
  for (size_t i = 0; i < tokens.size(); ++i) {
    const double cx = kLeft + kColumn * static_cast<double>(i) + (kColumn - 8) / 2;
    d.text(cx, 536, tokens[i], {.size = 13, .bold = true});
    d.arrow({{cx, 376}, {cx, 358}});
  }
  d.text(kLeft - 14, 536, "input", {.size = 12, .anchor = "end", .bold = true});
  d.text(500, 572,
         "Each position's three vectors are added: which token, where it stands, which sentence (A or B) it is in.",
         {.size = 13});
  d.text(500, 592,
         "[CLS] opens the input and [SEP] ends each sentence; the pooler reads h at [CLS] for the classifier,",
         {.size = 13});
  d.text(500, 612, "the MLM head reads every position, but only the chosen ones (here the [MASK]) are in the loss.",
         {.size = 13});
  claim(c.types == 2 && c.embed_norm, "BERT-base has two token types and the embedding LayerNorm");
  claim(EncoderOnlyConfig{}.types == 0 && !EncoderOnlyConfig{}.embed_norm &&
            EncoderOnlyConfig{}.activation == Activation::GELU,
        "by default: no token types, no embedding LayerNorm, GELU");
  write_svg(output_path("17-bert-input.svg"), d.svg());
}

// Positions 0..3 of both runs: how far a change at position 4 reached back.
void bidirectional_versus_causal() {
  section("Bidirectional and causal attention");
  EncoderOnlyConfig c{
      .vocab = 12, .d_model = 16, .d_ff = 32, .heads = 2, .layers = 2, .dropout = 0.0, .dtype = DType::Float64};
  EncoderOnly model(c, 1);
  const Tensor ids = from_vector<int64_t>({1, 5, 6, 7, 8, 2}, {1, 6});
  const Tensor changed = from_vector<int64_t>({1, 5, 6, 7, 11, 2}, {1, 6});  // position 4: 8 -> 11
  Tensor first[2], later[2];  // positions 0..3: [1, 4, d], with the padding mask and with the causal one
  for (int k = 0; k < 2; ++k) {
    const Tensor& t = k == 0 ? ids : changed;
    const Variable x = model.embed(t);
    const Variable both_ways = model.encoder->forward(x, padding_mask(t, 0));  // BERT: [1, 1, S]
    const Variable left_only = model.encoder->forward(x, target_mask(t, 0));   // GPT:  [1, S, S]
    Tensor* out = k == 0 ? first : later;
    out[0] = both_ways.value().slice(1, 0, 4), out[1] = left_only.value().slice(1, 0, 4);
  }
  const double reach[2] = {largest_change(first[0], later[0]), largest_change(first[1], later[1])};
  std::printf("changing the token at position 4 moves the outputs at positions 0-3 by at most:\n");
  std::printf("  padding mask only (bidirectional, BERT): %.3f\n", reach[0]);
  std::printf("  causal mask (left to right, GPT):        %.3f\n", reach[1]);
  claim(reach[0] > 0.05, "with the padding mask alone every position sees the later ones");
  claim(reach[1] == 0.0, "under the causal mask no earlier output moves, not by one bit");
}

// BERT's corruption over the whole train split, against the binomial's standard errors.
void masking_statistics(const ToyCorpus& corpus, const Vocab& vocab) {
  section("The masked-LM corruption, measured");
  Generator gen(2018);
  int64_t candidates = 0, chosen = 0, masked = 0, randomized = 0, kept = 0;
  MlmBatch example;
  for (size_t start = 0; start < corpus.train.size(); start += 500) {
    std::vector<std::vector<int64_t>> sentences;
    for (size_t i = start; i < start + 500; ++i) sentences.push_back(vocab.encode(corpus.train[i].source));
    const MlmBatch b = mask_tokens(encode_sequences(sentences), vocab.size(), gen);
    if (start == 0) example = b;
    candidates += b.candidates, chosen += b.chosen, masked += b.masked, randomized += b.randomized, kept += b.kept;
  }
  auto share = [](const char* what, int64_t k, int64_t n, double p) {
    const double se = std::sqrt(p * (1 - p) / static_cast<double>(n)),
                 f = static_cast<double>(k) / static_cast<double>(n);
    std::printf("  %-28s %6lld of %6lld = %.4f   (BERT: %.2f, standard error %.4f, %+.1f se)\n", what,
                static_cast<long long>(k), static_cast<long long>(n), f, p, se, (f - p) / se);
    return std::abs(f - p) < 4 * se;
  };
  std::printf("10000 French sentences, one draw each:\n");
  bool ok = share("words chosen", chosen, candidates, 0.15);
  ok = share("chosen -> <mask>", masked, chosen, 0.8) && ok;
  ok = share("chosen -> a random word", randomized, chosen, 0.1) && ok;
  ok = share("chosen, kept", kept, chosen, 0.1) && ok;
  claim(ok, "every share is within 4 standard errors of BERT's recipe");
  // The first sentence with a chosen word: what the model reads and what it must say.
  const auto in = example.input.to_vector<int64_t>(), labels = example.labels.to_vector<int64_t>();
  const int64_t S = example.input.size(1);
  for (int64_t b = 0; b < example.input.size(0); ++b) {
    std::string read, predict;
    bool any = false;
    for (int64_t t = 1; t < S && in[static_cast<size_t>(b * S + t)] != Vocab::eos; ++t) {
      const size_t i = static_cast<size_t>(b * S + t);
      read += (t > 1 ? " " : "") + vocab.token(in[i]);
      predict += (t > 1 ? " " : "") + (labels[i] ? vocab.token(labels[i]) : std::string("_"));
      any = any || labels[i] != 0;
    }
    if (any && b >= 2) {
      std::printf("the model reads:   %s\nit must predict:   %s   (only these positions are in the loss)\n",
                  read.c_str(), predict.c_str());
      break;
    }
  }
}

// The unigram model's cross-entropy on the valid words: what a model that ignores the context scores.
double unigram_loss(const ToyCorpus& corpus) {
  std::map<std::string, double> count;
  double total = 0;
  for (const auto& p : corpus.train)
    for (const auto& w : p.source) count[w] += 1, total += 1;
  double loss = 0, n = 0;
  for (size_t i = 0; i < 500; ++i)
    for (const auto& w : corpus.valid[i].source) loss -= std::log(count[w] / total), n += 1;
  return loss / n;
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  const ToyCorpus corpus = make_toy_corpus();
  std::vector<std::vector<std::string>> french;
  for (const auto& p : corpus.train) french.push_back(p.source);
  const Vocab vocab = encoder_only_vocab(french);

  draw_bert_input();
  bidirectional_versus_causal();
  masking_statistics(corpus, vocab);

  section("Pre-training");
  TrainOptions pre = default_train_options("mlm", Architecture::EncoderOnly);
  pre.quiet = true, pre.out_dir = "runs/encoder-only-mlm";
  if (quick) pre.steps = 30;
  claim(pre.activation == Activation::GELU, "the chapter's models use GELU");
  const TrainReport pretrained = train(pre);
  const double unigram = unigram_loss(corpus);
  std::printf(
      "%lld MLM steps of %lld sentences: valid loss %.3f nats per chosen word (unigram frequencies: %.3f), "
      "%.1f%% of chosen words recovered\n",
      static_cast<long long>(pre.steps), static_cast<long long>(pre.batch_size), pretrained.valid_loss, unigram,
      100 * pretrained.valid_accuracy);
  if (!quick)
    claim(pretrained.valid_loss < unigram - 0.5, "the pre-trained model uses the context: 0.5 nats below the unigram");

  section("Fine-tuning: is the sentence negated?");
  int64_t negated = 0;
  for (const auto& e : negation_task(corpus.test)) negated += e.label;
  std::printf("test split: %lld of 1000 sentences negated (always answering 'affirmative' scores %.1f%%)\n",
              static_cast<long long>(negated), 100.0 - 0.1 * static_cast<double>(negated));
  TrainOptions fine = default_train_options("classify", Architecture::EncoderOnly);
  fine.quiet = true;
  std::printf("%lld steps of %lld sentences drawn from %lld labelled ones; test accuracy:\n",
              static_cast<long long>(fine.steps), static_cast<long long>(fine.batch_size),
              static_cast<long long>(fine.labelled));
  std::printf("  seed   from scratch   pre-trained\n");
  double sum_scratch = 0, sum_pre = 0;
  int better = 0;
  const int seeds = quick ? 1 : 5;
  for (int seed = 1; seed <= seeds; ++seed) {
    fine.seed = static_cast<uint64_t>(seed);
    fine.init_path = "", fine.out_dir = "runs/encoder-only-scratch";
    const double scratch = train(fine).test_accuracy;
    fine.init_path = pretrained.checkpoint_path, fine.out_dir = "runs/encoder-only-classify";
    const double from_pretrained = train(fine).test_accuracy;
    std::printf("  %4d   %11.1f%%   %10.1f%%\n", seed, 100 * scratch, 100 * from_pretrained);
    sum_scratch += scratch, sum_pre += from_pretrained, better += from_pretrained > scratch;
  }
  std::printf("  mean   %11.1f%%   %10.1f%%   (pre-training better on %d of %d seeds)\n", 100 * sum_scratch / seeds,
              100 * sum_pre / seeds, better, seeds);
  if (!quick) {
    claim(sum_pre / seeds > sum_scratch / seeds + 0.05, "pre-training adds more than 5 points of accuracy on average");
    claim(better >= 4, "pre-training is better on at least 4 of the 5 seeds");
  }
  return failures == 0 ? 0 : 1;
}
