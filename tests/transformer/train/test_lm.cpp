// Causal language modelling with the decoder-only model (transformer/data/lm_batch.h, lm_loss in
// transformer/train/task.h, trained by train() in transformer/train/trainer.h): the shift
// made by hand, the loss gradient-checked in float64 and equal to -log P summed by hand, the target-only
// loss of translation as one sequence, the grammar's exact sentence probabilities, and resuming.
#include <cmath>
#include <filesystem>

#include "autograd/helpers.h"
#include "training_helpers.h"
#include "transformer/data/lm_batch.h"
#include "transformer/data/toy_corpus.h"
#include "transformer/train/task.h"
#include "transformer/train/trainer.h"

using namespace gradformer;
using test::TempDir;

namespace {

TransformerConfig tiny_lm() {
  TransformerConfig c = decoder_only_config(9);
  c.d_model = 8, c.d_ff = 16, c.heads = 2, c.layers = 1, c.max_len = 16, c.dropout = 0, c.dtype = DType::Float64;
  return c;
}

}  // namespace

TEST_CASE(
    "make_lm_batch: inputs are the tokens but the last, targets the tokens but the first, padding and unscored "
    "positions <pad>") {
  const std::vector<LmSequence> seqs{scored_from({1, 4, 5, 6, 2}), scored_from({1, 7, 2}),
                                     scored_from({1, 4, 8, 5, 2}, 3)};
  const LmBatch b = make_lm_batch(seqs, {0, 1, 2});
  CHECK(b.inputs.shape() == Shape{3, 4});
  CHECK(b.inputs.to_vector<int64_t>() == std::vector<int64_t>{1, 4, 5, 6, /**/ 1, 7, 2, 0, /**/ 1, 4, 8, 5});
  CHECK(b.targets.to_vector<int64_t>() == std::vector<int64_t>{4, 5, 6, 2, /**/ 7, 2, 0, 0, /**/ 0, 0, 5, 2});
  CHECK(b.ntokens == 4 + 2 + 2);
  const LmSequence t = translation_sequence({4, 5}, {6, 7, 8}, 3);
  CHECK(t.tokens == std::vector<int64_t>{1, 4, 5, 3, 6, 7, 8, 2});
  // the loss starts at the first target token
  CHECK(t.scored == std::vector<bool>{false, false, false, false, true, true, true, true});
}

TEST_CASE(
    "lm_loss is the mean of -log softmax of the logits at the next token over the scored tokens, and gradient-checks") {
  DecoderOnly model(tiny_lm(), 3);
  const std::vector<LmSequence> seqs{scored_from({1, 4, 5, 6, 2}), scored_from({1, 7, 3, 8, 2}, 3)};
  const LmBatch b = make_lm_batch(seqs, {0, 1});
  const double loss = lm_loss(model, b).item();
  // By hand: every sequence's own forward pass (no padding), one -log p per scored target.
  double total = 0;
  int64_t n = 0;
  for (size_t s = 0; s < seqs.size(); ++s) {
    const auto& tok = seqs[s].tokens;
    const Tensor ids = from_vector(std::vector<int64_t>(tok.begin(), tok.end() - 1), {1, 4});
    const Tensor mask = causal_mask(4).unsqueeze(0);
    const std::vector<double> logits = model.forward(ids, mask).value().contiguous().to_vector<double>();  // [1, 4, 9]
    for (size_t t = 0; t + 1 < tok.size(); ++t) {
      if (!seqs[s].scored[t + 1]) continue;
      double z = 0;
      for (size_t v = 0; v < 9; ++v) z += std::exp(logits[t * 9 + v]);
      total += std::log(z) - logits[t * 9 + static_cast<size_t>(tok[t + 1])], ++n;
    }
  }
  CHECK(n == b.ntokens);
  CHECK(std::abs(loss - total / static_cast<double>(n)) < 1e-12);
  CHECK_GRADCHECK([&] { return lm_loss(model, b, 0.1); }, model.parameters());
}

TEST_CASE("a tokenizer without a pad token (kNoToken): id 0 is read and scored as any token, padding is never seen") {
  // GPT-2's and hub tokenizers give id 0 to a token ("!" in GPT-2's): batches of their text must not
  // take it for padding.
  DecoderOnly model(tiny_lm(), 3);
  const std::vector<LmSequence> seqs{scored_from({5, 0, 4, 0, 2}), scored_from({0, 7, 3})};
  const LmBatch b = make_lm_batch(seqs, {0, 1}, kNoToken);
  CHECK(b.inputs.to_vector<int64_t>() == std::vector<int64_t>{5, 0, 4, 0, /**/ 0, 7, 3, 0});
  CHECK(b.targets.to_vector<int64_t>() == std::vector<int64_t>{0, 4, 0, 2, /**/ 7, 3, -1, -1});
  CHECK(b.ntokens == 6);
  // By hand: each sequence alone under a causal mask, -log p of every token after the first.
  double total = 0;
  for (const LmSequence& s : seqs) {
    const auto T = static_cast<int64_t>(s.tokens.size()) - 1;
    const Tensor ids = from_vector(std::vector<int64_t>(s.tokens.begin(), s.tokens.end() - 1), {1, T});
    const std::vector<double> logits =
        model.forward(ids, causal_mask(T).unsqueeze(0)).value().contiguous().to_vector<double>();  // [1, T, 9]
    for (int64_t t = 0; t < T; ++t) {
      double z = 0;
      for (size_t v = 0; v < 9; ++v) z += std::exp(logits[static_cast<size_t>(t) * 9 + v]);
      total += std::log(z) - logits[static_cast<size_t>(t * 9 + s.tokens[static_cast<size_t>(t + 1)])];
    }
  }
  CHECK(std::abs(lm_loss(model, b).item() - total / 6) < 1e-12);
}

TEST_CASE("the grammar's sentence probability sums the invisible choices: the speaker's gender, a hidden number") {
  Generator gen(123);
  for (int i = 0; i < 3000; ++i) {
    Generator copy = gen;
    const ScoredToyPair s = sample_scored_toy_pair(gen);
    CHECK(join_words(s.pair.source) == join_words(sample_toy_pair(copy).source));  // the same draws as the sampler
    REQUIRE(s.source_log_prob < 0);
  }
  // One sentence by hand: "je suis orange ." — pronoun je (0.4 / 8), either speaker (orange is
  // invariable: 0.5 + 0.5), not negated 0.65, copular 0.2, the adjective orange 1/16.
  // Find it by sampling until it comes (it has probability 0.4/8 * 0.65 * 0.2 / 16 = 4.06e-4).
  Generator g(7);
  bool found_g = false;
  for (int i = 0; i < 50000 && !found_g; ++i) {
    const ScoredToyPair s = sample_scored_toy_pair(g);
    if (join_words(s.pair.source) != "je suis orange .") continue;
    found_g = true;
    CHECK(std::abs(s.source_log_prob - std::log(0.4 / 8 * 0.65 * 0.2 / 16)) < 1e-12);
  }
  CHECK(found_g);
  // "je suis heureuse .": only the feminine speaker: half that.
  Generator h(8);
  bool found_h = false;
  for (int i = 0; i < 50000 && !found_h; ++i) {
    const ScoredToyPair s = sample_scored_toy_pair(h);
    if (join_words(s.pair.source) != "je suis heureuse .") continue;
    found_h = true;
    CHECK(std::abs(s.source_log_prob - std::log(0.4 / 8 * 0.5 * 0.65 * 0.2 / 16)) < 1e-12);
  }
  CHECK(found_h);
}

TEST_CASE("train: decoder-only toy-lm and toy-translation resumed from a checkpoint continue bit for bit") {
  TempDir dir("resume-lm");
  for (const std::string task : {"toy-lm", "toy-translation"}) {
    INFO(task);
    auto options = [&](const std::string& name) {
      TrainOptions o = default_train_options(task, Architecture::DecoderOnly);
      o.d_model = 16, o.d_ff = 32, o.heads = 2, o.layers = 1, o.max_len = 40, o.dropout = 0.1, o.label_smoothing = 0.1;
      o.batch_size = 8, o.epochs = 1, o.warmup = 4, o.seed = 5, o.quiet = true;
      if (task == "toy-lm") o.batches_per_epoch = 6;  // toy-translation's epoch is its corpus: refused there
      o.out_dir = dir / (task + name);
      return o;
    };
    TrainOptions fo = options("full");
    fo.stop_after = 6;  // toy-translation: 6 steps of its 1250-batch epoch
    const TrainReport full = train(fo);
    REQUIRE(full.losses.size() == 6);
    TrainOptions first = options("part");
    first.stop_after = 3;
    const TrainReport part = train(first);
    CHECK(test::same_bits(part.losses, {full.losses.begin(), full.losses.begin() + 3}));
    TrainOptions second = options("resumed");
    second.stop_after = 6, second.seed = 99;  // the checkpoint's seed wins
    const TrainReport resumed = train(second, part.checkpoint_path);
    CHECK(resumed.first_step == 4);
    CHECK(test::same_bits(resumed.losses, {full.losses.begin() + 3, full.losses.end()}));
    const auto a = load_decoder_only_checkpoint(full.checkpoint_path),
               b = load_decoder_only_checkpoint(resumed.checkpoint_path);
    const StateDict sa = a.model->state_dict(), sb = b.model->state_dict();
    for (const auto& [name, t] : sa) CHECK(test::bitwise_equal(t, sb.at(name)));
    CHECK(a.info.config.arch == Architecture::DecoderOnly);
    CHECK_THROWS_AS(load_checkpoint(full.checkpoint_path), CheckpointError);  // not an encoder-decoder
  }
}
