// Decoding (transformer/model/decoding.h): greedy and beam search, with and without the key/value cache,
// checked against the model's teacher-forced forward pass: every log-probability below is
// recomputed here with a log-softmax by hand from model.forward's logits.
#include <algorithm>
#include <cmath>
#include <limits>

#include "training_helpers.h"
#include "transformer/data/batch_plan.h"
#include "transformer/evaluate/evaluate.h"
#include "transformer/inspect/attention_maps.h"
#include "transformer/model/decoding.h"
#include "transformer/model/encoder_decoder.h"

using namespace gradformer;

namespace {

// 2 layers so the cache holds more than one layer; dropout on, to check decoding switches it off.
TransformerConfig tiny_config(int64_t tgt_vocab = 9) {
  TransformerConfig c;
  c.src_vocab = 9, c.tgt_vocab = tgt_vocab, c.d_model = 16, c.d_ff = 32, c.heads = 2, c.layers = 2;
  c.dropout = 0.1, c.max_len = 32;
  return c;
}

// Three sources of 5, 2 and 3 words (6, 3 and 4 tokens with </s>), padded to 6.
Batch sources() {
  const std::vector<EncodedPair> pairs = {{{4, 5, 6, 7, 8}, {4}}, {{5, 6}, {4}}, {{8, 7, 4}, {4}}};
  return collate(pairs, {0, 1, 2});
}

Tensor row(const Tensor& t, int64_t b) { return t.narrow(0, b, 1); }

// log P(tokens | src) by teacher forcing, [1, S] src: the decoder input is bos + tokens[:-1] and
// the mask purely causal (a generated token may be any id, pad included). Also returns the
// per-position log-softmax rows, for the argmax checks.
struct Forced {
  double log_prob = 0;
  std::vector<std::vector<double>> rows;  // [position][token]
};

Forced teacher_forced(EncoderDecoder& model, const Tensor& src, const Tensor& src_mask,
                      const std::vector<int64_t>& tokens, int64_t bos = Vocab::bos) {
  std::vector<int64_t> in{bos};
  in.insert(in.end(), tokens.begin(), tokens.end() - 1);
  const auto n = static_cast<int64_t>(in.size());
  const Tensor tgt_in = from_vector(in, {1, n});
  Tensor logits;  // [1, n, V]
  {
    InferenceGuard inference(model);
    logits = model.forward(src, tgt_in, src_mask, causal_mask(n).unsqueeze(0)).value();
  }
  const int64_t vocab = logits.size(2);
  const std::vector<double> l = logits.to_vector<double>();
  Forced out;
  for (int64_t t = 0; t < n; ++t) {
    const double* z = l.data() + t * vocab;
    double m = -std::numeric_limits<double>::infinity(), s = 0;
    for (int64_t v = 0; v < vocab; ++v) m = std::max(m, z[v]);
    for (int64_t v = 0; v < vocab; ++v) s += std::exp(z[v] - m);
    std::vector<double> lsm(static_cast<size_t>(vocab));
    for (int64_t v = 0; v < vocab; ++v) lsm[static_cast<size_t>(v)] = z[v] - m - std::log(s);
    out.log_prob += lsm[static_cast<size_t>(tokens[static_cast<size_t>(t)])];
    out.rows.push_back(std::move(lsm));
  }
  return out;
}

size_t argmax(const std::vector<double>& v) {
  return static_cast<size_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

}  // namespace

TEST_CASE("decoding: scores that are not finite stop greedy and beam search, naming the position") {
  EncoderDecoder model(tiny_config(), 6);  // every weight finite, the output projection's 3e38: the scores overflow
  for (auto& [name, p] : model.named_parameters())
    if (name.rfind("generator.", 0) == 0) Tensor(p.value()).fill_(3e38);
  const Batch b = sources();
  const Tensor src = row(b.src, 0), mask = row(padding_mask(b.src, Vocab::pad), 0);
  CHECK_THROWS_MSG(greedy_decode(model, src, mask), ValueError,
                   "decode: the model's scores for the target token at position 1 hold ");
  CHECK_THROWS_MSG(beam_search(model, src, mask, 3), ValueError,
                   "decode: the model's scores for the target token at position 1 hold ");
}

TEST_CASE(
    "greedy_decode: cached and uncached decoding give the same tokens and log-probabilities, which teacher forcing "
    "confirms") {
  EncoderDecoder model(tiny_config(), 3);
  model.train();
  const Batch b = sources();
  for (const int64_t eos : {Vocab::eos, int64_t{-1}}) {
    INFO("eos " << eos);
    const DecodeOptions cached{.max_len = 12, .eos = eos, .use_cache = true};
    DecodeOptions uncached = cached;
    uncached.use_cache = false;
    const auto with = greedy_decode(model, b.src, padding_mask(b.src, Vocab::pad), cached);
    const auto without = greedy_decode(model, b.src, padding_mask(b.src, Vocab::pad), uncached);
    CHECK(model.is_training());  // the mode comes back
    REQUIRE(with.size() == 3);
    REQUIRE(without.size() == 3);
    for (int64_t s = 0; s < 3; ++s) {
      INFO("sentence " << s);
      const Hypothesis& h = with[static_cast<size_t>(s)];
      CHECK(h.tokens == without[static_cast<size_t>(s)].tokens);
      CHECK(h.log_prob == Approx(without[static_cast<size_t>(s)].log_prob).epsilon(1e-5));
      CHECK(h.score == h.log_prob);
      REQUIRE(!h.tokens.empty());
      CHECK(h.tokens.size() <= 12);
      // Stops at </s> and only there (or at max_len).
      for (size_t t = 0; t + 1 < h.tokens.size(); ++t) CHECK(h.tokens[t] != eos);
      if (h.tokens.size() < 12) CHECK(h.tokens.back() == eos);
      if (eos == -1) CHECK(h.tokens.size() == 12);
      // Each token is the argmax of the teacher-forced distribution, and the log-probabilities add up.
      const Forced f = teacher_forced(model, row(b.src, s), row(padding_mask(b.src, Vocab::pad), s), h.tokens);
      for (size_t t = 0; t < h.tokens.size(); ++t) CHECK(argmax(f.rows[t]) == static_cast<size_t>(h.tokens[t]));
      CHECK(h.log_prob == Approx(f.log_prob).epsilon(1e-5).margin(1e-5));
      CHECK(h.log_prob < 0);
      // Decoding a sentence alone gives what decoding it in the padded batch gave.
      const Tensor alone = b.src.narrow(1, 0, s == 0 ? 6 : s == 1 ? 3 : 4).narrow(0, s, 1);
      const auto single = greedy_decode(model, alone, padding_mask(alone, Vocab::pad), cached);
      CHECK(single.front().tokens == h.tokens);
    }
  }
  model.train();
}

TEST_CASE("beam_search: beam 1 is greedy, cached and uncached agree, a wider beam scores at least as well as greedy") {
  EncoderDecoder model(tiny_config(), 4);
  const Batch b = sources();
  const DecodeOptions options{.max_len = 10};
  DecodeOptions uncached = options;
  uncached.use_cache = false;
  const auto greedy = greedy_decode(model, b.src, padding_mask(b.src, Vocab::pad), options);
  for (int64_t s = 0; s < 3; ++s) {
    INFO("sentence " << s);
    const Tensor src = row(b.src, s), mask = row(padding_mask(b.src, Vocab::pad), s);
    const Hypothesis& g = greedy[static_cast<size_t>(s)];
    const Hypothesis one = beam_search(model, src, mask, 1, 0.0, options);
    CHECK(one.tokens == g.tokens);
    CHECK(one.log_prob == Approx(g.log_prob).epsilon(1e-5));
    CHECK(one.score == Approx(g.log_prob).epsilon(1e-5));  // alpha 0: the score is the log-probability

    // With a length penalty beam 1 follows greedy's path, so it can only do better than greedy's
    // hypothesis under that penalty.
    const double lp = std::pow((5.0 + static_cast<double>(g.tokens.size())) / 6.0, 0.6);
    CHECK(beam_search(model, src, mask, 1, 0.6, options).score >= g.log_prob / lp - 1e-6);

    for (const double alpha : {0.0, 0.6}) {
      INFO("alpha " << alpha);
      const Hypothesis four = beam_search(model, src, mask, 4, alpha, options);
      const Hypothesis four_uncached = beam_search(model, src, mask, 4, alpha, uncached);
      CHECK(four.tokens == four_uncached.tokens);
      CHECK(four.score == Approx(four_uncached.score).epsilon(1e-5));
      CHECK(four.log_prob == Approx(four_uncached.log_prob).epsilon(1e-5));
      const double penalty = std::pow((5.0 + static_cast<double>(four.tokens.size())) / 6.0, alpha);
      CHECK(four.score == Approx(four.log_prob / penalty).epsilon(1e-12));
      const double greedy_score = g.log_prob / std::pow((5.0 + static_cast<double>(g.tokens.size())) / 6.0, alpha);
      CHECK(four.score >= greedy_score - 1e-6);
      // The reported log-probability is the teacher-forced one.
      CHECK(four.log_prob == Approx(teacher_forced(model, src, mask, four.tokens).log_prob).epsilon(1e-5).margin(1e-5));
      CHECK((four.tokens.back() == Vocab::eos || four.tokens.size() == 10));
    }
  }
}

TEST_CASE("beam_search: on_weigh reports each step's 2 x beam best extensions, best first, and what became of them") {
  EncoderDecoder model(tiny_config(), 4);
  const Batch b = sources();
  const Tensor src = row(b.src, 0), mask = row(padding_mask(b.src, Vocab::pad), 0);
  const int64_t beam = 3;
  std::vector<std::vector<WeighedExtension>> steps;
  std::vector<std::vector<Hypothesis>> alive_by_step;
  DecodeOptions options{.max_len = 8};
  options.on_weigh = [&](int64_t step, const std::vector<WeighedExtension>& weighed) {
    CHECK(step == static_cast<int64_t>(steps.size()));
    steps.push_back(weighed);
  };
  options.on_step = [&](int64_t, const std::vector<Hypothesis>& alive) { alive_by_step.push_back(alive); };
  const Hypothesis result = beam_search(model, src, mask, beam, 0.6, options);
  REQUIRE(!steps.empty());
  REQUIRE(steps.size() == alive_by_step.size());
  std::vector<Hypothesis> finished;
  for (size_t step = 0; step < steps.size(); ++step) {
    INFO("step " << step);
    const std::vector<WeighedExtension>& weighed = steps[step];
    CHECK(weighed.size() <= static_cast<size_t>(2 * beam));
    std::vector<std::vector<int64_t>> alive, kept;
    int64_t not_pruned = 0;
    bool pruned_seen = false;
    for (size_t i = 0; i < weighed.size(); ++i) {
      const Hypothesis& h = weighed[i].hypothesis;
      CHECK(h.tokens.size() == step + 1);
      if (i > 0) CHECK(h.log_prob <= weighed[i - 1].hypothesis.log_prob);  // best first
      // Its log P is the teacher-forced one, recomputed here from the model's logits.
      CHECK(h.log_prob == Approx(teacher_forced(model, src, mask, h.tokens).log_prob).epsilon(1e-5).margin(1e-5));
      CHECK(h.score == Approx(h.log_prob / std::pow((5.0 + static_cast<double>(step + 1)) / 6.0, 0.6)));
      if (weighed[i].fate == BeamFate::Pruned) {
        pruned_seen = true;
      } else {
        CHECK(!pruned_seen);  // pruning takes only what comes after the beam is full
        if (weighed[i].fate == BeamFate::Finished) finished.push_back(h);
        if (h.tokens.back() != Vocab::eos) ++not_pruned, kept.push_back(h.tokens);
        if (weighed[i].fate == BeamFate::Finished) CHECK((h.tokens.back() == Vocab::eos || h.tokens.size() == 8));
      }
    }
    CHECK(not_pruned <= beam);
    if (pruned_seen) CHECK(not_pruned == beam);
    for (const Hypothesis& h : alive_by_step[step]) alive.push_back(h.tokens);
    CHECK(kept == alive);  // the ones kept alive are on_step's
  }
  // The result is the best-scoring of the finished ones.
  REQUIRE(!finished.empty());
  const auto best = std::max_element(finished.begin(), finished.end(),
                                     [](const Hypothesis& x, const Hypothesis& y) { return x.score < y.score; });
  CHECK(result.tokens == best->tokens);
  // Weighing changes nothing in the search.
  CHECK(beam_search(model, src, mask, beam, 0.6, {.max_len = 8}).tokens == result.tokens);
}

TEST_CASE("beam_search: a beam wide enough to keep every prefix finds the best sequence found by exhaustive search") {
  // Target vocabulary 6, at most 3 tokens: 1 + 5 + 5 * 5 * 6 = 156 sequences (</s> may only come
  // last; a sequence shorter than 3 must end in it). A beam of 25 keeps every live prefix.
  EncoderDecoder model(tiny_config(6), 8);
  const Batch b = sources();
  const Tensor src = row(b.src, 0), mask = row(padding_mask(b.src, Vocab::pad), 0);
  std::vector<std::vector<int64_t>> all{{Vocab::eos}};
  for (int64_t x = 0; x < 6; ++x) {
    if (x == Vocab::eos) continue;
    all.push_back({x, Vocab::eos});
    for (int64_t y = 0; y < 6; ++y) {
      if (y == Vocab::eos) continue;
      for (int64_t z = 0; z < 6; ++z) all.push_back({x, y, z});
    }
  }
  REQUIRE(all.size() == 156);
  std::vector<double> log_probs;
  for (const auto& seq : all) log_probs.push_back(teacher_forced(model, src, mask, seq).log_prob);
  for (const double alpha : {0.0, 0.6, 2.0}) {
    INFO("alpha " << alpha);
    size_t best = 0;
    double best_score = -std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < all.size(); ++i) {
      const double score = log_probs[i] / std::pow((5.0 + static_cast<double>(all[i].size())) / 6.0, alpha);
      if (score > best_score) best_score = score, best = i;
    }
    for (const bool cache : {true, false}) {
      INFO("cache " << cache);
      const Hypothesis h = beam_search(model, src, mask, 25, alpha, {.max_len = 3, .use_cache = cache});
      CHECK(h.tokens == all[best]);
      CHECK(h.score == Approx(best_score).epsilon(1e-5));
    }
  }
}

TEST_CASE("best_extensions: the most probable (row, token) extensions by hand, dead rows left out, ties by index") {
  const double inf = std::numeric_limits<double>::infinity();
  // Two live prefixes of log P -1 and -2, a dead one; 3 tokens.
  const std::vector<double> alive = {-1, -2, -inf};
  const Tensor logp = tensor({-0.5, -3.0, -1.5,    // row 0: totals -1.5, -4.0, -2.5
                              -0.25, -1.0, -0.75,  // row 1: totals -2.25, -3.0, -2.75
                              0, 0, 0},            // row 2: dead, totals -inf
                             {3, 3}, DType::Float64);
  const std::vector<BeamCandidate> best = best_extensions(alive, logp, 4);
  REQUIRE(best.size() == 4);
  const int64_t expected[4][2] = {{0, 0}, {1, 0}, {0, 2}, {1, 2}};  // -1.5, -2.25, -2.5, -2.75
  const double expected_logp[4] = {-1.5, -2.25, -2.5, -2.75};
  for (size_t i = 0; i < 4; ++i) {
    CHECK(best[i].row == expected[i][0]);
    CHECK(best[i].token == expected[i][1]);
    CHECK(best[i].log_prob == expected_logp[i]);
  }
  // Asked for more than the 6 live extensions: the 6, never a dead row's.
  const std::vector<BeamCandidate> all = best_extensions(alive, logp, 100);
  CHECK(all.size() == 6);
  CHECK(all.back().log_prob == -4.0);
  // Equal totals: the smaller row * V + token first.
  const std::vector<BeamCandidate> tied = best_extensions({0, 0}, zeros({2, 2}, DType::Float64), 3);
  REQUIRE(tied.size() == 3);
  CHECK((tied[0].row == 0 && tied[0].token == 0 && tied[1].row == 0 && tied[1].token == 1 && tied[2].row == 1));
  CHECK_THROWS_MSG(best_extensions({0, 0}, zeros({3, 2}, DType::Float64), 1), ShapeError,
                   "best_extensions: log_probs must be float64 [2, V] for 2 live hypotheses, got float64 [3, 2]");
}

TEST_CASE("sentence_log_probs: the sum over each target's tokens of log_softmax at the true token, by hand") {
  EncoderDecoder model(tiny_config(), 5);
  model.train();
  const std::vector<EncodedPair> pairs = {{{4, 5, 6}, {7, 8, 4, 5}}, {{6}, {8}}};
  const Batch b = collate(pairs, {0, 1});
  const std::vector<double> scores = sentence_log_probs(model, b);
  CHECK(model.is_training());
  REQUIRE(scores.size() == 2);
  for (size_t s = 0; s < 2; ++s) {
    INFO("sentence " << s);
    // Unpadded, one sentence at a time: target + </s> predicted from <s> + target.
    std::vector<int64_t> src_ids = pairs[s].source, target = pairs[s].target;
    src_ids.push_back(Vocab::eos), target.push_back(Vocab::eos);
    const Tensor src = from_vector(src_ids, {1, static_cast<int64_t>(src_ids.size())});
    const Forced f = teacher_forced(model, src, padding_mask(src, Vocab::pad), target);
    CHECK(scores[s] == Approx(f.log_prob).epsilon(1e-5));
    CHECK(scores[s] < 0);
  }
  model.train();
}

TEST_CASE("decoding: bad arguments are typed errors with messages") {
  EncoderDecoder model(tiny_config(), 6);
  const Batch b = sources();
  const Tensor src = row(b.src, 0), mask = row(padding_mask(b.src, Vocab::pad), 0);
  CHECK_THROWS_MSG(beam_search(model, src, mask, 0), ValueError, "beam size must be at least 1, got 0");
  CHECK_THROWS_MSG(beam_search(model, src, mask, -3), ValueError, "beam size must be at least 1, got -3");
  CHECK_THROWS_MSG(beam_search(model, src, mask, 2, -0.5), ValueError, "alpha must be >= 0, got -0.5");
  CHECK_THROWS_MSG(beam_search(model, src, mask, 2, std::nan("")), ValueError, "alpha must be >= 0");
  CHECK_THROWS_MSG(beam_search(model, src, mask, 2, 0.6, {.max_len = 0}), ValueError,
                   "max_len must be at least 1, got 0");
  CHECK_THROWS_MSG(greedy_decode(model, src, mask, {.max_len = 0}), ValueError, "max_len must be at least 1, got 0");
  CHECK_THROWS_MSG(greedy_decode(model, src, mask, {.max_len = -2}), ValueError, "max_len must be at least 1, got -2");
  CHECK_THROWS_MSG(beam_search(model, b.src, padding_mask(b.src, Vocab::pad), 2), ShapeError,
                   "src must be [1, S], got [3, 6]");
  CHECK_THROWS_MSG(beam_search(model, src.squeeze(0), mask, 2), ShapeError, "src must be [1, S]");
  // A model left in training mode stays in it after an error, too.
  model.train();
  CHECK_THROWS_AS(greedy_decode(model, from_vector(std::vector<int64_t>{4, 99}, {1, 2}), mask.narrow(2, 0, 2)), Error);
  CHECK(model.is_training());
}

TEST_CASE("teacher_forced_loss: the mean over target tokens of minus the sentence log-probabilities") {
  EncoderDecoder model(tiny_config(), 7);
  model.train();
  const std::vector<EncodedPair> pairs = {{{4, 5, 6}, {7, 8, 4, 5}}, {{6}, {8}}, {{5, 5, 7, 8}, {4, 6}}};
  const std::vector<Batch> batches = {collate(pairs, {0, 1}), collate(pairs, {2})};
  double log_prob = 0;
  int64_t tokens = 0;
  for (const Batch& b : batches) {
    for (double lp : sentence_log_probs(model, b)) log_prob += lp;
    tokens += b.ntokens;
  }
  CHECK(tokens == 5 + 2 + 3);  // each target and its </s>
  CHECK(teacher_forced_loss(model, batches) == Approx(-log_prob / static_cast<double>(tokens)).epsilon(1e-5));
  CHECK(model.is_training());
  CHECK(teacher_forced_loss(model, {}) == 0);
}

TEST_CASE(
    "evaluate_translation: greedy decoding in length-sorted batches gives each sentence what translate gives it "
    "alone") {
  EncoderDecoder model(tiny_config(), 9);
  std::string words = "<pad>\n<s>\n</s>\n<unk>\n";
  for (const char* w : {"a", "b", "c", "d", "e"}) words += std::string(w) + "\n";
  const Vocab source = Vocab::from_text(words, "test"), target = Vocab::from_text(words, "test");
  const std::vector<SentencePair> pairs = {{{"a", "b", "c"}, {"c", "b", "a"}},
                                           {{"d"}, {"d"}},
                                           {{"e", "e", "a", "b"}, {"b"}},
                                           {{"c", "never-seen"}, {"a"}},
                                           {{"b", "a"}, {"e"}}};
  const TranslationReport r = evaluate_translation(model, pairs, source, target, 1, 0.6, /*batch_size=*/2);
  REQUIRE(r.hypotheses.size() == pairs.size());
  size_t exact = 0;
  for (size_t i = 0; i < pairs.size(); ++i) {
    INFO("sentence " << i);
    CHECK(r.hypotheses[i] == translate(model, pairs[i].source, source, target));
    exact += r.hypotheses[i] == pairs[i].target;
    for (const std::string& w : r.hypotheses[i]) CHECK((w != "<s>" && w != "</s>" && w != "<pad>"));
  }
  CHECK(r.exact_match == Approx(static_cast<double>(exact) / 5));
  // Beam search goes one sentence at a time through translate.
  const TranslationReport beam = evaluate_translation(model, pairs, source, target, 3, 0.6);
  for (size_t i = 0; i < pairs.size(); ++i)
    CHECK(beam.hypotheses[i] == translate(model, pairs[i].source, source, target, 3, 0.6));
}

TEST_CASE("write_attention_maps: one labelled SVG per layer, head and kind of attention") {
  test::TempDir dir("attention");
  EncoderDecoder model(tiny_config(), 10);
  const Batch one = collate({{{4, 5, 6}, {7, 8}}}, {0});  // src 4 tokens, tgt_in 3
  const std::vector<std::string> src_labels = {"le", "chat", "noir", "</s>"}, tgt_labels = {"<s>", "black", "cat"};
  const auto paths = write_attention_maps(model, one, src_labels, tgt_labels, dir / "maps");
  CHECK(paths.size() == 2 * 2 * 3);  // 2 layers, 2 heads, encoder + decoder self + cross
  for (const char* name : {"encoder-layer0-head0.svg", "encoder-layer1-head1.svg", "decoder-cross-layer0-head1.svg"}) {
    INFO(name);
    const std::string svg = test::read_bytes(dir / (std::string("maps/") + name));
    CHECK(svg.find("<svg") != std::string::npos);
    CHECK(svg.find("chat") != std::string::npos);  // source labels on encoder and cross maps
  }
  CHECK(test::read_bytes(dir / "maps/decoder-self-layer0-head0.svg").find("black") != std::string::npos);
  for (auto& layer : *model.encoder->layers) CHECK_FALSE(layer->keep_attention);  // switched off again
  CHECK_THROWS_MSG(write_attention_maps(model, one, {"too", "few"}, tgt_labels, dir / "maps"), ShapeError,
                   "a label per position");
  CHECK_THROWS_MSG(
      write_attention_maps(model, collate({{{4}, {5}}, {{6}, {7}}}, {0, 1}), {"a", "b"}, {"c", "d"}, dir / "maps"),
      ShapeError, "need one sentence pair");
}

TEST_CASE(
    "write_attention_maps: a directory that cannot be created is a DataError, and the layers stop keeping attention") {
  test::TempDir dir("attention-fail");
  EncoderDecoder model(tiny_config(), 10);
  test::write_text(dir / "file", "not a directory");
  const Batch one = collate({{{4, 5}, {7, 8}}}, {0});  // src 3 tokens, tgt_in 3
  const std::string maps = dir / "file/maps";
  // The forward pass that fills the weights comes first; the directory fails after it.
  CHECK_THROWS_MSG(write_attention_maps(model, one, {"a", "b", "</s>"}, {"<s>", "x", "y"}, maps), DataError,
                   "write_attention_maps: cannot create directory " + maps);
  for (auto& layer : *model.encoder->layers) {
    CHECK_FALSE(layer->keep_attention);
    CHECK_FALSE(layer->attention.defined());  // nor holding on to the weights
  }
  for (auto& layer : *model.decoder->layers) {
    CHECK_FALSE(layer->keep_attention);
    CHECK_FALSE(layer->self_attention.defined());
    CHECK_FALSE(layer->cross_attention.defined());
  }
  CHECK(model.is_training());  // and the model is back in its mode
}
