// Chapter 12: running training. The companion program of tutorials/12-running-training.md: the
// study of batching (the chapter's other outputs are `gradformer train`'s, run by the chapter's
// commands). Every listing of the chapter is a piece of this file or of the library file it names.
//
//   12-running-training            the chapter's numbers: the whole toy corpus, three seeds of 10 epochs
//   12-running-training --quick    the same code on less work (what the test suite runs); its numbers differ
//
// It exits with a non-zero status if a claim the chapter makes does not hold.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <random>
#include <vector>

#include "claims.h"
#include "nn/all.h"
#include "transformer/data/batch.h"
#include "transformer/data/batch_plan.h"
#include "transformer/data/length_kinds.h"
#include "transformer/data/toy_corpus.h"
#include "transformer/evaluate/evaluate.h"
#include "transformer/model/encoder_decoder.h"
#include "transformer/train/trainer.h"

using namespace gradformer;
using namespace tutorial;

namespace {

// ---- 1. the study of batching: padding, by length --------------------------------------------------

struct Padding {
  int64_t batches = 0, slots = 0, real = 0;
  double fraction() const { return 1.0 - static_cast<double>(real) / static_cast<double>(slots); }
};

// How much of the padded rectangles is padding, over the source and the target side together.
Padding measure_padding(const std::vector<EncodedPair>& pairs, const std::vector<std::vector<int64_t>>& plan) {
  Padding p;
  for (const std::vector<int64_t>& indices : plan) {
    const Batch batch = collate(pairs, indices);
    p.batches += 1;
    p.slots += batch.src.numel() + batch.tgt_out.numel();
    p.real += static_cast<int64_t>(sum(padding_mask(batch.src, Vocab::pad).to(DType::Float64)).item()) + batch.ntokens;
  }
  return p;
}

// The toy corpus's training pairs as ids, and its vocabularies: what the study of batching measures,
// and the English vocabulary's size is one of label smoothing's loss floors.
struct ToyPairs {
  Vocab source_vocab, target_vocab;
  std::vector<EncodedPair> pairs;
};

ToyPairs toy_pairs(bool quick) {
  const ToyCorpus corpus = make_toy_corpus({.train_size = quick ? 2000 : 10000, .valid_size = 100, .test_size = 100});
  std::vector<std::vector<std::string>> sources, targets;
  for (const SentencePair& pair : corpus.train) sources.push_back(pair.source), targets.push_back(pair.target);
  ToyPairs toy{Vocab::build(sources), Vocab::build(targets), {}};
  toy.pairs = encode_pairs(corpus.train, toy.source_vocab, toy.target_vocab);
  return toy;
}

void batching(const ToyPairs& toy) {
  section("batching by length");
  const Vocab &source_vocab = toy.source_vocab, &target_vocab = toy.target_vocab;
  const std::vector<EncodedPair>& pairs = toy.pairs;

  // Random batches: shuffle, then cut into runs of 64 sentences.
  Generator gen(7);
  std::vector<int64_t> order(pairs.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  shuffle_indices(order, gen);
  std::vector<std::vector<int64_t>> random_plan;
  for (size_t i = 0; i < order.size(); i += 64)
    random_plan.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(i),
                             order.begin() + static_cast<std::ptrdiff_t>(std::min(order.size(), i + 64)));

  // Grouped by length: shuffle, sort pools of 6,400 by length, cut, shuffle the batches.
  const auto by_length = plan_batches(pairs, {.max_sentences = 64, .batching = Batching::Length}, &gen);
  const auto by_budget = plan_batches(pairs, {.max_tokens = 1024, .batching = Batching::Length}, &gen);

  const Padding random = measure_padding(pairs, random_plan), grouped = measure_padding(pairs, by_length),
                budget = measure_padding(pairs, by_budget);
  size_t fewest = pairs.size(), most = 0;
  for (const auto& b : by_budget) fewest = std::min(fewest, b.size()), most = std::max(most, b.size());
  std::printf("%zu training pairs, vocabularies of %lld French and %lld English tokens\n", pairs.size(),
              static_cast<long long>(source_vocab.size()), static_cast<long long>(target_vocab.size()));
  std::printf("random batches of 64:       %3lld batches, %5.1f%% of the token slots are padding\n",
              static_cast<long long>(random.batches), 100 * random.fraction());
  std::printf("length-grouped, 64:         %3lld batches, %5.1f%% of the token slots are padding\n",
              static_cast<long long>(grouped.batches), 100 * grouped.fraction());
  std::printf("length-grouped, 1024 tokens: %3lld batches, %5.1f%% padding, %zu to %zu sentences a batch\n",
              static_cast<long long>(budget.batches), 100 * budget.fraction(), fewest, most);
  claim(grouped.fraction() < random.fraction() / 3, "grouping by length cuts the padding at least threefold");
  claim(grouped.real == random.real, "both plans hold every sentence exactly once");
}

// ---- 2. the study of batching: batches that learn, the same epochs batched three ways ------------

struct Strategy {
  const char* name;
  Batching batching;
  int64_t pieces;
};

struct Outcome {
  std::vector<double> exact, bleu, tokens_per_second;
  double padding = 0;
};

double mean(const std::vector<double>& v) {
  double total = 0;
  for (double x : v) total += x;
  return total / static_cast<double>(v.size());
}

// `gradformer train --data train.tsv --test test.tsv` with a small model: the trainer's own loop,
// its own exact match and BLEU on the test pairs.
TrainReport train_corpus(const std::string& dir, const Strategy& s, uint64_t seed, int64_t epochs) {
  TrainOptions o = default_train_options("corpus");
  o.data_path = dir + "/train.tsv", o.test_path = dir + "/test.tsv", o.out_dir = dir + "/run";
  o.d_model = 32, o.d_ff = 64, o.heads = 2, o.layers = 2, o.max_len = 32;
  o.batch_size = 32, o.epochs = epochs, o.warmup = 200, o.eval_every = 0, o.quiet = true;
  o.batching = s.batching, o.pieces = s.pieces, o.seed = seed;
  return train(o);
}

// Every strategy with every seed, the seeds outermost so that the machine's load, which drifts,
// falls on all strategies alike. Returns the outcomes in the order of `strategies`.
std::vector<Outcome> compare(const std::string& dir, const std::vector<SentencePair>& train_pairs,
                             const std::vector<SentencePair>& test_pairs, const std::vector<Strategy>& strategies,
                             const std::vector<uint64_t>& seeds, int64_t epochs) {
  std::filesystem::create_directories(dir);
  write_tsv(dir + "/train.tsv", train_pairs);
  write_tsv(dir + "/test.tsv", test_pairs);
  std::vector<Outcome> outcomes(strategies.size());
  for (uint64_t seed : seeds)
    for (size_t i = 0; i < strategies.size(); ++i) {
      const TrainReport r = train_corpus(dir, strategies[i], seed, epochs);
      outcomes[i].exact.push_back(100 * r.test_translation->exact_match);
      outcomes[i].bleu.push_back(r.test_translation->bleu.bleu);
      outcomes[i].tokens_per_second.push_back(r.tokens_per_second);
      outcomes[i].padding = r.padding;
    }
  std::printf("%-18s %8s   %-22s %6s %6s\n", "batching", "padding", "exact match % by seed", "mean", "BLEU");
  for (size_t i = 0; i < strategies.size(); ++i) {
    std::string by_seed;
    for (double e : outcomes[i].exact) {
      char one[16];
      std::snprintf(one, sizeof one, "%5.1f ", e);
      by_seed += one;
    }
    std::printf("%-18s %7.1f%%   %-22s %6.1f %6.1f\n", strategies[i].name, 100 * outcomes[i].padding, by_seed.c_str(),
                mean(outcomes[i].exact), mean(outcomes[i].bleu));
  }
  return outcomes;
}

void print_speeds(const std::vector<Strategy>& strategies, const std::vector<Outcome>& outcomes) {
  std::printf("target tokens/s (mean over the seeds):");
  for (size_t i = 0; i < strategies.size(); ++i)
    std::printf("%s %s %.0f", i ? "," : "", strategies[i].name, mean(outcomes[i].tokens_per_second));
  std::printf("\n");
}

void batches_that_learn(bool quick) {
  section("batches that learn");
  // A folder of this run's own: the suite runs the program twice at once (its run and its figures).
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("gradformer-12-batching-" + std::to_string(std::random_device{}())))
          .string();
  const std::vector<Strategy> strategies = {{"random", Batching::Random, 1},
                                            {"random, 4 pieces", Batching::Random, 4},
                                            {"random, 8 pieces", Batching::Random, 8},
                                            {"length", Batching::Length, 1}};
  const std::vector<uint64_t> seeds = quick ? std::vector<uint64_t>{1} : std::vector<uint64_t>{1, 2, 3};
  const int64_t epochs = quick ? 1 : 10;
  if (quick) std::printf("--quick: 300 pairs, 1 epoch, 1 seed: the loop runs; these are not the chapter's numbers\n");
  const LengthKindsCorpus kinds =
      make_length_kinds_corpus({.train_size = quick ? 300 : 3000, .test_size = quick ? 30 : 300});
  std::printf("length-kinds corpus: %zu training pairs, %zu test pairs; %s of batches of 32, d_model 32\n",
              kinds.train.size(), kinds.test.size(), counted(epochs, "epoch").c_str());
  const std::vector<Outcome> on_kinds = compare(dir + "/kinds", kinds.train, kinds.test, strategies, seeds, epochs);
  print_speeds(strategies, on_kinds);
  claim(on_kinds[1].padding < on_kinds[0].padding / 2, "4 pieces pad less than half as much as one rectangle");
  claim(on_kinds[3].padding < on_kinds[1].padding, "length batches pad least");
  if (!quick) {
    claim(mean(on_kinds[1].exact) > mean(on_kinds[3].exact) + 30,
          "where length tells the kind, random batches learn far more per epoch than length batches");
    const ToyCorpus toy = make_toy_corpus({.train_size = 3000, .valid_size = 100, .test_size = 300});
    std::printf("toy corpus (the control: length says little): %zu training pairs, %zu test pairs\n", toy.train.size(),
                toy.test.size());
    const std::vector<Strategy> control = {strategies[0], strategies[1], strategies[3]};
    const std::vector<Outcome> on_toy = compare(dir + "/toy", toy.train, toy.test, control, seeds, epochs);
    print_speeds(control, on_toy);
  }
  std::filesystem::remove_all(dir);
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  batching(toy_pairs(quick));
  batches_that_learn(quick);
  std::cout << "\n" << (failures == 0 ? "all claims hold" : "SOME CLAIMS FAILED") << "\n";
  return failures == 0 ? 0 : 1;
}
