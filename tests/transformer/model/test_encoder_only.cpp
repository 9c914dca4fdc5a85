// The encoder-only model (transformer/model/encoder_only.h): its parameter formula term by term
// against built models, float64 gradient checks with the MLM loss and with the classifier, one
// gradient for the tied embedding, and attention that is bidirectional but blind to padding.
#include "autograd/helpers.h"
#include "catch.h"
#include "model_helpers.h"
#include "nn/all.h"
#include "transformer/model/encoder_only.h"

using namespace gradformer;

namespace {

// d 8, h 2, d_ff 12, V 11, 1 layer, float64, dropout 0; BERT's extras switched on.
EncoderOnlyConfig tiny(NormPlacement norm = NormPlacement::Post, bool tie = true) {
  return {.vocab = 11,
          .d_model = 8,
          .d_ff = 12,
          .heads = 2,
          .layers = 1,
          .dropout = 0.0,
          .norm = norm,
          .max_len = 10,
          .positions = Positions::Learned,
          .types = 2,
          .embed_norm = true,
          .tie_embeddings = tie,
          .classes = 3,
          .dtype = DType::Float64};
}

int64_t numel_of(const Module& m, const std::string& prefix) {
  int64_t n = 0;
  for (const auto& [name, p] : m.named_parameters())
    if (name.rfind(prefix, 0) == 0) n += p.numel();
  return n;
}

double max_abs_diff(const Tensor& a, const Tensor& b) {
  const Tensor d = sub(a.to(DType::Float64), b.to(DType::Float64));
  return max(maximum(d, neg(d))).item();
}

const Tensor kIds = test::ids({1, 5, 6, 7, 2, 1, 8, 9, 2, 0}, 2);  // [2, 5], the second row padded once

}  // namespace

TEST_CASE("parameter_count: each part of the formula equals the built model's parameters under that name") {
  for (NormPlacement norm : {NormPlacement::Post, NormPlacement::Pre})
    for (bool tie : {true, false})
      for (bool bert : {true, false}) {
        EncoderOnlyConfig c = tiny(norm, tie);
        c.layers = 2, c.dtype = DType::Float32;
        if (!bert) c.positions = Positions::Sinusoidal, c.types = 0, c.embed_norm = false;
        const EncoderOnly model(c, 1);
        const EncoderOnlyCount n = parameter_count(c);
        INFO("norm " << (norm == NormPlacement::Pre ? "pre" : "post") << ", tied " << tie << ", bert " << bert);
        // Independently: the sizes written out for d 8, d_ff 12, V 11, max_len 10, 2 types, C 3.
        CHECK(n.embeddings == (bert ? 11 * 8 + 10 * 8 + 2 * 8 + 16 : 11 * 8));
        CHECK(n.encoder == 2 * ((4 * 64 + 32) + (2 * 8 * 12 + 12 + 8) + 32) + (norm == NormPlacement::Pre ? 16 : 0));
        CHECK(n.pooler == 72);
        CHECK(n.mlm_head == 72 + 16 + 11 + (tie ? 0 : 88));
        CHECK(n.classifier == 27);
        CHECK(numel_of(model, "tok_embed") + numel_of(model, "pos_embed") + numel_of(model, "type_embed") +
                  numel_of(model, "embed_norm") ==
              n.embeddings);
        CHECK(numel_of(model, "encoder.") == n.encoder);
        CHECK(numel_of(model, "pooler.") == n.pooler);
        CHECK(numel_of(model, "mlm_head.") == n.mlm_head);
        CHECK(numel_of(model, "classifier.") == n.classifier);
        CHECK(model.parameter_count() == n.total());
      }
}

TEST_CASE("parameter_count: BERT-base is 109,482,240 without its heads (the paper's 110M)") {
  const EncoderOnlyCount n = parameter_count(EncoderOnlyConfig::bert_base());
  CHECK(n.embeddings == 30522 * 768 + 512 * 768 + 2 * 768 + 2 * 768);
  CHECK(n.encoder == 12 * (4 * 768 * 768 + 4 * 768 + 2 * 768 * 3072 + 3072 + 768 + 4 * 768));
  CHECK(n.pooler == 768 * 768 + 768);
  CHECK(n.body_and_pooler() == 109482240);
  CHECK(n.mlm_head == 768 * 768 + 768 + 2 * 768 + 30522);  // BERT's transform layer and output bias
}

TEST_CASE("gradcheck: the encoder-only model with the MLM loss (tied and untied, post-LN and pre-LN)") {
  const Tensor labels = test::ids({0, 5, 0, 7, 0, 0, 0, 9, 0, 0}, 2);  // the chosen positions' originals
  for (NormPlacement norm : {NormPlacement::Post, NormPlacement::Pre})
    for (bool tie : {true, false}) {
      INFO((norm == NormPlacement::Post ? "post-LN" : "pre-LN") << (tie ? ", tied" : ", untied"));
      EncoderOnly model(tiny(norm, tie), 3);
      test::perturb_norms(model, 5);
      const Tensor types = test::ids({0, 0, 0, 1, 1, 0, 0, 1, 1, 1}, 2);
      auto loss = [&] {
        return cross_entropy(model.mlm_logits(model.encode(kIds, types)), labels, {.ignore_index = 0});
      };
      CHECK_GRADCHECK(loss, model.parameters());
    }
}

TEST_CASE("gradcheck: the encoder-only model with the classifier on the first position") {
  EncoderOnly model(tiny(), 4);
  test::perturb_norms(model, 9);
  const Tensor labels = test::ids({2, 0}, 2).reshape({2});
  auto loss = [&] { return cross_entropy(model.class_logits(model.encode(kIds)), labels); };
  CHECK_GRADCHECK(loss, model.parameters());
}

TEST_CASE("tied embeddings: one parameter, whose gradient is the sum of the untied model's two") {
  EncoderOnly tied(tiny(NormPlacement::Post, true), 6);
  EncoderOnly untied(tiny(NormPlacement::Post, false), 6);
  // The same values everywhere, the untied output matrix a copy of the embedding.
  StateDict values = tied.state_dict();
  values.emplace("mlm_head.weight", tied.tok_embed->weight.value().clone());
  untied.load_state_dict(values);
  CHECK(tied.mlm_head->weight.impl() == tied.tok_embed->weight.impl());
  CHECK(tied.state_dict().count("mlm_head.weight") == 0);
  const Tensor labels = test::ids({0, 5, 6, 0, 0, 0, 8, 0, 0, 0}, 2);
  for (EncoderOnly* m : {&tied, &untied})
    cross_entropy(m->mlm_logits(m->encode(kIds)), labels, {.ignore_index = 0}).backward();
  const Tensor sum = add(untied.tok_embed->weight.grad(), untied.mlm_head->weight.grad());
  CHECK(max_abs_diff(tied.tok_embed->weight.grad(), sum) < 1e-12);
  CHECK(max_abs_diff(untied.mlm_head->weight.grad(), zeros({11, 8}, DType::Float64)) > 1e-3);  // both paths count
}

TEST_CASE("attention is bidirectional: a later token changes earlier outputs, padding changes nothing") {
  EncoderOnly model(tiny(), 7);
  const Tensor a = test::ids({1, 5, 6, 7, 2}, 1), later = test::ids({1, 5, 6, 9, 2}, 1);
  const Tensor ha = model.encode(a).value(), hl = model.encode(later).value();
  // Position 1 sees position 3 (a decoder's causal mask would hide it).
  CHECK(max_abs_diff(ha.select(1, 1), hl.select(1, 1)) > 1e-3);
  // The same sentence with two <pad> after it: the real positions are unchanged.
  const Tensor padded = model.encode(test::ids({1, 5, 6, 7, 2, 0, 0}, 1)).value();
  CHECK(max_abs_diff(padded.slice(1, 0, 5), ha) < 1e-12);
}

TEST_CASE("EncoderOnly: bad configurations and inputs are errors naming the values") {
  EncoderOnlyConfig c = tiny();
  c.heads = 3;
  CHECK_THROWS_MSG(EncoderOnly(c, 1), ValueError, "EncoderOnlyConfig: d_model 8 is not divisible by heads 3");
  c = tiny(), c.classes = 0;
  CHECK_THROWS_MSG(EncoderOnly(c, 1), ValueError, "classes must be positive, got 0");
  EncoderOnly model(tiny(), 1);
  CHECK_THROWS_MSG(model.encode(test::ids(std::vector<int64_t>(11, 5), 1)), ShapeError,
                   "a sequence of 11 tokens is longer than max_len 10");
  CHECK_THROWS_AS(model.encode(kIds.to(DType::Float64)), ShapeError);
  CHECK_THROWS_MSG(model.encode(kIds, test::ids({0, 0}, 1)), ShapeError, "types [1, 2] do not match ids [2, 5]");
}

TEST_CASE(
    "EncoderOnlyConfig: sizes far beyond a CPU model are ValueErrors naming the bound, as the encoder-decoder's") {
  struct Huge {
    void (*set)(EncoderOnlyConfig&);
    const char* what;
  };
  // Before these bounds, a checkpoint could ask for config.max_len 2^40 (a sinusoid table of 2^43
  // numbers) or config.layers 2^40, and validate() let it through.
  const Huge huge[] = {
      {[](EncoderOnlyConfig& c) { c.vocab = int64_t{1} << 40; },
       "EncoderOnlyConfig: vocab must be at most 16777216, got 1099511627776"},
      {[](EncoderOnlyConfig& c) { c.d_model = int64_t{1} << 62; },
       "EncoderOnlyConfig: d_model must be at most 65536, got 4611686018427387904"},
      {[](EncoderOnlyConfig& c) { c.d_ff = 262145; }, "EncoderOnlyConfig: d_ff must be at most 262144, got 262145"},
      {[](EncoderOnlyConfig& c) { c.heads = 2048; }, "EncoderOnlyConfig: heads must be at most 1024, got 2048"},
      {[](EncoderOnlyConfig& c) { c.layers = int64_t{1} << 40; },
       "EncoderOnlyConfig: layers must be at most 1024, got 1099511627776"},
      {[](EncoderOnlyConfig& c) { c.max_len = int64_t{1} << 40; },
       "EncoderOnlyConfig: max_len must be at most 1048576, got 1099511627776"},
      {[](EncoderOnlyConfig& c) { c.types = 16777217; }, "EncoderOnlyConfig: types must be at most 16777216"},
      {[](EncoderOnlyConfig& c) { c.classes = 16777217; }, "EncoderOnlyConfig: classes must be at most 16777216"},
      // Every size within its bound, the whole too big.
      {[](EncoderOnlyConfig& c) { c.d_model = 4096, c.d_ff = 16384, c.heads = 8, c.layers = 1024; },
       "EncoderOnlyConfig: the model would hold "},
      {[](EncoderOnlyConfig& c) { c.d_model = 2048, c.max_len = 1 << 20; }, "a 1048576 x 2048 positional table"},
  };
  for (const Huge& h : huge) {
    EncoderOnlyConfig c = tiny();
    h.set(c);
    INFO(h.what);
    CHECK_THROWS_MSG(EncoderOnly(c, 0), ValueError, h.what);
  }
  CHECK_NOTHROW(EncoderOnlyConfig::bert_base().validate());
  EncoderOnlyConfig c = tiny();
  c.layers = 1024, c.max_len = 1 << 20;
  CHECK_NOTHROW(c.validate());
}
