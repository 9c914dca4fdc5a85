// Chapter 13: decoding. The companion program of tutorials/13-decoding.md: every listing of the
// chapter is a piece of this file, and every output the chapter shows is what this program prints.
//
//   13-decoding            the chapter's numbers (outputs of 25, 50, 100 and 200 tokens, best of 3 timings)
//   13-decoding --quick    the same checks on less work (what the test suite runs)
//
// It exits with a non-zero status if a claim the chapter makes does not hold.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "claims.h"
#include "nn/all.h"
#include "small_translator.h"
#include "tensor/kernels/parallel.h"
#include "transformer/data/batch.h"
#include "transformer/data/copy_task.h"
#include "transformer/data/toy_corpus.h"
#include "transformer/data/tsv.h"
#include "transformer/inspect/diagram.h"
#include "transformer/inspect/svg.h"
#include "transformer/model/decoding.h"
#include "transformer/model/encoder_decoder.h"

using namespace gradformer;
using namespace tutorial;

namespace {

// The half-trained models: the run as it was at these steps, less sure of itself than at its end.
constexpr int64_t kEarlyStep = 200, kEarlierStep = 100;

// ---- 1. greedy and beam search --------------------------------------------------------------------

// A hypothesis's tokens as words; the final </s> stays, so a finished one shows that it finished.
std::string words_of(const std::vector<int64_t>& tokens, const Vocab& vocab) {
  std::string out;
  for (int64_t t : tokens) out += (out.empty() ? "" : " ") + vocab.token(t);
  return out;
}

// The length penalty of Wu et al. (2016): lp(y) = ((5 + |y|) / 6)^alpha, score = log P / lp.
double length_penalty(size_t length, double alpha) {
  return std::pow((5.0 + static_cast<double>(length)) / 6.0, alpha);
}

// One extension's box: the token it adds and its cumulative log P (a finished one's score too), coloured
// by its fate (alive blue, finished green, pruned grey), bold on the path beam search returns.
constexpr int kBoxW = 124, kBoxH = 24;
void draw_extension_box(std::ostream& svg, const WeighedExtension& e, int x, int y, bool on_path, const Vocab& vocab) {
  const std::vector<int64_t>& tokens = e.hypothesis.tokens;
  const char* fill = e.fate == BeamFate::Alive ? "#dbe9f6" : e.fate == BeamFate::Finished ? "#d4f0d4" : "#f4f4f4";
  const char* stroke = e.fate == BeamFate::Alive ? "#2c6fb0" : e.fate == BeamFate::Finished ? "#2e8b57" : "#c8c8c8";
  char numbers[64];
  if (e.fate == BeamFate::Finished)
    std::snprintf(numbers, sizeof numbers, "%.2f (%.2f)", e.hypothesis.log_prob, e.hypothesis.score);
  else
    std::snprintf(numbers, sizeof numbers, "%.2f", e.hypothesis.log_prob);
  svg << "<rect x='" << x << "' y='" << y << "' width='" << kBoxW << "' height='" << kBoxH << "' rx='4' fill='" << fill
      << "' stroke='" << stroke << "' stroke-width='" << (on_path ? 2 : 1) << "'/>\n"
      << "<text x='" << x + 6 << "' y='" << y + 16 << "'" << (e.fate == BeamFate::Pruned ? " fill='#999'" : "")
      << (on_path ? " font-weight='bold'" : "") << ">" << escape_xml(vocab.token(tokens.back())) << "</text>\n"
      << "<text x='" << x + kBoxW - 6 << "' y='" << y + 16 << "' text-anchor='end' fill='"
      << (e.fate == BeamFate::Pruned ? "#999" : "#333") << "'>" << numbers << "</text>\n";
}

// The beam-search tree of one sentence: a column per step, in it every extension the search weighed
// (the 2 x beam most probable, best first) with its cumulative log P, joined to the prefix it extends.
// The steps are laid out in two bands, the second opening with the last step of the first again, so
// the figure stays narrow enough to read at page width.
void draw_beam_tree(const std::string& path, const std::vector<std::string>& title,
                    const std::vector<std::vector<WeighedExtension>>& steps, const std::vector<int64_t>& chosen,
                    const Vocab& vocab) {
  const int column = 156, row = 30, box_w = kBoxW, box_h = kBoxH;
  size_t rows = 0;
  for (const auto& weighed : steps) rows = std::max(rows, weighed.size());
  const size_t first_band = (steps.size() + 1) / 2;  // steps [0, first_band) above, [first_band - 1, end) below
  const std::vector<std::pair<size_t, size_t>> bands = {{0, first_band}, {first_band - 1, steps.size()}};
  const int title_h = 22 * static_cast<int>(title.size()) + 26, band_h = 34 + row * static_cast<int>(rows) + 16;
  const int width = 32 + column * static_cast<int>(steps.size() - first_band + 1) - (column - box_w);
  const int height = title_h + band_h * 2 + 4 * 18 + 10;
  std::ostringstream svg;
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width << "' height='" << height << "' viewBox='0 0 "
      << width << " " << height << "' font-family='Helvetica, Arial, sans-serif' font-size='12'>\n"
      << "<rect width='" << width << "' height='" << height << "' fill='#fff'/>\n";
  for (size_t line = 0; line < title.size(); ++line)
    svg << "<text x='16' y='" << 22 + 22 * line << "' font-size='15'>" << escape_xml(title[line]) << "</text>\n";
  auto is_prefix_of_chosen = [&](const std::vector<int64_t>& tokens) {
    return tokens.size() <= chosen.size() && std::equal(tokens.begin(), tokens.end(), chosen.begin());
  };
  for (size_t band = 0; band < bands.size(); ++band) {
    const int band_top = title_h + band_h * static_cast<int>(band), top = band_top + 14;
    for (size_t step = bands[band].first; step < bands[band].second; ++step) {
      const int x = 16 + column * static_cast<int>(step - bands[band].first);
      const bool repeated = band > 0 && step == bands[band].first;
      svg << "<text x='" << x + box_w / 2 << "' y='" << band_top << "' text-anchor='middle' fill='#555'>step "
          << step + 1 << (repeated ? " (again)" : "") << "</text>\n";
      for (size_t i = 0; i < steps[step].size(); ++i) {
        const WeighedExtension& e = steps[step][i];
        const std::vector<int64_t>& tokens = e.hypothesis.tokens;
        const int y = top + row * static_cast<int>(i);
        const bool on_path = is_prefix_of_chosen(tokens) && e.fate != BeamFate::Pruned;
        if (step > bands[band].first) {  // the edge from the prefix it extends: a live hypothesis of the step before
          const std::vector<int64_t> parent(tokens.begin(), tokens.end() - 1);
          for (size_t j = 0; j < steps[step - 1].size(); ++j)
            if (steps[step - 1][j].fate == BeamFate::Alive && steps[step - 1][j].hypothesis.tokens == parent)
              svg << "<line x1='" << x - column + box_w << "' y1='" << top + row * static_cast<int>(j) + box_h / 2
                  << "' x2='" << x << "' y2='" << y + box_h / 2 << "' stroke='" << (on_path ? "#222" : "#aaa")
                  << "' stroke-width='" << (on_path ? 2 : 1) << "'"
                  << (e.fate == BeamFate::Pruned ? " stroke-dasharray='3,3'" : "") << "/>\n";
        }
        draw_extension_box(svg, e, x, y, on_path, vocab);
      }
    }
  }
  const int legend = title_h + band_h * 2 + 8;
  const char* lines[] = {
      "Each box: the token added, and the log-probability of the whole prefix.",
      "Blue: kept alive. Green: finished with &lt;/s&gt;, its score log P / lp in brackets.",
      "Grey, dashed: pruned, the beam already full. Bold: the path of the output beam search returns.",
      "The second row of steps goes on from the first: it repeats the last step above."};
  for (int line = 0; line < 4; ++line)
    svg << "<text x='16' y='" << legend + 18 * line << "' fill='#333'>" << lines[line] << "</text>\n";
  svg << "</svg>\n";
  write_svg(path, svg.str());
}

// The source's ids as the model reads them: the French words' ids, then </s>. [1, S]
Tensor source_ids(const std::vector<std::string>& words, const Vocab& fr) {
  const std::vector<int64_t> ids = encode_source(fr, words);
  return from_vector(ids, {1, static_cast<int64_t>(ids.size())});
}

struct Comparison {
  int differ = 0, beam_scores_higher = 0, greedy_right = 0, beam_right = 0;
  size_t first_difference = 0;  // the first sentence where the two differ (0 if none does)
};

// Greedy and beam 4 on the first `sentences` test pairs; the first `shown` of them printed.
Comparison compare(EncoderDecoder& model, const Vocab& fr, const Vocab& en, const std::vector<SentencePair>& test,
                   size_t sentences, size_t shown) {
  Comparison c;
  for (size_t i = 0; i < sentences; ++i) {
    const Tensor src = source_ids(test[i].source, fr);
    const Tensor src_mask = padding_mask(src, Vocab::pad);
    const DecodeOptions options{.max_len = 2 * static_cast<int64_t>(test[i].source.size()) + 10};
    const Hypothesis greedy = greedy_decode(model, src, src_mask, options)[0];
    const Hypothesis beam = beam_search(model, src, src_mask, /*beam=*/4, /*alpha=*/0.6, options);
    const std::string reference = join_words(test[i].target) + " </s>";
    c.greedy_right += words_of(greedy.tokens, en) == reference, c.beam_right += words_of(beam.tokens, en) == reference;
    if (greedy.tokens != beam.tokens) {
      if (c.differ++ == 0) c.first_difference = i;
      c.beam_scores_higher += beam.score > greedy.log_prob / length_penalty(greedy.tokens.size(), 0.6);
    }
    if (i < shown || (shown == 0 && c.differ == 1 && c.first_difference == i))
      std::printf("%s\n  greedy: %s   log P %.4f\n  beam 4: %s   log P %.4f\n  right:  %s\n",
                  join_words(test[i].source).c_str(), words_of(greedy.tokens, en).c_str(), greedy.log_prob,
                  words_of(beam.tokens, en).c_str(), beam.log_prob, reference.c_str());
  }
  return c;
}

void print_comparison(int64_t step, size_t sentences, const Comparison& c) {
  std::printf(
      "model of step %lld, %zu test sentences: greedy and beam 4 differ on %d (beam's output scores higher on %d); "
      "exactly right: greedy %d, beam %d\n",
      static_cast<long long>(step), sentences, c.differ, c.beam_scores_higher, c.greedy_right, c.beam_right);
  claim(c.beam_scores_higher == c.differ, "where they differ, beam search found the higher score");
}

// Beam search with and without the length penalty (alpha 0.6 and 0) on the test sentences: on how
// many the answer changes (returned), and the first of them, each answer with its log P, lp and score.
int length_penalty_at_work(EncoderDecoder& model, int64_t step, const Vocab& fr, const Vocab& en,
                           const std::vector<SentencePair>& test, size_t sentences) {
  int changed = 0;
  size_t first = 0;
  Hypothesis plain, penalised;
  for (size_t i = 0; i < sentences; ++i) {
    const Tensor src = source_ids(test[i].source, fr);
    const DecodeOptions options{.max_len = 2 * static_cast<int64_t>(test[i].source.size()) + 10};
    Hypothesis a = beam_search(model, src, padding_mask(src, Vocab::pad), 4, /*alpha=*/0.0, options);
    Hypothesis b = beam_search(model, src, padding_mask(src, Vocab::pad), 4, /*alpha=*/0.6, options);
    if (a.tokens == b.tokens) continue;
    if (changed++ == 0) first = i, plain = std::move(a), penalised = std::move(b);
  }
  std::printf("model of step %lld, %zu test sentences: the length penalty changes beam search's answer on %d\n",
              static_cast<long long>(step), sentences, changed);
  if (changed == 0) return 0;
  std::printf("%s\n", join_words(test[first].source).c_str());
  for (const auto& [alpha, h] : {std::pair{0.0, &plain}, std::pair{0.6, &penalised}})
    std::printf("  alpha %.1f: %s   log P %.4f  lp %.3f  score %.4f\n", alpha, words_of(h->tokens, en).c_str(),
                h->log_prob, length_penalty(h->tokens.size(), alpha), h->score);
  claim(plain.tokens.size() < penalised.tokens.size() && plain.log_prob > penalised.log_prob,
        "without the length penalty the search returns a shorter, more probable sentence");
  claim(penalised.score > plain.log_prob / length_penalty(plain.tokens.size(), 0.6),
        "with it, the longer sentence scores higher");
  return changed;
}

void greedy_and_beam(EncoderDecoder& trained, EncoderDecoder& early, EncoderDecoder& earlier, const Vocab& fr,
                     const Vocab& en) {
  section("greedy and beam search");
  const std::vector<SentencePair> test = make_toy_corpus().test;
  const size_t sentences = 200;
  const Comparison sure = compare(trained, fr, en, test, sentences, /*shown=*/2);
  print_comparison(600, sentences, sure);
  claim(sure.greedy_right > static_cast<int>(sentences * 9 / 10), "the trained model translates");
  const Comparison unsure = compare(early, fr, en, test, sentences, /*shown=*/0);
  print_comparison(kEarlyStep, sentences, unsure);
  claim(unsure.differ > sure.differ, "a less sure model leaves beam search more to find");

  // The tree of one search: every extension weighed at every step, and what became of it.
  const SentencePair& pair = test[unsure.first_difference];
  const Tensor src = source_ids(pair.source, fr);
  std::vector<std::vector<WeighedExtension>> steps;
  DecodeOptions options{.max_len = 2 * static_cast<int64_t>(pair.source.size()) + 10};
  options.on_weigh = [&](int64_t, const std::vector<WeighedExtension>& weighed) { steps.push_back(weighed); };
  const Hypothesis chosen = beam_search(early, src, padding_mask(src, Vocab::pad), 4, 0.6, options);
  int finished = 0;
  for (const auto& weighed : steps)
    for (const WeighedExtension& e : weighed)
      if (e.fate == BeamFate::Finished)
        std::printf("finished at step %zu: %s   log P %.4f  lp %.3f  score %.4f\n", e.hypothesis.tokens.size(),
                    words_of(e.hypothesis.tokens, en).c_str(), e.hypothesis.log_prob,
                    length_penalty(e.hypothesis.tokens.size(), 0.6), e.hypothesis.score),
            ++finished;
  std::printf("beam search returns: %s\n", words_of(chosen.tokens, en).c_str());
  claim(finished >= 4, "the search stops once a beam's worth of hypotheses has finished");
  draw_beam_tree(output_path("13-beam-tree.svg"),
                 {"beam search (beam 4, alpha 0.6) with the model of step " + std::to_string(kEarlyStep) + ":",
                  join_words(pair.source)},
                 steps, chosen.tokens, en);

  // The length penalty's numbers, for a hypothesis losing 0.5 nats a token.
  std::cout << "length  lp (alpha 0.6)   score of log P = -0.5 per token\n";
  for (int length : {1, 2, 5, 10, 20, 40}) {
    const double lp = length_penalty(static_cast<size_t>(length), 0.6);
    std::printf("%6d  %14.3f   %8.3f\n", length, lp, -0.5 * length / lp);
  }
  const int changed_early = length_penalty_at_work(early, kEarlyStep, fr, en, test, test.size());
  const int changed_earlier = length_penalty_at_work(earlier, kEarlierStep, fr, en, test, test.size());
  claim(changed_earlier > changed_early, "the length penalty changes more answers of the less trained model");
}

// ---- 2. the key/value cache --------------------------------------------------------------------------

// Best of `repeats` timings of greedy decoding `length` tokens, in milliseconds of CPU time (one
// thread, so CPU time is the work done; unlike wall time it holds still on a busy machine).
double time_decode(EncoderDecoder& model, const Tensor& src, int64_t length, bool use_cache, int repeats,
                   Hypothesis& out) {
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) {
    const std::clock_t start = std::clock();
    out = greedy_decode(model, src, padding_mask(src, Vocab::pad),
                        {.max_len = length, .eos = -1, .use_cache = use_cache})[0];
    best = std::min(best, 1e3 * static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC);
  }
  return best;
}

// A [rows, columns] matrix drawn as cells under its title, the rows labelled on the left; the last
// row, the position this step added, in orange with a red frame when `new_last` is true. `fill`: the
// other rows' colour (blue: cached).
void cache_rows(Diagram& d, double x, double y, const std::string& title, const Tensor& m,
                const std::vector<std::string>& labels, bool new_last, const char* fill = "#dbe9f6") {
  const double w = 44, h = 22;
  const int64_t rows = m.size(0), columns = m.size(1);
  const std::vector<double> v = m.contiguous().to(DType::Float64).to_vector<double>();
  d.text(x, y - 8, title, {.size = 12, .anchor = "start", .bold = true});
  for (int64_t r = 0; r < rows; ++r) {
    const bool fresh = new_last && r == rows - 1;
    const double top = y + h * static_cast<double>(r);
    d.text(x - 6 + 0 * w, top + 15, labels[static_cast<size_t>(r)], {.size = 11, .anchor = "end", .colour = "#555"});
    for (int64_t c = 0; c < columns; ++c) {
      const double left = x + w * static_cast<double>(c);
      d.rect(left, top, w, h, fresh ? "#fde2c2" : fill, "#999");
      d.text(left + w / 2, top + 15, fixed(v[static_cast<size_t>(r * columns + c)], 2), {.size = 11});
    }
    if (fresh) d.rect(x - 1, top - 1, w * static_cast<double>(columns) + 2, h + 2, "none", "#c0392b");
  }
}

// One step of incremental decoding, drawn in the column at x: the new query, the cached keys with
// the new one appended, the query's weights over them, the cached values, all of head 1 of layer 1.
void draw_cache_step(Diagram& d, double x, int64_t t, const Tensor& q, const LayerCache& layer, const Tensor& weights,
                     const std::vector<std::string>& words) {
  const Tensor k = layer.self.k.value(), v = layer.self.v.value();                  // [1, h, t, d_k]
  const Tensor k1 = k.select(0, 0).select(0, 0), v1 = v.select(0, 0).select(0, 0);  // head 1: [t, d_k]
  const std::string shape = message("[", k1.size(0), ", ", k1.size(1), "]");
  std::vector<std::string> labels;
  for (int64_t p = 0; p <= t; ++p) labels.push_back(message("t=", p, " ", words[static_cast<size_t>(p)]));
  d.text(x + 120, 66, message("step ", t + 1, ": position ", t, " (", words[static_cast<size_t>(t)], ") enters"),
         {.size = 14, .bold = true});
  cache_rows(d, x + 60, 110, message("new query q  [1, d_k] = [1, ", q.size(1), "]"), q, {labels.back()}, true);
  cache_rows(d, x + 60, 176, "K cache  [t, d_k] = " + shape, k1, labels, true);
  const double right = x + 60 + 44 * static_cast<double>(q.size(1));  // q meets every key row: q k_j for each j
  const double k_bottom = 176 + 22.0 * static_cast<double>(t + 1);    // a bracket over every key row
  d.arrow({{right + 4, 176}, {right + 8, 176}, {right + 8, k_bottom}, {right + 4, k_bottom}}, "#c0392b", false, false);
  d.arrow({{right + 2, 121}, {right + 22, 121}, {right + 22, (176 + k_bottom) / 2}, {right + 10, (176 + k_bottom) / 2}},
          "#c0392b");
  const double wy = 176 + 22.0 * static_cast<double>(t + 1) + 44;
  std::vector<std::string> to;
  for (int64_t p = 0; p <= t; ++p) to.push_back(message("t=", p));
  cache_rows(d, x + 60, wy, message("weights softmax(q K\u1d40/\u221ad_k)  [1, ", t + 1, "]"), weights, {"q"}, false,
             "#eeeeee");
  const double vy = wy + 66;
  cache_rows(d, x + 60, vy, "V cache  [t, d_k] = " + shape, v1, labels, true);
  d.text(x + 60, vy + 22.0 * static_cast<double>(t + 1) + 20, "output = weights V  [1, d_k]: a mix of these rows",
         {.size = 11, .anchor = "start", .colour = "#555"});
}

// The key/value cache growing over three steps of decoding (13-kv-cache.svg), on a small untrained
// model: each step appends one row to K and V, and only the new position's query attends to them.
void draw_kv_cache() {
  const TransformerConfig config{.src_vocab = 12,
                                 .tgt_vocab = 12,
                                 .d_model = 8,
                                 .d_ff = 16,
                                 .heads = 2,
                                 .layers = 1,
                                 .dropout = 0.0,
                                 .max_len = 16};
  EncoderDecoder model(config, /*seed=*/4);
  (*model.decoder->layers)[0].keep_attention = true;
  InferenceGuard inference(model);
  const Tensor src = from_vector(std::vector<int64_t>{5, 6, 7, 2}, {1, 4});
  const Tensor src_mask = padding_mask(src, Vocab::pad);
  DecoderCache cache = model.start_decoding(model.encode(src, src_mask));
  const std::vector<std::string> words{"<s>", "i", "am"};
  const std::vector<int64_t> ids{Vocab::bos, 8, 9};
  const MultiheadAttention& attention = *(*model.decoder->layers)[0].self_attn;
  const int64_t d_k = config.d_model / config.heads;
  Diagram d(1000, 560);
  d.text(500, 28, "The key/value cache over three steps of incremental decoding (head 1 of layer 1)", {.size = 16});
  for (int64_t t = 0; t < 3; ++t) {
    const Tensor token = from_vector(std::vector<int64_t>{ids[static_cast<size_t>(t)]}, {1, 1});
    // q = x W^Q + b^Q for head 1 (the first d_k rows of in_proj): post-LN, x is the embedding itself
    const Tensor x = model.embed_target(token, t).value().select(0, 0);  // [1, d]
    const Tensor q = matmul(x, attention.in_proj_weight.value().narrow(0, 0, d_k).transpose(0, 1)) +
                     attention.in_proj_bias.value().narrow(0, 0, d_k);  // [1, d_k]
    model.decode_step(token, src_mask, cache);
    const Tensor weights = (*model.decoder->layers)[0].self_attention.select(0, 0).select(0, 0);  // [1, t + 1]
    const Tensor k1 = cache.layers[0].self.k.value().select(0, 0).select(0, 0);                   // [t + 1, d_k]
    const Variable by_hand = softmax(Variable(matmul(q, k1.transpose(0, 1)) / std::sqrt(static_cast<double>(d_k))));
    const std::vector<float> a = by_hand.value().contiguous().to_vector<float>(),
                             b = weights.contiguous().to_vector<float>();
    bool agree = a.size() == b.size();
    for (size_t i = 0; agree && i < a.size(); ++i) agree = std::abs(a[i] - b[i]) < 1e-5f;
    claim(agree, "the new query's weights are softmax(q K^T / sqrt(d_k)) over the cache");
    claim(cache.layers[0].self.k.size(2) == t + 1, "each step appends one row to the cache");
    draw_cache_step(d, 20 + 330 * static_cast<double>(t), t, q, cache.layers[0], weights, words);
  }
  d.text(500, 506, "Blue rows: keys and values cached at earlier steps, read again, never recomputed. Orange: the row",
         {.size = 13});
  d.text(500, 526, "this step appends. The only query is the new position's: its t weights mix the t rows of V.",
         {.size = 13});
  d.text(500, 548,
         "Per layer the cache holds [B, h, t, d_k] = [1, 2, t, 4] (a small untrained model: d_model 8, 2 heads).",
         {.size = 12, .colour = "#555"});
  write_svg(output_path("13-kv-cache.svg"), d.svg());
}

void kv_cache(bool quick) {
  section("incremental decoding with a key/value cache");
  draw_kv_cache();
  TransformerConfig config{.src_vocab = 100,
                           .tgt_vocab = 100,
                           .d_model = 128,
                           .d_ff = 512,
                           .heads = 8,
                           .layers = 2,
                           .dropout = 0.0,
                           .max_len = 256};
  EncoderDecoder model(config, /*seed=*/1);
  Generator gen(2);
  const Tensor src = randint({1, 10}, 4, 100, gen);
  const std::vector<int64_t> lengths =
      quick ? std::vector<int64_t>{10, 20, 40} : std::vector<int64_t>{25, 50, 100, 200};
  const int repeats = quick ? 1 : 3;
  const int threads = num_threads();
  set_num_threads(1);
  Hypothesis warm_up;
  time_decode(model, src, 10, true, 1, warm_up);  // first use: memory allocation, thread start-up
  std::cout << "tokens   ms/token without cache   ms/token with cache   speedup   same output\n";
  std::vector<double> uncached_per_token, cached_per_token;
  for (int64_t length : lengths) {
    Hypothesis without, with;
    const double slow = time_decode(model, src, length, false, repeats, without);
    const double fast = time_decode(model, src, length, true, repeats, with);
    const bool same = without.tokens == with.tokens && std::abs(without.log_prob - with.log_prob) < 1e-4;
    const double n = static_cast<double>(length);
    uncached_per_token.push_back(slow / n), cached_per_token.push_back(fast / n);
    std::printf("%6lld   %22.3f   %19.3f   %6.1fx   %s (log P %.4f / %.4f)\n", static_cast<long long>(length), slow / n,
                fast / n, slow / fast, same ? "yes" : "NO", without.log_prob, with.log_prob);
    claim(same, "the cache changes nothing in the output");
    claim(static_cast<int64_t>(with.tokens.size()) == length, "eos -1 decodes exactly max_len tokens");
  }
  set_num_threads(threads);
  claim(cached_per_token.back() < uncached_per_token.back(), "the cache is faster");
  if (!quick) {
    claim(uncached_per_token.back() > 3 * uncached_per_token.front(),
          "without the cache a token costs more the longer the output");
    claim(cached_per_token.back() < 2 * cached_per_token.front(),
          "with the cache a token costs about the same at every length");
  }
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  // A small translator trained in a few seconds (tutorials/small_translator.h; chapter 11 explains training).
  const SmallTranslator small = train_small_translator({kEarlierStep, kEarlyStep});
  greedy_and_beam(*small.loaded.model, *small.early.at(kEarlyStep).model, *small.early.at(kEarlierStep).model,
                  small.loaded.info.source_tokenizer.vocab(), small.loaded.info.target_tokenizer.vocab());
  kv_cache(quick);
  std::cout << "\n" << (failures == 0 ? "all claims hold" : "SOME CLAIMS FAILED") << "\n";
  return failures == 0 ? 0 : 1;
}
