// Chapter 10: the full model. The companion program of tutorials/10-model.md: every listing of the
// chapter is a piece of this file, and every output the chapter shows is what this program prints.
// It exits non-zero if a claim does not hold.
#include <cstdio>
#include <iostream>

#include "claims.h"
#include "nn/all.h"
#include "transformer/data/batch.h"
#include "transformer/inspect/diagram.h"
#include "transformer/inspect/svg.h"
#include "transformer/model/encoder_decoder.h"
#include "transformer/model/masks.h"

using namespace gradformer;
using namespace tutorial;

namespace {

void one_forward_pass() {
  section("one forward pass");
  TransformerConfig config = TransformerConfig::tutorial(11, 11);  // d 128, d_ff 512, h 8, N 2
  EncoderDecoder model(config, /*seed=*/0);
  const Tensor src = from_vector(std::vector<int64_t>{1, 4, 7, 2, 9, 3, 0, 0}, {1, 8});
  const Tensor tgt_in = from_vector(std::vector<int64_t>{1, 4, 7, 2}, {1, 4});
  const Tensor src_mask = padding_mask(src, 0), tgt_mask = target_mask(tgt_in, 0);
  const Variable memory = model.encode(src, src_mask);                        // [1, 8, 128]
  const Variable decoded = model.decode(memory, src_mask, tgt_in, tgt_mask);  // [1, 4, 128]
  const Variable logits = model.logits(decoded);                              // [1, 4, 11]
  std::cout << "memory " << memory.shape() << "  decoded " << decoded.shape() << "  logits " << logits.shape() << "\n";
  std::cout << "parameters: " << model.parameter_count() << " instantiated, " << parameter_count(config)
            << " by the formula\n";
  claim(model.parameter_count() == parameter_count(config), "the formula counts the instantiated parameters");
}

// ---- the picture: a padded batch and its masks (10-padded-batch.svg) -----------------------------------

// A [B, L] batch of ids as cells, each with its token and id; <pad> grey, <s> and </s> yellow.
void token_cells(Diagram& d, double x, double y, const Tensor& ids, const Vocab& vocab, const std::string& title) {
  const double w = 62, h = 36;
  d.text(x + w * static_cast<double>(ids.size(1)) / 2, y - 10, title, {.bold = true});
  for (int64_t b = 0; b < ids.size(0); ++b) {
    const double top = y + h * static_cast<double>(b);
    d.text(x - 8, top + h / 2 + 4, message("sentence ", b + 1), {.size = 12, .anchor = "end"});
    for (int64_t t = 0; t < ids.size(1); ++t) {
      const int64_t id = ids.at({b, t});
      const double left = x + w * static_cast<double>(t);
      d.rect(left, top, w, h, id == Vocab::pad ? "#dddddd" : id < 4 ? "#fbf3c8" : "#d2ecf9", "#999");
      d.text(left + w / 2, top + 16, vocab.token(id), {.size = 12});
      d.text(left + w / 2, top + 30, message("id ", id), {.size = 10, .colour = "#555"});
    }
  }
}

// A [rows, columns] bool mask as a grid of 0 and 1, its rows and columns labelled with tokens.
NumberGrid mask_grid(const std::string& title, const Tensor& mask, const std::vector<std::string>& queries,
                     const std::vector<std::string>& keys) {
  return {title, queries, keys, mask.to(DType::Float64).to_vector<double>(), 0, 46, 24, "#4caf7a"};
}

void draw_padded_batch() {
  const std::vector<SentencePair> pairs{{split_words("le chat noir dort ."), split_words("the black cat sleeps .")},
                                        {split_words("il mange ."), split_words("he eats .")},
                                        {split_words("elle lit bien ."), split_words("she reads well .")}};
  std::vector<std::vector<std::string>> sources, targets;
  for (const SentencePair& p : pairs) sources.push_back(p.source), targets.push_back(p.target);
  const Vocab fr = Vocab::build(sources), en = Vocab::build(targets);
  const Batch batch = collate(encode_pairs(pairs, fr, en), {0, 1, 2});   // each padded to the longest
  const Tensor src_mask = padding_mask(batch.src, Vocab::pad);           // [B, 1, S]
  const Tensor tgt_mask = target_mask(batch.tgt_in, Vocab::pad);         // [B, T, T]
  const int64_t b = 1, S = batch.src.size(1), T = batch.tgt_in.size(1);  // sentence 2, the shortest
  const std::vector<std::string> src_words = fr.decode(batch.src.select(0, b).to_vector<int64_t>()),
                                 tgt_words = en.decode(batch.tgt_in.select(0, b).to_vector<int64_t>());
  claim(!src_mask.at({b, 0, S - 1}) && !tgt_mask.at({b, T - 1, T - 1}) && !tgt_mask.at({b, 0, 1}),
        "the masks hide the padding, and the target mask the future too");
  Diagram d(1000, 540);
  d.text(500, 30,
         message("A batch of ", batch.size(), " sentence pairs, padded with <pad> (id ", Vocab::pad,
                 ") to the longest, and the masks that hide the padding"),
         {.size = 16});
  token_cells(d, 100, 84, batch.src, fr, "src [B, S] = " + to_string(batch.src.shape()));
  token_cells(d, 586, 84, batch.tgt_in, en, "tgt_in [B, T] = " + to_string(batch.tgt_in.shape()));
  // The padding mask [1, S] is the same for every query: drawn as the [S, S] the encoder's self-attention sees.
  d.grid(160, 300,
         mask_grid(message("src_mask, sentence 2, seen by each of its queries"), src_mask.select(0, b).expand({S, S}),
                   src_words, src_words));
  d.grid(646, 300, mask_grid("tgt_mask, sentence 2: padding AND causal", tgt_mask.select(0, b), tgt_words, tgt_words));
  d.text(500, 480, "Rows: queries; columns: keys; 1: attention allowed, 0: the score is set to \u2212\u221e.",
         {.colour = "#555"});
  d.text(500, 502, "A pad key is 0 in every row of both masks; the target mask is also 0 above the diagonal.",
         {.colour = "#555"});
  write_svg(output_path("10-padded-batch.svg"), d.svg());
}

// Learned positions (Positions::Learned): one trained [max_len, d] table, shared by the source and the target
void learned_positions() {
  section("learned positions");
  TransformerConfig config = TransformerConfig::tutorial(11, 11);
  const int64_t sinusoidal = parameter_count(config);
  config.positions = Positions::Learned;
  const EncoderDecoder model(config, /*seed=*/0);
  const int64_t added = parameter_count(config) - sinusoidal;
  std::printf(
      "tutorial(11, 11) with learned positions: %lld parameters more (max_len %lld x d %lld); %lld instantiated, %lld "
      "by the formula\n",
      static_cast<long long>(added), static_cast<long long>(config.max_len), static_cast<long long>(config.d_model),
      static_cast<long long>(model.parameter_count()), static_cast<long long>(parameter_count(config)));
  claim(added == config.max_len * config.d_model && model.parameter_count() == parameter_count(config),
        "learned positions add max_len * d parameters, and the formula counts them");
}

void print_counts(const char* name, const TransformerConfig& c) {
  const FlopCount f = flop_count(c, 25, 25);
  std::printf("%-12s %12lld parameters   %6.1f MFLOP/token forward, %6.1f training (25-token sentences)\n", name,
              static_cast<long long>(parameter_count(c)), f.forward_per_target_token() / 1e6,
              f.training_per_target_token() / 1e6);
}

void paper_models() {
  section("the paper's models, shared 37,000-token vocabulary");
  TransformerConfig base = TransformerConfig::base(), big = TransformerConfig::big();
  print_counts("base, tied", base);
  print_counts("big, tied", big);
  base.tie_embeddings = big.tie_embeddings = false;
  print_counts("base, untied", base);
  print_counts("big, untied", big);
  base.tie_embeddings = big.tie_embeddings = true;
  const int64_t d = 512, layer_norms = 6 * (2 + 3) * 2 * d,
                biases = 6 * (4 * d + 2048 + d) + 6 * (2 * 4 * d + 2048 + d);
  std::printf("base: embeddings %lld, LayerNorm %lld, biases %lld (with the output projection's %d)\n",
              static_cast<long long>(37000 * d), static_cast<long long>(layer_norms),
              static_cast<long long>(biases + 37000), 37000);
  // Base's training on one CPU core, at a rate assumed (not measured): 60 GFLOP/s, what chapter 2's
  // packed kernel sustains on large products on a Zen 3 core. The paper's 100,000 steps of 25,000
  // target tokens, at that many target tokens a second:
  const double assumed_gflops = 60;
  const double tokens_per_second = assumed_gflops * 1e9 / flop_count(base, 25, 25).training_per_target_token();
  const double days = 100'000.0 * 25'000.0 / tokens_per_second / 86'400;
  std::printf("training base on one core at %.0f GFLOP/s: %.0f target tokens/s; 100,000 steps of 25,000: %.0f days\n",
              assumed_gflops, tokens_per_second, days);
  claim(parameter_count(base) == 63'119'496, "base has 63,119,496 parameters");
  claim(parameter_count(big) == 214'282'376, "big has 214,282,376 parameters");
}

void where_the_parameters_are() {
  section("where base's parameters are");
  const TransformerConfig base = TransformerConfig::base();
  const int64_t d = base.d_model, d_ff = base.d_ff, N = base.layers, V = base.src_vocab;
  std::printf("d_ff / d_model = %lld; default tie_embeddings %s, base() ties %s\n", static_cast<long long>(d_ff / d),
              TransformerConfig{}.tie_embeddings ? "true" : "false", base.tie_embeddings ? "true" : "false");
  const int64_t attention = 4 * d * d + 4 * d, ffn = 2 * d * d_ff + d_ff + d, norm = 2 * d;
  struct Part {
    const char* name;
    int64_t count;
  };
  const Part parts[] = {{"embedding (shared)", V * d},
                        {"attention, 3N of them", 3 * N * attention},
                        {"feed-forward, 2N of them", 2 * N * ffn},
                        {"LayerNorm, 5N of them", 5 * N * norm},
                        {"output bias", V}};
  int64_t total = 0;
  for (const Part& p : parts) {
    std::printf("  %-26s %10lld  %5.1f%%\n", p.name, static_cast<long long>(p.count),
                100.0 * static_cast<double>(p.count) / static_cast<double>(parameter_count(base)));
    total += p.count;
  }
  claim(total == parameter_count(base), "the five parts add up to base's count");
  std::printf("one layer: attention %lld, feed-forward %lld (%.2f times as many)\n", static_cast<long long>(attention),
              static_cast<long long>(ffn), static_cast<double>(ffn) / static_cast<double>(attention));
  claim(ffn > attention, "a feed-forward network has more parameters than an attention");
  const int64_t per_1000 = parameter_count(TransformerConfig::base(38000, 38000)) - parameter_count(base);
  std::printf("1,000 more vocabulary tokens: %+lld parameters (tied)\n", static_cast<long long>(per_1000));
  claim(per_1000 == 1000 * (d + 1), "each vocabulary token costs d + 1 parameters when tied");
}

}  // namespace

int main() {
  one_forward_pass();
  draw_padded_batch();
  learned_positions();
  paper_models();
  where_the_parameters_are();
  return failures == 0 ? 0 : 1;
}
