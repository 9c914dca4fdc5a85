// Chapter 15: one block, three architectures. The companion program of
// tutorials/15-one-block-three-architectures.md: every listing of the chapter is a piece of this
// file, and every output the chapter shows is what it (or the gradformer runs the chapter lists) prints.
//
//   15-one-block-three-architectures            the chapter's numbers (the default 1000-step language model)
//   15-one-block-three-architectures --quick    the same checks on a 30-step model (what the test suite runs)
//
// It exits with a non-zero status if a claim the chapter makes does not hold.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <numeric>
#include <string>
#include <tuple>
#include <vector>

#include "autograd/all.h"
#include "claims.h"
#include "transformer/data/lm_batch.h"
#include "transformer/data/toy_corpus.h"
#include "transformer/inspect/diagram.h"
#include "transformer/inspect/svg.h"
#include "transformer/model/masks.h"
#include "transformer/model/sampling.h"
#include "transformer/store/checkpoint.h"
#include "transformer/train/trainer.h"

using namespace gradformer;
using namespace tutorial;

namespace {

void print_mask(const char* title, const Tensor& mask) {  // mask [Tq, Tk] bool
  std::printf("%s\n", title);
  const std::vector<int64_t> m = mask.to(DType::Int64).contiguous().to_vector<int64_t>();
  const int64_t tq = mask.size(0), tk = mask.size(1);
  for (int64_t i = 0; i < tq; ++i) {
    std::printf("  ");
    for (int64_t j = 0; j < tk; ++j) std::printf("%s", m[static_cast<size_t>(i * tk + j)] ? " 1" : " .");
    std::printf("\n");
  }
}

// ---- the figure of the three architectures ---------------------------------------------------------

// A mask [Tq, Tk] as little squares, filled where attention is allowed, under its title.
void mask_squares(Diagram& d, double x, double y, const std::string& title, const Tensor& mask) {
  const std::vector<int64_t> m = mask.to(DType::Int64).contiguous().to_vector<int64_t>();
  const int64_t tq = mask.size(0), tk = mask.size(1);
  const double cell = 11;
  d.text(x + cell * static_cast<double>(tk) / 2, y - 7, title, {.size = 11});
  for (int64_t i = 0; i < tq; ++i)
    for (int64_t j = 0; j < tk; ++j)
      d.rect(x + cell * static_cast<double>(j), y + cell * static_cast<double>(i), cell, cell,
             m[static_cast<size_t>(i * tk + j)] ? "#5b8fd0" : "#ffffff", "#bbbbbb");
}

// One stack drawn at centre cx: the input at the bottom, the embedding, the block (its sub-layers
// named bottom to top, each with its residual connection and LayerNorm), the head, the output.
struct Stack {
  std::string input, head, output;
  std::vector<std::pair<std::string, const char*>> sublayers;  // bottom to top: name, fill
};
constexpr double kBlockBottom = 400;

// Returns the top of the block's frame.
double draw_stack(Diagram& d, double cx, double width, const Stack& s) {
  d.text(cx, 488, s.input, {.size = 12});
  d.arrow({{cx, 474}, {cx, 452}});
  d.box(cx - width / 2, 420, width, 32, "embeddings + positions", "#eeeeee");
  d.arrow({{cx, 420}, {cx, kBlockBottom}});
  const double top = kBlockBottom - 50 * static_cast<double>(s.sublayers.size()) - 28;
  d.rect(cx - width / 2 - 8, top, width + 16, kBlockBottom - top, "#f4f4f4", "#999", 8);
  d.text(cx + width / 2 + 2, kBlockBottom - 8, "\u00d7 N", {.size = 12, .anchor = "end", .colour = "#555"});
  double y = kBlockBottom - 62;
  for (size_t i = 0; i < s.sublayers.size(); ++i) {
    d.box(cx - width / 2, y, width, 34, s.sublayers[i].first, s.sublayers[i].second);
    if (i + 1 < s.sublayers.size()) d.arrow({{cx, y}, {cx, y - 16}});
    y -= 50;
  }
  if (s.head.empty()) return top;
  d.arrow({{cx, y + 50}, {cx, 184}});
  d.box(cx - width / 2, 152, width, 32, s.head, "#e3f1dc");
  d.arrow({{cx, 152}, {cx, 134}});
  d.text(cx, 124, s.output, {.size = 12});
  return top;
}

// The three architectures side by side (15-three-architectures.svg): the same block in each, the
// masks of their attentions (the chapter's sequence), their inputs, heads and outputs.
void draw_three_architectures(const Tensor& ids, const Tensor& src) {
  const char *attn = "#fde2c2", *ffn = "#d2ecf9";
  Diagram d(1000, 680);
  d.text(500, 28, "One block, three architectures", {.size = 16});
  d.text(500, 50, "each box: the sub-layer with its residual connection and LayerNorm (chapters 8 and 9)",
         {.size = 13, .colour = "#555"});
  for (const auto& [left, width, title] :
       {std::tuple{20.0, 440.0, "encoder-decoder (the paper)"}, std::tuple{480.0, 240.0, "decoder-only (GPT)"},
        std::tuple{740.0, 240.0, "encoder-only (BERT)"}}) {
    d.rect(left, 70, width, 570, "none", "#999", 10);
    d.text(left + width / 2, 94, title, {.size = 14, .bold = true});
  }
  const double encoder_top =
      draw_stack(d, 130, 170, {"source [B, S]", "", "", {{"self-attention", attn}, {"feed forward", ffn}}});
  draw_stack(d, 345, 170,
             {"target, shifted right [B, T]",
              "Linear, softmax",
              "next target token [B, T, V]",
              {{"masked self-attention", attn}, {"cross-attention", attn}, {"feed forward", ffn}}});
  d.arrow({{130, encoder_top + 16}, {130, 190}, {240, 190}, {240, 305}, {258, 305}}, "#1f5fa8");
  d.text(130, 180, "memory [B, S, d]", {.size = 11, .colour = "#1f5fa8"});
  d.text(235, 254, "K, V", {.size = 11, .anchor = "end", .colour = "#1f5fa8", .bold = true});
  draw_stack(d, 600, 180,
             {"tokens [B, T]",
              "Linear (tied), softmax",
              "next token [B, T, V]",
              {{"masked self-attention", attn}, {"feed forward", ffn}}});
  draw_stack(d, 860, 180,
             {"tokens, some <mask> [B, S]",
              "masked-word head; classifier",
              "words [B, S, V]; class [B, C]",
              {{"self-attention", attn}, {"feed forward", ffn}}});
  const Tensor padding = padding_mask(ids, 0).expand({1, 6, 6}).select(0, 0), causal = target_mask(ids, 0).select(0, 0);
  const Tensor source = padding_mask(src, 0).expand({1, 5, 5}).select(0, 0);
  const Tensor cross = padding_mask(src, 0).expand({1, 6, 5}).select(0, 0);
  d.text(240, 526, "the masks (blue: attention allowed; row: query, column: key)", {.size = 12});
  mask_squares(d, 55, 556, "encoder: padding", source);
  mask_squares(d, 210, 556, "decoder: padding AND causal", causal);
  mask_squares(d, 355, 556, "cross: padding", cross);
  d.text(600, 526, "the mask", {.size = 12});
  mask_squares(d, 567, 556, "padding AND causal", causal);
  d.text(860, 526, "the mask", {.size = 12});
  mask_squares(d, 827, 556, "padding", padding);
  d.text(500, 668, "sequence: <s> le chat noir </s> <pad> (source: le chat noir </s> <pad>)",
         {.size = 12, .colour = "#555"});
  write_svg(output_path("15-three-architectures.svg"), d.svg());
}

// ---- the figure of the three knobs -----------------------------------------------------------------

// One row of kept and dropped tokens under the bars: a kept token's probability after the knob, in green.
void kept_row(Diagram& d, double left, double y, const std::string& name, const std::vector<double>& p) {
  d.text(left - 10, y + 18, name, {.size = 12, .anchor = "end", .bold = true});
  for (size_t i = 0; i < p.size(); ++i) {
    const double x = left + 105 * static_cast<double>(i) + 5;
    d.rect(x, y, 95, 26, p[i] > 0 ? "#d4f0d4" : "#f4f4f4", p[i] > 0 ? "#2e8b57" : "#cccccc", 4);
    d.text(x + 47.5, y + 18, p[i] > 0 ? fixed(p[i], 3) : "dropped", {.size = 12, .colour = p[i] > 0 ? "#222" : "#999"});
  }
}

// Temperature, top-k and top-p on one distribution (15-sampling.svg): eight tokens with fixed logits,
// so the picture is the same after any training: bars for three temperatures, then what each filter keeps.
void draw_sampling() {
  const std::vector<std::string> words{"A", "B", "C", "D", "E", "F", "G", "H"};
  const std::vector<float> l{2.2f, 1.4f, 1.1f, 0.8f, 0.5f, 0.3f, 0.0f, -0.6f};
  const Tensor logits = from_vector(l, {8});
  const std::vector<std::pair<const char*, const char*>> temperatures{
      {"T=0.5", "#1f5fa8"}, {"T=1", "#5b8fd0"}, {"T=2", "#b3cde8"}};
  const double left = 140, base = 316, scale = 300;  // pixels per unit of probability
  Diagram d(1000, 540);
  d.text(500, 28, "Temperature, top-k and top-p applied to one next-token distribution", {.size = 16});
  d.text(500, 50, "eight made-up tokens A to H, their logits fixed for the picture: 2.2 1.4 1.1 0.8 0.5 0.3 0 -0.6",
         {.size = 13, .colour = "#555"});
  for (double tick : {0.0, 0.2, 0.4, 0.6}) {
    d.arrow({{left, base - scale * tick}, {left + 840, base - scale * tick}}, "#dddddd", false, false);
    d.text(left - 8, base - scale * tick + 4, fixed(tick, 1), {.size = 11, .anchor = "end", .colour = "#555"});
  }
  d.text(left - 40, base - 100, "probability", {.size = 12, .colour = "#555", .rotate = -90});
  for (size_t t = 0; t < temperatures.size(); ++t) {
    const double temperature = t == 0 ? 0.5 : t == 1 ? 1.0 : 2.0;
    const std::vector<double> p = next_token_distribution(logits, {.temperature = temperature});
    d.rect(left + 560 + 100 * static_cast<double>(t), 70, 14, 14, temperatures[t].second, temperatures[t].second);
    d.text(left + 580 + 100 * static_cast<double>(t), 82, temperatures[t].first, {.size = 12, .anchor = "start"});
    for (size_t i = 0; i < p.size(); ++i) {
      const double x = left + 105 * static_cast<double>(i) + 8 + 30 * static_cast<double>(t);
      d.rect(x, base - scale * p[i], 28, scale * p[i], temperatures[t].second, temperatures[t].second);
      d.text(x + 14, base - scale * p[i] - 4, fixed(p[i], 2), {.size = 10});
    }
  }
  for (size_t i = 0; i < words.size(); ++i)
    d.text(left + 105 * static_cast<double>(i) + 52.5, base + 20, words[i], {.size = 13, .bold = true});
  std::vector<double> cumulative = next_token_distribution(logits, {});
  for (size_t i = 1; i < cumulative.size(); ++i) cumulative[i] += cumulative[i - 1];
  const std::vector<double> top_k = next_token_distribution(logits, {.top_k = 3});
  const std::vector<double> top_p = next_token_distribution(logits, {.top_p = 0.9});
  claim(std::count_if(top_k.begin(), top_k.end(), [](double v) { return v > 0; }) == 3, "the picture's top-k keeps 3");
  claim(std::count_if(top_p.begin(), top_p.end(), [](double v) { return v > 0; }) == 6 && cumulative[4] < 0.9 &&
            cumulative[5] >= 0.9,
        "the picture's top-p 0.9 keeps the fewest tokens whose probabilities reach 0.9");
  d.text(left - 10, base + 58, "cumulative, T=1", {.size = 12, .anchor = "end"});
  for (size_t i = 0; i < cumulative.size(); ++i)
    d.text(left + 105 * static_cast<double>(i) + 52.5, base + 58, fixed(cumulative[i], 3), {.size = 12});
  kept_row(d, left, base + 76, "top-k 3", top_k);
  kept_row(d, left, base + 114, "top-p 0.9", top_p);
  d.text(500, 488,
         "Temperature divides the logits before the softmax: T=0.5 sharpens the distribution, T=2 flattens it.",
         {.size = 13});
  d.text(500, 508, "top-k keeps the k most likely tokens; top-p the fewest whose cumulative probability reaches p.",
         {.size = 13});
  d.text(500, 528, "Both (here at T=1) drop the rest and renormalise what they keep: the green numbers sum to 1.",
         {.size = 13});
  write_svg(output_path("15-sampling.svg"), d.svg());
}

// ---- 1. the three masks ---------------------------------------------------------------------------

void three_masks() {
  section("the three masks");
  // One padded sequence: <s> le chat noir </s> <pad>   (ids 1 4 5 6 2 0)
  const Tensor ids = from_vector(std::vector<int64_t>{1, 4, 5, 6, 2, 0}, {1, 6});
  const Tensor encoder_only = padding_mask(ids, /*pad=*/0).expand({1, 6, 6});  // BERT: every real token
  const Tensor decoder_only = target_mask(ids, /*pad=*/0);                     // GPT: real tokens j <= i
  print_mask("encoder-only (BERT) self-attention: padding_mask", encoder_only.select(0, 0));
  print_mask("decoder-only (GPT) self-attention: padding_mask AND causal_mask", decoder_only.select(0, 0));
  // The encoder-decoder has both: its encoder uses the first, its decoder's self-attention the second,
  // and its decoder's cross-attention lets every target position see every real source token. The
  // source: le chat noir </s> <pad>   (ids 4 5 6 2 0)
  const Tensor src = from_vector(std::vector<int64_t>{4, 5, 6, 2, 0}, {1, 5});
  print_mask(
      "encoder-decoder cross-attention (6 target positions x source le chat noir </s> <pad>): "
      "padding_mask(source)",
      padding_mask(src, 0).expand({1, 6, 5}).select(0, 0));
  const std::vector<int64_t> e = encoder_only.to(DType::Int64).contiguous().to_vector<int64_t>();
  const std::vector<int64_t> d = decoder_only.to(DType::Int64).contiguous().to_vector<int64_t>();
  const std::vector<int64_t> c = causal_mask(6).to(DType::Int64).contiguous().to_vector<int64_t>();
  bool product = true;
  for (size_t i = 0; i < e.size(); ++i) product = product && d[i] == (e[i] && c[i]);
  claim(product, "the decoder-only mask is the encoder-only mask AND the causal mask");
  std::printf("allowed pairs: encoder-only %lld, decoder-only %lld of 36\n",
              static_cast<long long>(std::accumulate(e.begin(), e.end(), int64_t{0})),
              static_cast<long long>(std::accumulate(d.begin(), d.end(), int64_t{0})));
  draw_three_architectures(ids, src);
}

// ---- 2. the shift -----------------------------------------------------------------------------------

void the_shift(const Vocab& vocab) {
  section("the shift of causal language modelling");
  Generator gen(3);
  const std::vector<std::string> sentence = sample_toy_pair(gen).source;
  std::vector<int64_t> tokens{Vocab::bos};
  for (int64_t id : vocab.encode(sentence)) tokens.push_back(id);
  tokens.push_back(Vocab::eos);
  const LmBatch batch = make_lm_batch({scored_from(tokens)}, {0});
  auto words = [&](const Tensor& t) {
    std::string out;
    for (int64_t id : t.to_vector<int64_t>()) out += (out.empty() ? "" : " ") + vocab.token(id);
    return out;
  };
  std::printf("tokens:  %s\n", words(from_vector(tokens, {static_cast<int64_t>(tokens.size())})).c_str());
  std::printf("inputs:  %s\n", words(batch.inputs).c_str());
  std::printf("targets: %s\n", words(batch.targets).c_str());
  const std::vector<int64_t> in = batch.inputs.to_vector<int64_t>(), out = batch.targets.to_vector<int64_t>();
  claim(std::equal(in.begin() + 1, in.end(), out.begin()),
        "each input after the first is the previous position's target");
  std::printf("%lld predictions for %zu words: every word and </s>\n", static_cast<long long>(batch.ntokens),
              sentence.size());
}

// ---- 3. the language model against the grammar's entropy ---------------------------------------------

TrainReport language_model(bool quick) {
  section("a language model of the toy grammar");
  TrainOptions o = default_train_options("toy-lm", Architecture::DecoderOnly);
  if (quick) o.epochs = 1, o.batches_per_epoch = 30;  // the full run: the defaults, 1000 steps
  o.out_dir = "runs/toy-lm", o.quiet = true;
  const TrainReport r = train(o);
  std::printf("%lld steps of %lld fresh sentences\n", static_cast<long long>(r.steps),
              static_cast<long long>(o.batch_size));
  std::printf("validation cross-entropy  %.4f nats/token\n", r.valid_loss);
  std::printf("the grammar's entropy     %.4f nats/token (the same 2000 sentences)\n", *r.entropy_floor);
  std::printf("gap                       %.4f nats/token\n", r.valid_loss - *r.entropy_floor);
  claim(r.valid_loss > *r.entropy_floor, "no model beats the grammar's own entropy");
  if (!quick) claim(r.valid_loss - *r.entropy_floor < 0.05, "1000 steps come within 0.05 nats/token of the floor");
  return r;
}

// ---- 4. sampling ------------------------------------------------------------------------------------

void sampling(const std::string& checkpoint) {
  section("the next-token distribution and the three knobs");
  LoadedDecoderOnly ckpt = load_decoder_only_checkpoint(checkpoint);
  DecoderOnly& model = *ckpt.model;
  const Vocab& vocab = ckpt.info.target_tokenizer.vocab();
  const std::vector<int64_t> prompt{Vocab::bos, vocab.id("le"), vocab.id("chat")};
  Tensor logits;
  {
    InferenceGuard guard(model);
    const Tensor ids = from_vector(prompt, {1, 3});
    logits = model.forward(ids, causal_mask(3).unsqueeze(0)).value().select(0, 0).select(0, 2).contiguous();  // [V]
  }
  const std::vector<double> p1 = next_token_distribution(logits, {});
  std::vector<size_t> order(p1.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p1[a] > p1[b]; });
  const std::vector<std::pair<const char*, SamplingOptions>> knobs{{"T=1", {}},
                                                                   {"T=0.5", {.temperature = 0.5}},
                                                                   {"T=2", {.temperature = 2}},
                                                                   {"top-k 3", {.top_k = 3}},
                                                                   {"top-p 0.9", {.top_p = 0.9}},
                                                                   {"T=0", {.temperature = 0}}};
  std::printf("after \"le chat\"   ");
  for (const auto& [name, o] : knobs) std::printf("%10s", name);
  std::printf("\n");
  std::vector<std::vector<double>> dists;
  for (const auto& [name, o] : knobs) dists.push_back(next_token_distribution(logits, o));
  for (size_t r = 0; r < 8; ++r) {
    std::printf("  %-14s", vocab.token(static_cast<int64_t>(order[r])).c_str());
    for (const auto& d : dists) std::printf("%10.3f", d[order[r]]);
    std::printf("\n");
  }
  auto nonzero = [](const std::vector<double>& d) {
    return std::count_if(d.begin(), d.end(), [](double v) { return v > 0; });
  };
  claim(nonzero(dists[3]) == 3, "top-k 3 keeps three tokens");
  claim(nonzero(dists[5]) == 1 && dists[5][order[0]] == 1, "temperature 0 puts everything on the most likely token");
  claim(dists[1][order[0]] > p1[order[0]] && dists[2][order[0]] < p1[order[0]],
        "a low temperature sharpens, a high one flattens");
  std::printf("tokens kept: top-k 3 %lld, top-p 0.9 %lld, of %lld\n", static_cast<long long>(nonzero(dists[3])),
              static_cast<long long>(nonzero(dists[4])), static_cast<long long>(p1.size()));
  for (uint64_t seed : {1, 2, 3}) {
    Generator gen(seed);
    std::string text = "le chat";
    for (int64_t id : generate(model, prompt, {.max_tokens = 20}, gen)) {
      if (id == Vocab::eos) break;
      text += " " + vocab.token(id);
    }
    std::printf("seed %llu: %s\n", static_cast<unsigned long long>(seed), text.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && !std::strcmp(argv[1], "--quick");
  three_masks();
  draw_sampling();
  const TrainReport lm = language_model(quick);
  const LoadedDecoderOnly ckpt = load_decoder_only_checkpoint(lm.checkpoint_path);
  the_shift(ckpt.info.target_tokenizer.vocab());
  sampling(lm.checkpoint_path);
  return failures == 0 ? 0 : 1;
}
