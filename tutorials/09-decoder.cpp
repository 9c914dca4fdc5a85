// Chapter 9: the decoder. The companion program of tutorials/09-decoder.md: every listing of the
// chapter is a piece of this file, and every output the chapter shows is what this program prints.
// It exits non-zero if a claim does not hold.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>

#include "claims.h"
#include "nn/all.h"
#include "small_translator.h"
#include "transformer/data/tsv.h"
#include "transformer/inspect/diagram.h"
#include "transformer/inspect/svg.h"
#include "transformer/model/decoder.h"
#include "transformer/model/masks.h"
#include "transformer/train/forward.h"

using namespace gradformer;
using namespace tutorial;

namespace {

double max_abs_diff(const Tensor& a, const Tensor& b) {
  const Tensor d = a - b;
  return std::abs(max(maximum(d, -d)).item());
}

// The words of a row of ids: [1, T] -> T tokens.
std::vector<std::string> words_of(const Tensor& ids, const Vocab& vocab) {
  std::vector<std::string> words;
  for (int64_t id : ids.select(0, 0).to_vector<int64_t>()) words.push_back(vocab.token(id));
  return words;
}

// A trained decoder: teacher forcing in words, and where its cross-attention looks.
void trained_decoder() {
  const SmallTranslator small = train_small_translator();  // a few seconds; chapters 11 and 12 explain training
  EncoderDecoder& model = *small.loaded.model;
  const Vocab &fr = small.loaded.info.source_tokenizer.vocab(), &en = small.loaded.info.target_tokenizer.vocab();
  const TranslationReport& test = *small.report.test_translation;
  const TransformerConfig& c = small.loaded.info.config;
  std::printf(
      "trained d_model %lld, %lld layer%s, %lld heads, %lld steps: test BLEU %.2f, exact match %.1f%% of %zu "
      "unseen sentences\n",
      static_cast<long long>(c.d_model), static_cast<long long>(c.layers), c.layers == 1 ? "" : "s",
      static_cast<long long>(c.heads), static_cast<long long>(small.report.steps), test.bleu.bleu,
      100 * test.exact_match, test.hypotheses.size());

  // Teacher forcing: the decoder reads <s> + target and must predict target + </s>, one position on.
  const SentencePair pair{split_words("le chat noir mange une pomme ."), split_words("the black cat eats an apple .")};
  const Batch one = collate(encode_pairs({pair}, fr, en), {0});
  const std::vector<std::string> source = words_of(one.src, fr), input = words_of(one.tgt_in, en),
                                 target = words_of(one.tgt_out, en);
  DecoderLayer& layer = (*model.decoder->layers)[0];
  layer.keep_attention = true;
  Tensor probs;  // [T, V]
  {
    InferenceGuard inference(model);
    probs = softmax(teacher_forced_logits(model, one), -1).value().select(0, 0);
  }
  const Tensor cross = mean(layer.cross_attention.select(0, 0), {0});  // [1, H, T, S] -> [T, S], mean of heads
  layer.keep_attention = false;
  std::cout << "encoder input:  " << join_words(source) << "\n";
  std::printf("%-8s  %-13s  %-9s  %s\n", "position", "decoder input", "target", "the model's most likely next word");
  int right = 0;
  for (int64_t t = 0; t < probs.size(0); ++t) {
    const int64_t best = static_cast<int64_t>(argmax(probs.select(0, t), 0).item());
    const auto i = static_cast<size_t>(t);
    std::printf("%8lld  %-13s  %-9s  %s (%.2f)\n", static_cast<long long>(t), input[i].c_str(), target[i].c_str(),
                en.token(best).c_str(), probs.at({t, best}));
    right += en.token(best) == target[i];
  }
  claim(right == probs.size(0), "teacher-forced, the trained decoder predicts every next word");

  // The cross-attention: one row per English word predicted, one column per French word.
  Heatmap picture = heatmap_of(cross, target, source, "cross-attention of the trained decoder, mean of 4 heads");
  picture.row_axis = "English word predicted", picture.column_axis = "French word";
  picture.range = std::make_pair(0.0, 1.0);
  write_svg(output_path("09-cross-attention.svg"), heatmap_svg(picture));
  const int64_t black = 1, noir = 2;  // "black" is predicted at position 1; "noir" is French word 2
  claim(argmax(cross.select(0, black), 0).item() == noir, "to write black the decoder looks at noir");
}

// ---- the picture: the decoder's data flow, with its two attentions' weights (09-decoder-flow.svg) -------

// `share` (0..1) of the way from white to a blue: an attention weight's cell.
std::string shade(double share) {
  char out[8];
  const auto mix = [&](int c) { return static_cast<int>(std::lround(255 + (c - 255) * 0.85 * std::min(share, 1.0))); };
  std::snprintf(out, sizeof out, "#%02x%02x%02x", mix(31), mix(95), mix(168));
  return out;
}

// The weights [rows, columns] as shaded cells, top-left at (x, y): rows are queries, columns keys;
// the darkest cell is the largest weight.
void weight_cells(Diagram& d, double x, double y, const Tensor& w, const std::string& title) {
  const double cell = 20, largest = max(w).item();
  d.text(x - 16, y - 24, title, {.size = 12, .anchor = "start", .bold = true});
  for (int64_t c = 0; c < w.size(1); ++c)
    d.text(x + cell * (static_cast<double>(c) + 0.5), y - 5, std::to_string(c), {.size = 10, .colour = "#555"});
  for (int64_t r = 0; r < w.size(0); ++r) {
    d.text(x - 5, y + cell * static_cast<double>(r) + 14, std::to_string(r),
           {.size = 10, .anchor = "end", .colour = "#555"});
    for (int64_t c = 0; c < w.size(1); ++c)
      d.rect(x + cell * static_cast<double>(c), y + cell * static_cast<double>(r), cell, cell,
             shade(w.at({r, c}) / largest), "#999");
  }
}

// A box of the decoder's column, centred on x = 470, from y to y + 40.
void flow_box(Diagram& d, double y, const char* label, const char* fill) { d.box(350, y, 240, 40, label, fill); }

// An arrow up the decoder's column with the shape of what it carries beside it.
void carries(Diagram& d, double from, double to, const std::string& shape) {
  d.arrow({{470, from}, {470, to}});
  d.text(478, (from + to) / 2 + 4, shape, {.size = 11, .anchor = "start", .colour = "#555"});
}

void draw_decoder_flow(const Decoder& decoder, const Variable& memory, const Tensor& y) {
  DecoderLayer& layer = (*decoder.layers)[0];
  layer.keep_attention = true;
  const Tensor out = decoder.forward(Variable(y), memory, Tensor(), causal_mask(y.size(1))).value();
  layer.keep_attention = false;
  const Tensor self = mean(layer.self_attention, {1}).select(0, 0);    // [1, H, T, T] -> [T, T], mean of heads
  const Tensor cross = mean(layer.cross_attention, {1}).select(0, 0);  // [1, H, T, S] -> [T, S]
  const int64_t T = y.size(1), S = memory.size(1), d_model = y.size(2);
  claim(cross.size(0) == T && cross.size(1) == S, "cross-attention's weights are [T, S]");
  const std::string td = message("[", T, ", ", d_model, "]");
  Diagram d(1000, 760);
  d.text(500, 30, message("The decoder's data flow: T = ", T, " target positions read S = ", S, " source positions"),
         {.size = 16});
  d.text(500, 52,
         "layer 1 of this chapter's decoder (untrained; random target and memory), weights averaged over its heads, "
         "darker: more weight; residuals and LayerNorms as in chapter 8",
         {.size = 12, .colour = "#555"});
  d.text(470, 744, message("target tokens, shifted right: T = ", T), {.bold = true});
  d.arrow({{470, 728}, {470, 700}});
  flow_box(d, 660, "embedding + positions", "#f4f4f4");
  carries(d, 660, 600, td);
  flow_box(d, 560, "masked self-attention", "#fde2c2");
  d.arrow({{590, 580}, {676, 580}}, "#999", true, false);
  weight_cells(d, 700, 530, self, message("self-attention weights [T, T] = ", to_string(self.shape())));
  d.text(690, 668, "causal: 0 above the diagonal, a query sees no later key", {.size = 11, .anchor = "start"});
  carries(d, 560, 420, td + ": the queries Q");
  flow_box(d, 380, "cross-attention", "#fde2c2");
  d.arrow({{590, 400}, {676, 400}}, "#999", true, false);
  weight_cells(d, 700, 300, cross, message("cross-attention weights [T, S] = ", to_string(cross.shape())));
  d.text(690, 438, message("row: one of the T = ", T, " target positions;"), {.size = 11, .anchor = "start"});
  d.text(690, 454, message("column: one of the S = ", S, " source positions"), {.size = 11, .anchor = "start"});
  carries(d, 380, 280, td);
  flow_box(d, 240, "feed-forward", "#d2ecf9");
  carries(d, 240, 110, message("output ", to_string(out.select(0, 0).shape())));
  d.text(470, 98, "to layer 2; after the last layer: Linear, softmax (chapter 10)", {.size = 12});

  d.text(150, 744, message("source tokens: S = ", S), {.bold = true});
  d.arrow({{150, 728}, {150, 700}});
  d.box(50, 660, 200, 40, "encoder (chapter 8)", "#f4f4f4");
  d.arrow({{150, 660}, {150, 620}});
  for (int64_t s = 0; s < S; ++s) d.rect(102, 560 + 8 * static_cast<double>(s), 96, 8, "#c9dcf2", "#1f5fa8");
  d.text(206, 580, "memory [S, d_model]", {.size = 12, .anchor = "start", .colour = "#1f5fa8"});
  d.text(206, 596, "= " + to_string(memory.value().select(0, 0).shape()),
         {.size = 12, .anchor = "start", .colour = "#1f5fa8"});
  d.arrow({{150, 560}, {150, 400}, {348, 400}}, "#1f5fa8");
  d.text(160, 392, "keys K and values V", {.size = 12, .anchor = "start", .colour = "#1f5fa8", .bold = true});
  write_svg(output_path("09-decoder-flow.svg"), d.svg());
}

}  // namespace

int main() {
  Generator gen(0);
  Decoder decoder({64, 4, 256, 0.0, NormPlacement::Post, DType::Float64}, 2, gen, std::make_shared<Generator>(0));
  const Variable memory(randn({1, 7, 64}, gen, DType::Float64));
  const Tensor y = randn({1, 6, 64}, gen, DType::Float64);
  Tensor y_changed = y.clone();
  y_changed.select(1, 4).copy_(randn({64}, gen, DType::Float64));  // a different token at position 4

  // With the causal mask, outputs 0..3 cannot see position 4; without it, they can.
  for (bool causal : {true, false}) {
    const Tensor mask = causal ? causal_mask(6) : Tensor();
    const Tensor a = decoder.forward(Variable(y), memory, Tensor(), mask).value();
    const Tensor b = decoder.forward(Variable(y_changed), memory, Tensor(), mask).value();
    const double before = max_abs_diff(a.narrow(1, 0, 4), b.narrow(1, 0, 4));
    std::printf("%-9s change at position 4 moves outputs 0..3 by %.3g\n", causal ? "causal:" : "no mask:", before);
    claim(causal ? before == 0.0 : before > 1e-3,
          causal ? "the causal mask stops the future leaking" : "without it, it leaks");
  }

  draw_decoder_flow(decoder, memory, y);

  section("a trained decoder");
  trained_decoder();

  return failures == 0 ? 0 : 1;
}
