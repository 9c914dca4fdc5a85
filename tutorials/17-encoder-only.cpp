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

  bidirectional_versus_causal();
  masking_statistics(corpus, vocab);

  section("Pre-training");
  TrainOptions pre = default_train_options("mlm", Architecture::EncoderOnly);
  pre.quiet = true, pre.out_dir = "runs/encoder-only-mlm";
  if (quick) pre.steps = 30;
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
