// Chapter 10: the full model. The companion program of tutorials/10-model.md: every listing of the
// chapter is a piece of this file, and every output the chapter shows is what this program prints.
// It exits non-zero if a claim does not hold.
#include <cstdio>
#include <iostream>

#include "claims.h"
#include "nn/all.h"
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
  paper_models();
  where_the_parameters_are();
  return failures == 0 ? 0 : 1;
}
