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
#include <vector>

#include "autograd/all.h"
#include "claims.h"
#include "transformer/data/lm_batch.h"
#include "transformer/data/toy_corpus.h"
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
}

// ---- 2. the shift -----------------------------------------------------------------------------------

void the_shift(const Vocab& vocab) {
  section("the shift of causal language modelling");
  Generator gen(3);
  const std::vector<std::string> sentence = sample_toy_pair(gen).source;
  std::vector<int64_t> tokens{Vocab::bos};
  for (int64_t id : vocab.encode(sentence)) tokens.push_back(id);
  tokens.push_back(Vocab::eos);
  const LmBatch batch = make_lm_batch({{tokens, 1}}, {0});
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
  const TrainReport lm = language_model(quick);
  const LoadedDecoderOnly ckpt = load_decoder_only_checkpoint(lm.checkpoint_path);
  the_shift(ckpt.info.target_tokenizer.vocab());
  sampling(lm.checkpoint_path);
  return failures == 0 ? 0 : 1;
}
