// Chapter 11: training. The companion program of tutorials/11-training.md: every listing of the
// chapter is a piece of this file, and every output the chapter shows is what this program prints.
//
//   11-training            the chapter's numbers: the whole toy corpus, the copy task for 600 steps
//   11-training --quick    the same code on less work (what the test suite runs); its numbers differ
//
// It exits with a non-zero status if a claim the chapter makes does not hold.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <random>
#include <vector>

#include "claims.h"
#include "nn/all.h"
#include "nn/schedule.h"
#include "transformer/data/batch.h"
#include "transformer/data/batch_plan.h"
#include "transformer/data/batch_stream.h"
#include "transformer/data/copy_task.h"
#include "transformer/data/length_kinds.h"
#include "transformer/data/toy_corpus.h"
#include "transformer/evaluate/evaluate.h"
#include "transformer/inspect/svg.h"
#include "transformer/model/decoding.h"
#include "transformer/model/encoder_decoder.h"
#include "transformer/train/trainer.h"

using namespace gradformer;
using namespace tutorial;

namespace {

// ---- 1. masks ----------------------------------------------------------------------------------------

void masks() {
  section("padding and causal masks");
  // Two sentence pairs as ids (no specials): a 3-token source with a 2-token target, and a
  // 1-token source with a 4-token target.
  const std::vector<EncodedPair> pairs = {{{5, 6, 7}, {8, 9}}, {{5}, {8, 9, 10, 11}}};
  const Batch batch = collate(pairs, {0, 1});
  const Tensor src_mask = padding_mask(batch.src, Vocab::pad);    // [B, 1, S]
  const Tensor tgt_mask = target_mask(batch.tgt_in, Vocab::pad);  // [B, T, T]
  std::cout << "src     " << batch.src << "\n";
  std::cout << "tgt_in  " << batch.tgt_in << "\n";
  std::cout << "tgt_out " << batch.tgt_out << "\n";
  std::cout << "src_mask " << src_mask << "\n";
  std::cout << "tgt_mask of the first pair " << tgt_mask.select(0, 0) << "\n";
  std::cout << "ntokens " << batch.ntokens << "\n";
  claim(batch.ntokens == 3 + 5, "ntokens counts the real target tokens, </s> included");
  claim(!tgt_mask.at({0, 3, 3}) && tgt_mask.at({0, 2, 1}) && !tgt_mask.at({0, 1, 2}),
        "the target mask is causal and keeps padding out");
}

// ---- 2. label smoothing --------------------------------------------------------------------------------

void label_smoothing(int64_t toy_vocab) {
  section("label smoothing");
  const int64_t classes = 5;
  const Tensor target = from_vector(std::vector<int64_t>{2}, {1});
  // The smoothed target q (chapter 4) gives the right class 1 - eps + eps/C and every other eps/C.
  // The loss floor: the smoothed loss is smallest when the softmax equals q, and there it is the
  // entropy of q, not 0.
  auto floor_for = [](int64_t c, double eps) {
    const double hit = 1 - eps + eps / static_cast<double>(c), miss = eps / static_cast<double>(c);
    return -hit * std::log(hit) - static_cast<double>(c - 1) * miss * std::log(miss);
  };
  const double hit = 1 - 0.1 + 0.1 / classes, miss = 0.1 / classes;
  const Variable best(log(tensor({miss, miss, hit, miss, miss}, {1, classes})));  // logits with softmax = q
  const double at_best = cross_entropy(best, target, {.label_smoothing = 0.1}).item();
  const Variable sharper(tensor({0, 0, 10, 0, 0}, {1, classes}));
  const double at_sharper = cross_entropy(sharper, target, {.label_smoothing = 0.1}).item();
  std::printf("smoothed loss at softmax = q: %.4f (entropy of q: %.4f); at a sharper softmax: %.4f\n", at_best,
              floor_for(classes, 0.1), at_sharper);
  for (int64_t c : {int64_t{11}, toy_vocab, int64_t{37000}})
    std::printf("loss floor with eps 0.1 and %5lld classes: %.3f nats\n", static_cast<long long>(c), floor_for(c, 0.1));
  claim(std::abs(at_best - floor_for(classes, 0.1)) < 1e-5, "the smoothed loss bottoms out at the entropy of q");
  claim(at_sharper > at_best, "more confidence than q costs loss");
}

// ---- 3. the learning-rate schedule ------------------------------------------------------------------------

void schedule() {
  section("Adam with warmup");
  const NoamSchedule copy_schedule(/*d_model=*/128, /*warmup=*/200, /*factor=*/0.5);  // the copy run below
  const NoamSchedule paper(/*d_model=*/512, /*warmup=*/4000);                         // the paper's base model
  std::cout << "   step   copy (d 128, warmup 200, x0.5)   paper (d 512, warmup 4000)\n";
  for (int64_t step : {1, 100, 200, 400, 600, 800, 4000, 16000, 100000})
    std::printf("%7lld   %.3e                        %.3e\n", static_cast<long long>(step), copy_schedule.rate(step),
                paper.rate(step));
  std::printf("peaks: %.3e at step 200, %.3e at step 4000\n", copy_schedule.peak(), paper.peak());
  claim(std::abs(copy_schedule.rate(100) - copy_schedule.peak() / 2) < 1e-12, "linear warmup: half way, half the peak");
  claim(std::abs(copy_schedule.rate(800) - copy_schedule.peak() / 2) < 1e-12,
        "then 1/sqrt(step): 4x the steps, half the rate");
  claim(copy_schedule.rate(199) < copy_schedule.peak() && copy_schedule.rate(201) < copy_schedule.peak(),
        "the peak is at warmup");
  claim(copy_schedule.rate(600) < copy_schedule.peak(), "the 600-step copy run ends past its peak, on the decay");

  // The figure: both schedules over the first 15,000 steps.
  LinePlot plot{.title = "lr = factor * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)",
                .y_label = "learning rate",
                .series = {}};
  for (const auto& [name, rule] : {std::pair{"copy run", &copy_schedule}, std::pair{"paper, base", &paper}}) {
    PlotSeries line{name, {}, {}};
    for (int64_t step = 10; step <= 15000; step += 10)
      line.x.push_back(static_cast<double>(step)), line.y.push_back(rule->rate(step));
    plot.series.push_back(line);
  }
  write_svg(output_path("11-schedule.svg"), line_plot_svg(plot));
}

// ---- 4. the copy task, trained live ---------------------------------------------------------------------

void copy_task(bool quick) {
  section("the copy task");
  Generator example_gen(3);
  const Batch example = copy_task_batch(2, example_gen);
  std::cout << "src    " << example.src << "\ntgt_in " << example.tgt_in << "\ntgt_out " << example.tgt_out << "\n";

  // The settings of `gradformer train --task copy`: 30 epochs of 20 batches of 80, warmup 200. --quick
  // trains a far smaller model for far fewer steps: enough to see the loss fall, not to learn to copy.
  const int64_t d = quick ? 32 : 128, steps = quick ? 100 : 600, warmup = quick ? 40 : 200,
                batch_size = quick ? 32 : 80;
  if (quick)
    std::printf(
        "--quick: d_model 32 for 100 steps, to check that the loop runs; these are not the chapter's numbers, "
        "and a model this small and short copies few sequences or none\n");
  TransformerConfig config{.src_vocab = 11,
                           .tgt_vocab = 11,
                           .d_model = d,
                           .d_ff = 4 * d,
                           .heads = quick ? 4 : 8,
                           .layers = 2,
                           .dropout = 0.1,
                           .max_len = 64};
  EncoderDecoder model(config, /*seed=*/1);
  Adam adam(model.parameters(), {.lr = 0, .beta1 = 0.9, .beta2 = 0.98, .eps = 1e-9});
  const NoamSchedule noam(d, warmup, /*factor=*/quick ? 1.0 : 0.5);
  CopyTaskStream data(batch_size, /*seed=*/1);
  std::printf("%lld parameters, %lld steps of %lld sequences\n", static_cast<long long>(model.parameter_count()),
              static_cast<long long>(steps), static_cast<long long>(batch_size));

  // Held-out sequences for a validation loss every few steps (the figure's second line).
  Generator held_out_gen(2024);
  std::vector<Batch> held_out;
  for (int i = 0; i < 4; ++i) held_out.push_back(copy_task_batch(batch_size, held_out_gen));
  PlotSeries train_line{"training", {}, {}}, valid_line{"validation", {}, {}};

  const auto start = std::chrono::steady_clock::now();
  double first_loss = 0, last_loss = 0;
  for (int64_t step = 1; step <= steps; ++step) {
    const Batch batch = data.next().front();                      // a copy-task step is one batch
    adam.set_lr(noam.rate(step));                                 // the schedule sets the rate of every step
    const Variable logits = teacher_forced_logits(model, batch);  // forward with the batch's masks
    const Variable loss = cross_entropy(logits, batch.tgt_out, {.ignore_index = Vocab::pad});
    adam.zero_grad();
    loss.backward();
    adam.step();
    if (step == 1) first_loss = loss.item();
    last_loss = loss.item();
    train_line.x.push_back(static_cast<double>(step)), train_line.y.push_back(loss.item());
    if (step == 1 || step % (steps / 20) == 0)
      valid_line.x.push_back(static_cast<double>(step)), valid_line.y.push_back(teacher_forced_loss(model, held_out));
    if (step == 1 || step % (steps / 8) == 0)
      std::printf("step %4lld  loss %.4f  lr %.2e\n", static_cast<long long>(step), loss.item(), adam.lr());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  write_svg(output_path("11-loss.svg"),
            line_plot_svg({.title = "the copy task: loss per step", .series = {train_line, valid_line}}));
  Generator fresh(99);
  const int64_t exact = copy_task_exact_match(model, 100, fresh);
  std::printf("%lld/100 fresh sequences copied exactly (greedy decoding)\n", static_cast<long long>(exact));

  const Batch one = copy_task_batch(1, fresh);
  const Hypothesis out = greedy_decode(model, one.src, padding_mask(one.src, Vocab::pad), {.max_len = 9, .eos = -1})[0];
  std::cout << "source " << one.src << "\noutput ";
  for (int64_t token : out.tokens) std::cout << token << " ";
  std::cout << "\n";
  std::printf("%lld steps in %.1f s\n", static_cast<long long>(steps), seconds);
  claim(last_loss < (quick ? 0.75 : 0.5) * first_loss, "the loss goes down");
  claim(first_loss > 1.1 * std::log(11.0), "the first loss is well above a uniform guess's, ln 11");
  if (!quick) claim(exact >= 95, "600 steps learn to copy");
}

// ---- 5. the study of batching: padding, by length --------------------------------------------------

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

// ---- 6. the study of batching: batches that learn, the same epochs batched three ways ------------

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
      (std::filesystem::temp_directory_path() / ("gradformer-11-batching-" + std::to_string(std::random_device{}())))
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
  // In the chapter's order: the basics, then the study of batching.
  const ToyPairs toy = toy_pairs(quick);
  masks();
  label_smoothing(toy.target_vocab.size());
  schedule();
  copy_task(quick);
  batching(toy);
  batches_that_learn(quick);
  std::cout << "\n" << (failures == 0 ? "all claims hold" : "SOME CLAIMS FAILED") << "\n";
  return failures == 0 ? 0 : 1;
}
