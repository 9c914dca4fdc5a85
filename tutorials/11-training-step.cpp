// Chapter 11: the training step. The companion program of tutorials/11-training-step.md: every
// listing of the chapter is a piece of this file, and every output the chapter shows is what this
// program prints (with `gradformer trace --train`'s page of one step).
//
//   11-training-step            the chapter's numbers: the copy task for 600 steps at d_model 128
//   11-training-step --quick    the same code on less work (what the test suite runs); its numbers differ
//
// It exits with a non-zero status if a claim the chapter makes does not hold.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <vector>

#include "claims.h"
#include "nn/all.h"
#include "nn/schedule.h"
#include "transformer/data/batch.h"
#include "transformer/data/batch_stream.h"
#include "transformer/data/copy_task.h"
#include "transformer/data/toy_corpus.h"
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

// The toy corpus's English vocabulary: its size is one of label smoothing's loss floors (chapter 14
// trains on the corpus).
int64_t toy_english_vocab_size(bool quick) {
  const ToyCorpus corpus = make_toy_corpus({.train_size = quick ? 2000 : 10000, .valid_size = 100, .test_size = 100});
  std::vector<std::vector<std::string>> targets;
  for (const SentencePair& pair : corpus.train) targets.push_back(pair.target);
  return Vocab::build(targets).size();
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  masks();
  label_smoothing(toy_english_vocab_size(quick));
  schedule();
  copy_task(quick);
  std::cout << "\n" << (failures == 0 ? "all claims hold" : "SOME CLAIMS FAILED") << "\n";
  return failures == 0 ? 0 : 1;
}
