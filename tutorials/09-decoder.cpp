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
  const SmallTranslator small = train_small_translator();  // a few seconds; chapter 11 explains training
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

  section("a trained decoder");
  trained_decoder();

  return failures == 0 ? 0 : 1;
}
