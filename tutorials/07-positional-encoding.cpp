// Chapter 7: positional encoding. The companion program of tutorials/07-positional-encoding.md:
// every listing of the chapter is a piece of this file, and every output the chapter shows is what
// this program prints. It exits non-zero if a claim does not hold.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "claims.h"
#include "nn/all.h"
#include "nn/schedule.h"
#include "transformer/data/copy_task.h"
#include "transformer/evaluate/evaluate.h"
#include "transformer/inspect/svg.h"
#include "transformer/model/decoding.h"
#include "transformer/model/encoder.h"
#include "transformer/model/encoder_decoder.h"
#include "transformer/model/positional_encoding.h"
#include "transformer/train/task.h"

using namespace gradformer;
using namespace tutorial;

namespace {

double max_abs_diff(const Tensor& a, const Tensor& b) {
  const Tensor d = a - b;
  return std::abs(max(maximum(d, -d)).item());
}

// Without positions an encoder layer is permutation-equivariant: shuffle the tokens and the outputs
// shuffle the same way. With the positional encoding added first, they do not.
void shuffle_the_input() {
  section("shuffle the input");
  Generator gen(0);
  const int64_t T = 6, d = 32;
  const EncoderLayer layer({d, 4, 4 * d, 0.0, NormPlacement::Post, DType::Float64}, gen,
                           std::make_shared<Generator>(1));
  const Tensor x = randn({1, T, d}, gen, DType::Float64);                         // six token embeddings
  const Tensor order = from_vector(std::vector<int64_t>{3, 0, 5, 1, 4, 2}, {T});  // a shuffle
  const Tensor pe = sinusoidal_encoding(T, d, DType::Float64).unsqueeze(0);
  for (bool positions : {false, true}) {
    const Tensor in = positions ? x + pe : x;
    const Tensor shuffled_in = positions ? index_select(x, 1, order) + pe : index_select(x, 1, order);
    const Tensor out = layer.forward(Variable(in)).value();
    const Tensor out_of_shuffled = layer.forward(Variable(shuffled_in)).value();
    const double moved = max_abs_diff(out_of_shuffled, index_select(out, 1, order));
    std::printf("%-16s max |layer(shuffled x) - shuffled layer(x)| = %.3g\n",
                positions ? "with positions:" : "no positions:", moved);
    if (positions)
      claim(moved > 0.1, "with positions, shuffling the input changes what each token gets");
    else
      claim(moved < 1e-12, "without positions, the outputs shuffle with the input (to rounding)");
  }
}

// The paper's table with another base than 10000: PE(pos, 2i) = sin(pos / base^(2i/d)), ...
Tensor encoding_with_base(int64_t max_len, int64_t d, double base) {
  std::vector<double> pe(static_cast<size_t>(max_len * d));
  for (int64_t pos = 0; pos < max_len; ++pos)
    for (int64_t i = 0; 2 * i < d; ++i) {
      const double angle =
          static_cast<double>(pos) / std::pow(base, static_cast<double>(2 * i) / static_cast<double>(d));
      pe[static_cast<size_t>(pos * d + 2 * i)] = std::sin(angle);
      pe[static_cast<size_t>(pos * d + 2 * i + 1)] = std::cos(angle);
    }
  return from_vector(pe, {max_len, d});
}

// The base sets the slowest pair's wavelength, 2 pi base^((d-2)/d). The similarity of two encodings,
// PE(0).PE(k) / |PE|^2, says how well a dot product can tell offset k from other offsets.
void why_10000() {
  section("why 10000");
  const int64_t d = 64, n = 1001;
  const std::vector<int64_t> offsets{1, 10, 100, 300, 1000};
  double far[3] = {0, 0, 0};
  int which = 0;
  for (double base : {10.0, 100.0, 10000.0}) {
    const Tensor pe = encoding_with_base(n, d, base);
    const double longest = 2 * std::numbers::pi * std::pow(base, static_cast<double>(d - 2) / static_cast<double>(d));
    std::printf("base %5.0f: longest wavelength %6.0f; PE(0).PE(k)/|PE|^2 for k =", base, longest);
    for (int64_t k : offsets) {
      const double similarity = sum(pe.select(0, 0) * pe.select(0, k)).item() / (static_cast<double>(d) / 2);
      std::printf(" %lld: %5.2f", static_cast<long long>(k), similarity);
      if (k == 300) far[which] = similarity;
    }
    std::printf("\n");
    ++which;
  }
  claim(far[2] > 0.2 && far[2] > 3 * std::abs(far[0]),
        "with 10000, offset 300 is still similar; with 10, it is near 0");
}

// (e_i + p_i) . (e_j + p_j) = e_i.e_j + e_i.p_j + p_i.e_j + p_i.p_j, for the tutorial model's embedding
void four_terms() {
  section("the four terms of a score");
  const TransformerConfig config = TransformerConfig::tutorial(11, 11);
  const EncoderDecoder model(config, /*seed=*/0);
  const int64_t T = 6, d = config.d_model;
  const Tensor ids = from_vector(std::vector<int64_t>{1, 4, 7, 2, 9, 3}, {T});
  const Tensor e = index_select(model.src_embed->weight.value(), 0, ids) * std::sqrt(static_cast<double>(d));  // [T, d]
  const Tensor p = sinusoidal_encoding(T, d, e.dtype());
  auto mean_abs = [](const Tensor& t) { return mean(maximum(t, -t)).item(); };
  const Tensor ee = matmul(e, e.transpose(0, 1)), ep = matmul(e, p.transpose(0, 1)), pe = matmul(p, e.transpose(0, 1)),
               pp = matmul(p, p.transpose(0, 1));
  const Tensor x = e + p;
  const double total = max_abs_diff(matmul(x, x.transpose(0, 1)), ee + ep + pe + pp);
  std::printf(
      "mean |term| over 6x6 pairs: token.token %.2f  token.position %.2f  position.token %.2f  position.position "
      "%.2f\n",
      mean_abs(ee), mean_abs(ep), mean_abs(pe), mean_abs(pp));
  std::printf("|x x^T - (sum of the four)| = %.1e\n", total);
  claim(total < 1e-3, "the four terms add up to the dot products of the inputs");
}

// Per output position, the fraction of `count` fresh copy-task sequences of `length` tokens that
// greedy decoding gets right, and the fraction copied entirely.
struct CopyScore {
  std::vector<double> per_position;  // [length - 1]
  double exact = 0;
};

CopyScore copy_by_position(EncoderDecoder& model, int64_t length, int64_t count) {
  Generator fresh(99);
  const Batch b = copy_task_batch(count, fresh, {.length = length});
  const auto hyps =
      greedy_decode(model, b.src, padding_mask(b.src, Vocab::pad), {.max_len = length - 1, .bos = 1, .eos = -1});
  CopyScore score{std::vector<double>(static_cast<size_t>(length - 1), 0.0), 0.0};
  for (int64_t i = 0; i < count; ++i) {
    bool all = true;
    for (int64_t t = 0; t < length - 1; ++t) {
      const bool right = hyps[static_cast<size_t>(i)].tokens[static_cast<size_t>(t)] == b.src.at({i, t + 1});
      score.per_position[static_cast<size_t>(t)] += right ? 1.0 / static_cast<double>(count) : 0.0;
      all = all && right;
    }
    score.exact += all ? 1.0 / static_cast<double>(count) : 0.0;
  }
  return score;
}

// Train the copy task on sequences of 10 tokens only, with sinusoidal and with learned positions,
// then ask for longer copies: the output positions 9, 10, ... were never trained.
void longer_than_trained(bool quick) {
  section("longer than anything trained on");
  const int64_t d = quick ? 32 : 64, steps = quick ? 60 : 600, trained_length = 10, count = 200;
  if (quick) std::printf("--quick: d_model 32 for 60 steps, to check that the code runs; not the chapter's numbers\n");
  std::printf("trained on %lld-token sequences (output positions 0..%lld); %lld fresh sequences per length\n",
              static_cast<long long>(trained_length), static_cast<long long>(trained_length - 2),
              static_cast<long long>(count));
  // trained: the worst output position at the trained length; inside: the worst of positions 0..7 at any length
  double trained[2] = {1, 1}, far[2] = {0, 0}, first_unseen[2] = {0, 0}, inside[2] = {1, 1};
  for (Positions positions : {Positions::Sinusoidal, Positions::Learned}) {
    const int p = positions == Positions::Learned;
    TransformerConfig config{.src_vocab = 11,
                             .tgt_vocab = 11,
                             .d_model = d,
                             .d_ff = 4 * d,
                             .heads = 4,
                             .layers = 2,
                             .dropout = 0.0,
                             .max_len = 64,
                             .positions = positions};
    EncoderDecoder model(config, /*seed=*/1);
    Adam adam(model.parameters(), {.lr = 0, .beta1 = 0.9, .beta2 = 0.98, .eps = 1e-9});
    const NoamSchedule noam(d, steps / 4, /*factor=*/0.5);
    Generator data(1);
    for (int64_t step = 1; step <= steps; ++step) {
      const Batch batch = copy_task_batch(32, data, {.length = trained_length});
      adam.set_lr(noam.rate(step));
      const Variable loss = cross_entropy(teacher_forced_logits(model, batch), batch.tgt_out);
      adam.zero_grad();
      loss.backward();
      adam.step();
    }
    std::printf("%s positions: %% copied exactly, and %% right at each output position\n",
                p ? "learned" : "sinusoidal");
    std::printf("  output position:    |");
    for (int t = 0; t < 19; ++t) std::printf(" %3d", t);
    std::printf("\n");
    for (int64_t length : {8, 10, 12, 15, 20}) {
      const CopyScore s = copy_by_position(model, length, count);
      std::printf("  length %2lld: exact %3.0f%% |", static_cast<long long>(length), 100 * s.exact);
      for (size_t t = 0; t < s.per_position.size(); ++t) std::printf(" %3.0f", 100 * s.per_position[t]);
      std::printf("\n");
      if (length == trained_length)
        for (const double right : s.per_position) trained[p] = std::min(trained[p], right);
      for (size_t t = 0; t < std::min<size_t>(8, s.per_position.size()); ++t)
        inside[p] = std::min(inside[p], s.per_position[t]);  // trained positions
      if (length == 12) first_unseen[p] = (s.per_position[9] + s.per_position[10]) / 2;
      if (length == 20) {  // output positions 12..18, three or more past the trained ones
        for (size_t t = 12; t < 19; ++t) far[p] += s.per_position[t] / 7;
      }
    }
  }
  std::printf("output positions 9 and 10 at length 12: sinusoidal %.0f%%, learned %.0f%% right (chance: 10%%)\n",
              100 * first_unseen[0], 100 * first_unseen[1]);
  std::printf("output positions 12..18 at length 20: sinusoidal %.0f%%, learned %.0f%% right\n", 100 * far[0],
              100 * far[1]);
  if (quick) return;
  claim(trained[0] > 0.85 && trained[1] > 0.85,
        "both learn to copy at the trained length: every position mostly right");
  claim(far[0] < 0.3 && far[1] < 0.3, "three positions past the trained ones, neither does much better than chance");
  claim(first_unseen[0] > first_unseen[1], "the sinusoids carry a little past the trained length; learned rows do not");
  claim(inside[0] > 0.9 && inside[1] < 0.5,
        "longer inputs leave output positions 0..7 right with the sinusoids, not with learned positions");
}

}  // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  shuffle_the_input();
  why_10000();
  four_terms();
  section("relative positions are a rotation");
  const int64_t d = 64, max_len = 200;
  const Tensor pe = sinusoidal_encoding(max_len, d, DType::Float64);  // [max_len, d]
  std::printf("PE(1, 0..3) = %.4f %.4f %.4f %.4f\n", pe.at({1, 0}), pe.at({1, 1}), pe.at({1, 2}), pe.at({1, 3}));
  // PE(pos + k) = R_k PE(pos) for every pos, with one fixed rotation R_k per offset k
  for (int64_t k : {1, 10, 100}) {
    const Tensor R = positional_rotation(k, d);
    const Tensor rotated = matmul(pe.narrow(0, 0, max_len - k), R.transpose(0, 1));  // every PE(pos), rotated
    const double error = max_abs_diff(rotated, pe.narrow(0, k, max_len - k));
    std::printf("k = %3lld: max |R_k PE(pos) - PE(pos + k)| over all pos = %.1e\n", static_cast<long long>(k), error);
    claim(error < 1e-12, "PE(pos + k) is a fixed rotation of PE(pos)");
  }
  // A consequence: PE(pos) . PE(pos + k) depends on k only.
  const double a = sum(pe.select(0, 3) * pe.select(0, 8)).item(), b = sum(pe.select(0, 120) * pe.select(0, 125)).item();
  std::printf("PE(3) . PE(8) = %.6f   PE(120) . PE(125) = %.6f\n", a, b);
  claim(std::abs(a - b) < 1e-9, "the dot product depends only on the offset");
  // The picture: 40 positions x 32 dimensions
  const Tensor small = sinusoidal_encoding(40, 32, DType::Float64);
  std::vector<std::string> rows, columns;
  for (int64_t pos = 0; pos < 40; ++pos) rows.push_back(pos % 5 == 0 ? std::to_string(pos) : "");
  for (int64_t j = 0; j < 32; ++j) columns.push_back(j % 4 == 0 ? std::to_string(j) : "");
  Heatmap map{"PE(pos, j), d_model 32", rows, columns, small.to_vector<double>(), "position", "dimension",
              std::make_pair(-1.0, 1.0)};
  write_svg(output_path("07-positional-encoding.svg"), heatmap_svg(map));
  longer_than_trained(quick);
  return failures == 0 ? 0 : 1;
}
