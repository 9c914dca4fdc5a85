#include <cmath>

#include "model_helpers.h"
#include "nn/adam.h"
#include "transformer/model/encoder_decoder.h"

using namespace gradformer;
using test::ids;
using test::rnd;
using test::values;

namespace {

std::vector<std::string> names(const Module& m) {
  std::vector<std::string> out;
  for (const auto& [name, p] : m.named_parameters()) out.push_back(name);
  return out;
}

// A batch of two pairs; the second source and target are padded (id 0).
struct TinyBatch {
  Tensor src = ids({1, 2, 3, 4, 5, 6, 2, 0}, 2);
  Tensor tgt_in = ids({1, 3, 5, 2, 1, 6, 4, 0}, 2);
  Tensor tgt_out = ids({3, 5, 2, 6, 6, 4, 2, 0}, 2);
  Tensor src_mask = test::pad_mask(src), tgt_mask = test::tgt_mask(tgt_in);
};

}  // namespace

TEST_CASE("EncoderDecoder parameter names are PyTorch's, as ARCHITECTURE.md lists them (1 layer, post-LN)") {
  EncoderDecoder model(test::tiny_config(NormPlacement::Post), 0);
  const std::vector<std::string> expected = {
      "src_embed.weight",
      "tgt_embed.weight",
      "encoder.layers.0.self_attn.in_proj_weight",
      "encoder.layers.0.self_attn.in_proj_bias",
      "encoder.layers.0.self_attn.out_proj.weight",
      "encoder.layers.0.self_attn.out_proj.bias",
      "encoder.layers.0.linear1.weight",
      "encoder.layers.0.linear1.bias",
      "encoder.layers.0.linear2.weight",
      "encoder.layers.0.linear2.bias",
      "encoder.layers.0.norm1.weight",
      "encoder.layers.0.norm1.bias",
      "encoder.layers.0.norm2.weight",
      "encoder.layers.0.norm2.bias",
      "decoder.layers.0.self_attn.in_proj_weight",
      "decoder.layers.0.self_attn.in_proj_bias",
      "decoder.layers.0.self_attn.out_proj.weight",
      "decoder.layers.0.self_attn.out_proj.bias",
      "decoder.layers.0.multihead_attn.in_proj_weight",
      "decoder.layers.0.multihead_attn.in_proj_bias",
      "decoder.layers.0.multihead_attn.out_proj.weight",
      "decoder.layers.0.multihead_attn.out_proj.bias",
      "decoder.layers.0.linear1.weight",
      "decoder.layers.0.linear1.bias",
      "decoder.layers.0.linear2.weight",
      "decoder.layers.0.linear2.bias",
      "decoder.layers.0.norm1.weight",
      "decoder.layers.0.norm1.bias",
      "decoder.layers.0.norm2.weight",
      "decoder.layers.0.norm2.bias",
      "decoder.layers.0.norm3.weight",
      "decoder.layers.0.norm3.bias",
      "generator.weight",
      "generator.bias",
  };
  CHECK(names(model) == expected);
  CHECK(model.decoder->layers->size() == 1);
  CHECK(model.encoder->layers->operator[](0).self_attn->in_proj_weight.shape() == Shape{24, 8});
  CHECK(model.encoder->layers->operator[](0).linear1->weight.shape() == Shape{16, 8});  // [d_ff, d]
  CHECK(model.encoder->layers->operator[](0).linear2->weight.shape() == Shape{8, 16});  // [d, d_ff]
  CHECK(model.output_projection->weight.shape() == Shape{7, 8});

  // Pre-LN adds the final norms; tying removes tgt_embed.weight and generator.weight.
  TransformerConfig pre = test::tiny_config(NormPlacement::Pre);
  pre.tie_embeddings = true;
  const std::vector<std::string> tied = names(EncoderDecoder(pre, 0));
  CHECK(std::count(tied.begin(), tied.end(), "encoder.norm.weight") == 1);
  CHECK(std::count(tied.begin(), tied.end(), "decoder.norm.bias") == 1);
  CHECK(std::count(tied.begin(), tied.end(), "tgt_embed.weight") == 0);
  CHECK(std::count(tied.begin(), tied.end(), "generator.weight") == 0);
  CHECK(tied.size() == expected.size() - 2 + 4);
}

TEST_CASE("parameter_count: the formula equals the count of an instantiated model") {
  for (NormPlacement norm : {NormPlacement::Post, NormPlacement::Pre})
    for (bool tie : {false, true})
      for (int64_t layers : {1, 3}) {
        TransformerConfig c = test::tiny_config(norm, layers);
        c.tie_embeddings = tie;
        c.tgt_vocab = tie ? 7 : 9;
        CHECK(parameter_count(c) == EncoderDecoder(c, 0).parameter_count());
      }
  TransformerConfig base = TransformerConfig::base(1000, 1200);  // untied, 1 layer: a quick instantiation
  base.layers = 1;
  CHECK(parameter_count(base) == EncoderDecoder(base, 0).parameter_count());
  // The paper's models with a shared 37,000-token vocabulary and tied embeddings.
  CHECK(parameter_count(TransformerConfig::base()) == 63'119'496);
  CHECK(parameter_count(TransformerConfig::big()) == 214'282'376);
  // Untied, the two embeddings and the output projection are each 37,000 x d more.
  TransformerConfig untied = TransformerConfig::base();
  untied.tie_embeddings = false;
  CHECK(parameter_count(untied) == 63'119'496 + 2 * 37'000 * 512);
}

TEST_CASE("flop_count: the matrix products of one forward pass, by hand") {
  TransformerConfig c = test::tiny_config(NormPlacement::Post, 2);  // d 8, d_ff 16, V 7
  const FlopCount f = flop_count(c, 3, 4);
  const double d = 8, ff = 16, S = 3, T = 4;
  CHECK(f.encoder == 2 * S * (2 * (3 * d * d + d * d) + 2 * 2 * S * d + 2 * 2 * d * ff));
  CHECK(f.decoder ==
        2 * (T * (2 * 4 * d * d + 2 * 2 * T * d + 2 * 2 * d * d + 2 * 2 * S * d + 2 * 2 * d * ff) + S * 2 * 2 * d * d));
  CHECK(f.output_projection == T * 2 * d * 7);
  CHECK(f.training_per_target_token() == 3 * f.forward() / T);
  // For long sentences and a big d the products are about 2 FLOPs per parameter per token:
  // base, 1 token of each side, no attention terms to speak of.
  const FlopCount b = flop_count(TransformerConfig::base(), 1, 1);
  const double non_embedding = static_cast<double>(parameter_count(TransformerConfig::base()) - 37000 * 512 - 37000);
  CHECK(b.forward() == Approx(2 * (non_embedding + 37000.0 * 512)).epsilon(0.01));
}

TEST_CASE("gradcheck: a whole tiny encoder-decoder with its label-smoothed loss, post-LN and pre-LN") {
  const TinyBatch batch;
  for (NormPlacement norm : {NormPlacement::Post, NormPlacement::Pre})
    for (bool tie : {false, true}) {
      INFO((norm == NormPlacement::Post ? "post-LN" : "pre-LN") << (tie ? ", tied" : ""));
      TransformerConfig c = test::tiny_config(norm, 1);  // stacks of 2 are checked in the layer tests
      c.tie_embeddings = tie;
      EncoderDecoder model(c, 1);
      test::perturb_norms(model, 7);
      auto loss = [&] {
        const Variable logits = model.forward(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask);
        return cross_entropy(logits, batch.tgt_out, {.ignore_index = 0, .label_smoothing = 0.1});
      };
      CHECK_GRADCHECK(loss, model.parameters());
    }
}

TEST_CASE("masking: a future target token cannot change earlier decoder outputs") {
  TransformerConfig c = test::tiny_config(NormPlacement::Post, 2);
  EncoderDecoder model(c, 2);
  const TinyBatch batch;
  const Variable memory = model.encode(batch.src, batch.src_mask);
  Tensor changed = batch.tgt_in.clone();
  changed.select(0, 0).select(0, 2).fill_(6.0);  // position 2 of the first sentence
  const std::vector<double> a = values(model.decode(memory, batch.src_mask, batch.tgt_in, batch.tgt_mask).value());
  const std::vector<double> b = values(model.decode(memory, batch.src_mask, changed, test::tgt_mask(changed)).value());
  for (size_t t = 0; t < 4; ++t)
    for (size_t j = 0; j < 8; ++j) {
      const size_t i = t * 8 + j;      // sentence 0, position t
      if (t < 2) CHECK(a[i] == b[i]);  // positions before 2: unchanged, bit for bit
    }
  CHECK(a[2 * 8] != b[2 * 8]);  // position 2 itself does change
  // Without the causal mask the future would leak into position 0.
  const Tensor pad_only = test::pad_mask(batch.tgt_in).expand({2, 4, 4});
  const std::vector<double> c0 = values(model.decode(memory, batch.src_mask, batch.tgt_in, pad_only).value());
  const std::vector<double> c1 =
      values(model.decode(memory, batch.src_mask, changed, test::pad_mask(changed).expand({2, 4, 4})).value());
  CHECK(c0[0] != c1[0]);
}

TEST_CASE("masking: a padded source position changes no output at all") {
  for (NormPlacement norm : {NormPlacement::Post, NormPlacement::Pre}) {
    EncoderDecoder model(test::tiny_config(norm, 2), 3);
    const TinyBatch batch;
    Tensor changed = batch.src.clone();
    changed.select(0, 1).select(0, 3).fill_(5.0);  // the pad of the second sentence, still masked as pad
    const std::vector<double> a =
        values(model.forward(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask).value());
    const std::vector<double> b = values(model.forward(changed, batch.tgt_in, batch.src_mask, batch.tgt_mask).value());
    CHECK(a == b);
  }
}

TEST_CASE("decode_step with the cache gives the same log-probabilities as decoding the whole prefix") {
  TransformerConfig c = test::tiny_config(NormPlacement::Post, 2);
  c.dropout = 0.1;
  EncoderDecoder model(c, 4);
  model.eval();
  NoGradGuard no_grad;
  const TinyBatch batch;
  const Variable memory = model.encode(batch.src, batch.src_mask);
  const Tensor full =
      model.log_probs(model.decode(memory, batch.src_mask, batch.tgt_in, test::lower_triangle(4).unsqueeze(0))).value();
  DecoderCache cache = model.start_decoding(memory);
  for (int64_t t = 0; t < 4; ++t) {
    const Tensor step =
        model.log_probs(model.decode_step(batch.tgt_in.narrow(1, t, 1).contiguous(), batch.src_mask, cache)).value();
    const std::vector<double> x = values(step), y = values(full.narrow(1, t, 1));
    for (size_t i = 0; i < x.size(); ++i) CHECK(x[i] == Approx(y[i]).margin(1e-12));
  }
}

TEST_CASE("Xavier-uniform initialisation of every matrix, tied weights shared and stored once") {
  TransformerConfig c = test::tiny_config(NormPlacement::Post, 1);
  c.tie_embeddings = true;
  EncoderDecoder model(c, 5);
  for (const auto& [name, p] : model.named_parameters()) {
    if (p.dim() < 2) continue;
    const double bound = std::sqrt(6.0 / static_cast<double>(p.size(0) + p.size(1)));
    INFO(name);
    CHECK(max(p.value()).item() <= bound);
    CHECK(min(p.value()).item() >= -bound);
    // Drawn, not left at the allocation's zeros: with 56 or more elements, values beyond half the
    // bound on both sides are all but certain (each misses with probability 3/4 per element).
    CHECK(max(p.value()).item() > bound / 2);
    CHECK(min(p.value()).item() < -bound / 2);
  }
  CHECK(model.output_projection->weight.impl() == model.src_embed->weight.impl());
  CHECK(model.tgt_embed == model.src_embed);
  CHECK(model.state_dict().count("generator.weight") == 0);
  // The shared matrix receives the sum of its three uses' gradients.
  const TinyBatch batch;
  cross_entropy(model.forward(batch.src, batch.tgt_in, batch.src_mask, batch.tgt_mask), batch.tgt_out,
                {.ignore_index = 0})
      .backward();
  CHECK(model.src_embed->weight.grad().defined());
  // Two models from one seed are identical; another seed differs.
  EncoderDecoder same(c, 5), other(c, 6);
  CHECK(values(same.src_embed->weight.value()) == values(model.src_embed->weight.value()));
  CHECK(values(other.src_embed->weight.value()) != values(model.src_embed->weight.value()));
}

TEST_CASE("initialisation draws each parameter once, in one pass, by the documented scheme") {
  const TransformerConfig c = test::tiny_config(NormPlacement::Pre, 2);
  EncoderDecoder model(c, 7);
  // The first parameter is the first draw from Generator(seed, 0): nothing was drawn before it.
  const double a = std::sqrt(6.0 / static_cast<double>(c.src_vocab + c.d_model));
  Generator fresh(7, 0);
  CHECK(values(model.src_embed->weight.value()) == values(uniform({c.src_vocab, c.d_model}, -a, a, fresh, c.dtype)));
  for (const auto& [name, p] : model.named_parameters()) {
    INFO(name);
    const bool layer_norm = name.find("norm") != std::string::npos;
    if (p.dim() >= 2) continue;  // the Xavier bounds are checked in the test below
    if (layer_norm) {
      CHECK(values(p.value()) ==
            std::vector<double>(static_cast<size_t>(p.numel()), name.ends_with("weight") ? 1.0 : 0.0));
    } else if (name.find("attn") != std::string::npos) {  // in_proj_bias and out_proj.bias
      CHECK(values(p.value()) == std::vector<double>(static_cast<size_t>(p.numel()), 0.0));
    } else {  // linear1.bias (fan_in d), linear2.bias (fan_in d_ff), generator.bias (fan_in d)
      const double fan_in = static_cast<double>(name.find("linear2") != std::string::npos ? c.d_ff : c.d_model);
      CHECK(max(p.value()).item() <= 1 / std::sqrt(fan_in));
      CHECK(min(p.value()).item() >= -1 / std::sqrt(fan_in));
      CHECK(max(p.value()).item() != min(p.value()).item());  // drawn, not left at 0
    }
  }
  // Built with skip_init nothing is drawn; reset_parameters from the same generator is the constructor's work.
  EncoderDecoder blank(c, 7, skip_init);
  const Tensor blank_embedding = blank.src_embed->weight.value(),
               blank_bias = (*blank.decoder->layers)[0].linear1->bias.value();
  CHECK(values(blank_embedding) == std::vector<double>(static_cast<size_t>(blank_embedding.numel()), 0.0));
  CHECK(values(blank_bias) == std::vector<double>(static_cast<size_t>(blank_bias.numel()), 0.0));
  Generator init(7, 0);
  blank.reset_parameters(init);
  for (const auto& [name, t] : model.state_dict()) {
    INFO(name);
    CHECK(values(blank.state_dict().at(name)) == values(t));
  }
}

TEST_CASE("a tiny model trained with Adam on one fixed batch drives its loss near zero") {
  TransformerConfig c = TransformerConfig::tutorial(11, 11);
  c.d_model = 32, c.d_ff = 64, c.heads = 4, c.layers = 1, c.dropout = 0.0, c.max_len = 16;
  EncoderDecoder model(c, 6);
  Generator gen(7);
  Tensor data = randint({8, 7}, 1, 11, gen);  // the copy task: the target is the source
  data.select(1, 0).fill_(1.0);
  const Tensor src = data, tgt_in = data.narrow(1, 0, 6).contiguous(), tgt_out = data.narrow(1, 1, 6).contiguous();
  const Tensor src_mask = test::pad_mask(src), tgt_mask = test::tgt_mask(tgt_in);
  Adam adam(model.parameters(), {.lr = 3e-3});
  double first = 0, last = 0;
  for (int step = 0; step < 300; ++step) {
    adam.zero_grad();
    Variable loss = cross_entropy(model.forward(src, tgt_in, src_mask, tgt_mask), tgt_out);
    if (step == 0) first = loss.item();
    last = loss.item();
    loss.backward();
    adam.step();
  }
  INFO("loss " << first << " -> " << last);
  CHECK(first > 1.5);
  CHECK(last < 0.02);
}

TEST_CASE("TransformerConfig presets and validation errors") {
  const TransformerConfig base = TransformerConfig::base(), big = TransformerConfig::big();
  CHECK((base.d_model == 512 && base.d_ff == 2048 && base.heads == 8 && base.layers == 6 && base.dropout == 0.1));
  CHECK((big.d_model == 1024 && big.d_ff == 4096 && big.heads == 16 && big.layers == 6 && big.dropout == 0.3));
  CHECK(base.tie_embeddings);
  CHECK_FALSE(TransformerConfig::base(100, 200).tie_embeddings);
  TransformerConfig c = test::tiny_config(NormPlacement::Post);
  c.heads = 3;
  CHECK_THROWS_MSG(c.validate(), ValueError, "TransformerConfig: d_model 8 is not divisible by heads 3");
  c = test::tiny_config(NormPlacement::Post);
  c.d_ff = 0;
  CHECK_THROWS_MSG(EncoderDecoder(c, 0), ValueError, "TransformerConfig: d_ff must be positive, got 0");
  c = test::tiny_config(NormPlacement::Post);
  c.tgt_vocab = 9, c.tie_embeddings = true;
  CHECK_THROWS_MSG(c.validate(), ValueError,
                   "tie_embeddings needs one shared vocabulary, got src_vocab 7 and tgt_vocab 9");
  c = test::tiny_config(NormPlacement::Post);
  c.dropout = 1.0;
  CHECK_THROWS_MSG(c.validate(), ValueError, "dropout must be in [0, 1), got 1");
  c = test::tiny_config(NormPlacement::Post);
  c.dtype = DType::Int64;
  CHECK_THROWS_AS(c.validate(), DTypeError);
}

TEST_CASE("TransformerConfig: sizes far beyond a CPU model are ValueErrors naming the bound, before any allocation") {
  struct Huge {
    void (*set)(TransformerConfig&);
    const char* what;
  };
  const Huge huge[] = {
      {[](TransformerConfig& c) { c.d_model = int64_t{1} << 62; },
       "TransformerConfig: d_model must be at most 65536, got 4611686018427387904"},
      {[](TransformerConfig& c) { c.d_ff = 262145; }, "TransformerConfig: d_ff must be at most 262144, got 262145"},
      {[](TransformerConfig& c) { c.heads = 2048; }, "TransformerConfig: heads must be at most 1024, got 2048"},
      {[](TransformerConfig& c) { c.layers = 59999; }, "TransformerConfig: layers must be at most 1024, got 59999"},
      {[](TransformerConfig& c) { c.max_len = (int64_t{1} << 20) + 1; },
       "TransformerConfig: max_len must be at most 1048576, got 1048577"},
      {[](TransformerConfig& c) { c.src_vocab = int64_t{1} << 40; },
       "TransformerConfig: src_vocab must be at most 16777216, got 1099511627776"},
      {[](TransformerConfig& c) { c.tgt_vocab = 16777217; },
       "TransformerConfig: tgt_vocab must be at most 16777216, got 16777217"},
      // Every size within its bound, the whole too big: 1024 layers of d 4096 are 481 billion parameters.
      {[](TransformerConfig& c) { c.d_model = 4096, c.d_ff = 16384, c.heads = 8, c.layers = 1024; },
       "TransformerConfig: the model would hold 481170640903 parameters and a 16 x 4096 positional table, more than "
       "the "
       "2147483648 numbers allowed (d_model 4096, d_ff 16384, layers 1024, vocabularies 7 and 7, max_len 16)"},
      {[](TransformerConfig& c) { c.d_model = 2048, c.max_len = 1 << 20; }, "a 1048576 x 2048 positional table"},
  };
  for (const Huge& h : huge) {
    TransformerConfig c = test::tiny_config(NormPlacement::Post);
    h.set(c);
    INFO(h.what);
    CHECK_THROWS_MSG(EncoderDecoder(c, 0), ValueError, h.what);
  }
  // The paper's big model, and the largest sizes on their own, are accepted.
  CHECK_NOTHROW(TransformerConfig::big().validate());
  TransformerConfig c = test::tiny_config(NormPlacement::Post);
  c.layers = 1024, c.max_len = 1 << 20;
  CHECK_NOTHROW(c.validate());
}

TEST_CASE("EncoderDecoder rejects ill-shaped ids and masks with typed errors") {
  EncoderDecoder model(test::tiny_config(NormPlacement::Post), 0);
  const TinyBatch batch;
  CHECK_THROWS_MSG(model.encode(batch.src.to(DType::Float32), batch.src_mask), ShapeError,
                   "EncoderDecoder: src must be [B, T] int64 token ids, got [2, 4] float32");
  CHECK_THROWS_MSG(model.encode(batch.src, ones({2, 1, 4})), DTypeError, "src_mask must be bool");
  CHECK_THROWS_MSG(model.encode(batch.src, batch.tgt_mask), ShapeError,
                   "EncoderDecoder: src_mask [2, 4, 4] does not fit [2, 1 or 1, 4]");
  const Variable memory = model.encode(batch.src, batch.src_mask);
  CHECK_THROWS_MSG(model.decode(memory, batch.src_mask, batch.tgt_in, batch.tgt_mask.narrow(2, 0, 3)), ShapeError,
                   "tgt_mask [2, 4, 3] does not fit [2, 4 or 1, 4]");
  CHECK_THROWS_AS(model.encode(ids({1, 2, 7, 0}, 1), Tensor()), IndexError);  // id 7 in a vocabulary of 7
  TransformerConfig c = test::tiny_config(NormPlacement::Post);
  c.max_len = 3;
  CHECK_THROWS_MSG(EncoderDecoder(c, 0).encode(batch.src, batch.src_mask), ShapeError, "exceed the maximum length 3");
}
