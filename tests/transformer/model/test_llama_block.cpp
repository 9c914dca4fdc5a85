// Llama's block in the three architectures: incremental decoding through the KV cache gives the
// logits of the whole prefix under a causal mask (rotary positions, grouped-query attention, RMSNorm,
// SwiGLU, no biases), in float32 and float64; the whole decoder-only model's gradients by finite
// differences; the RMSNorm module.
#include <cmath>
#include <vector>

#include "autograd/helpers.h"
#include "transformer/model/decoder_only.h"
#include "transformer/model/encoder_decoder.h"
#include "transformer/model/encoder_only.h"

using namespace gradformer;
using test::values;

namespace llama_block_test {

// llama_config at a tiny size: d 16, 4 heads of which 2 key/value heads, d_ff 24, 2 layers.
TransformerConfig tiny_llama(DType dtype, int64_t vocab = 11) {
  TransformerConfig c = llama_config(vocab);
  c.d_model = 16, c.heads = 4, c.d_ff = 24, c.layers = 2, c.max_len = 16, c.dtype = dtype;
  c.block.kv_heads = 2;
  return c;
}

Tensor causal(int64_t T) { return test::lower_triangle(T).unsqueeze(0); }  // [1, T, T]

// Logits of positions [from, from + widths...) stepped through the cache, as one flat list per row
// of the batch laid out as full's [B, T, V].
std::vector<double> stepped_logits(const DecoderOnly& model, const Tensor& ids, const std::vector<int64_t>& widths) {
  const int64_t B = ids.size(0), T = ids.size(1), V = model.config().tgt_vocab;
  std::vector<double> out(static_cast<size_t>(B * T * V));
  DecoderOnlyCache cache = model.start_cache();
  int64_t t = 0;
  for (int64_t w : widths) {
    const std::vector<double> step = values(model.forward_step(ids.narrow(1, t, w).contiguous(), cache).value());
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < w * V; ++i) out[(b * T + t) * V + i] = step[b * w * V + i];
    t += w;
  }
  CHECK(t == T);
  CHECK(cache.length == T);
  CHECK(cache.layers[0].k.shape() == Shape{B, 2, T, model.config().d_model / model.config().heads});
  return out;
}

// Moves every 1-d parameter (the RMSNorm gains, 1 at first) off its initial value, in the model's dtype.
void perturb_gains(Module& m, uint64_t seed) {
  for (const auto& [name, p] : m.named_parameters())
    if (p.dim() == 1) {
      Tensor v = p.value();
      v.copy_(v + test::rnd(v.shape(), seed++, -0.3, 0.3).to(v.dtype()));
    }
}

void check_close(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(tol).epsilon(tol));
}

}  // namespace llama_block_test

TEST_CASE("Llama's block, decoder-only: forward_step through the cache gives forward's logits, float32 and float64") {
  for (DType dtype : {DType::Float64, DType::Float32}) {
    INFO(dtype);
    const double tol = dtype == DType::Float64 ? 1e-12 : 1e-5;
    DecoderOnly model(llama_block_test::tiny_llama(dtype), 3);
    llama_block_test::perturb_gains(model, 10);  // the RMSNorm gains off 1
    model.eval();
    const MultiheadAttention& attention = *(*model.decoder->layers)[0].self_attn;
    REQUIRE(attention.rotary());
    REQUIRE(attention.kv_heads() == 2);
    REQUIRE(std::string((*model.decoder->layers)[0].norm1->kind()) == "RMSNorm");
    const Tensor ids = test::ids({1, 4, 5, 6, 3, 2, 9, 7, 10, 1, 2, 3, 4, 8}, 2);  // [2, 7]
    const std::vector<double> full = values(model.forward(ids, llama_block_test::causal(7)).value());
    llama_block_test::check_close(llama_block_test::stepped_logits(model, ids, {1, 1, 1, 1, 1, 1, 1}), full, tol);
    llama_block_test::check_close(llama_block_test::stepped_logits(model, ids, {3, 2, 2}), full, tol);
    llama_block_test::check_close(llama_block_test::stepped_logits(model, ids, {1, 5, 1}), full, tol);
    NoGradGuard no_grad;  // the cache's own storage instead of concatenation
    llama_block_test::check_close(llama_block_test::stepped_logits(model, ids, {2, 1, 1, 3}), full, tol);
  }
}

TEST_CASE("Llama's block, encoder-decoder: decode_step equals decode, self-attention rotary, cross-attention not") {
  TransformerConfig c = llama_block_test::tiny_llama(DType::Float64);
  c.arch = Architecture::EncoderDecoder, c.src_vocab = 9, c.tgt_vocab = 11;
  EncoderDecoder model(c, 5);
  llama_block_test::perturb_gains(model, 20);
  model.eval();
  const DecoderLayer& layer = (*model.decoder->layers)[1];
  CHECK(layer.self_attn->rotary());
  CHECK_FALSE(layer.multihead_attn->rotary());
  CHECK(layer.multihead_attn->kv_heads() == 2);
  CHECK((*model.encoder->layers)[0].self_attn->rotary());
  CHECK_FALSE(layer.linear1->bias.defined());
  const Tensor src = test::ids({3, 4, 5, 6, 2, 7, 8, 2, 0, 0}, 2);  // row 1 padded
  const Tensor src_mask = test::pad_mask(src), tgt = test::ids({1, 5, 6, 7, 8, 1, 9, 4, 3, 2}, 2);
  const Variable memory = model.encode(src, src_mask);
  const std::vector<double> full =
      values(model.log_probs(model.decode(memory, src_mask, tgt, llama_block_test::causal(5))).value());
  for (const std::vector<int64_t>& widths : {std::vector<int64_t>{1, 1, 1, 1, 1}, std::vector<int64_t>{2, 3}}) {
    DecoderCache cache = model.start_decoding(memory);
    std::vector<double> stepped(full.size());
    int64_t t = 0;
    for (int64_t w : widths) {
      const std::vector<double> step =
          values(model.log_probs(model.decode_step(tgt.narrow(1, t, w).contiguous(), src_mask, cache)).value());
      for (int64_t b = 0; b < 2; ++b)
        for (int64_t i = 0; i < w * 11; ++i) stepped[(b * 5 + t) * 11 + i] = step[b * w * 11 + i];
      t += w;
    }
    CHECK(cache.layers[0].self.k.size(1) == 2);    // N key/value heads cached
    CHECK(cache.layers[0].memory.k.size(1) == 2);  // the memory's too
    llama_block_test::check_close(stepped, full, 1e-12);
  }
}

TEST_CASE("Llama's block, encoder-only: its stack stepped under a causal mask equals the stack over the prefix") {
  // An encoder-only model attends both ways, so it has no decoding of its own; what applies is its
  // stack, the same EncoderLayer a decoder-only model runs, which must step through a cache alike.
  EncoderOnlyConfig c;
  c.vocab = 10, c.d_model = 16, c.heads = 4, c.d_ff = 24, c.layers = 2, c.max_len = 12, c.dropout = 0;
  c.norm = NormPlacement::Pre, c.positions = Positions::Rotary, c.activation = Activation::SwiGLU;
  c.block.normalization = Normalization::RMSNorm, c.block.kv_heads = 2, c.block.bias = Bias::None;
  c.dtype = DType::Float64;
  EncoderOnly model(c, 6);
  llama_block_test::perturb_gains(model, 30);
  model.eval();
  CHECK((*model.encoder->layers)[0].self_attn->rotary());
  const Variable x = model.embed(test::ids({1, 4, 5, 6, 7, 8, 3, 2, 9, 4, 5, 6}, 2));  // [2, 6, 16]
  const std::vector<double> full = values(model.encoder->forward(x, llama_block_test::causal(6)).value());
  std::vector<KVCache> caches(2);
  std::vector<double> stepped(full.size());
  for (int64_t t = 0; t < 6; t += 2) {
    const std::vector<double> step = values(model.encoder->forward_step(narrow(x, 1, t, 2), caches).value());
    for (int64_t b = 0; b < 2; ++b)
      for (int64_t i = 0; i < 2 * 16; ++i) stepped[(b * 6 + t) * 16 + i] = step[b * 2 * 16 + i];
  }
  CHECK(caches[1].k.shape() == Shape{2, 2, 6, 4});
  llama_block_test::check_close(stepped, full, 1e-12);
  // and the model itself runs both ways: encode over the padding mask alone
  CHECK(model.encode(test::ids({1, 4, 5, 0}, 1)).shape() == Shape{1, 4, 16});
}

TEST_CASE("Llama's block, decoder-only: gradcheck of the whole model's cross-entropy, float64") {
  TransformerConfig c = llama_block_test::tiny_llama(DType::Float64, 7);
  c.d_model = 8, c.d_ff = 12, c.layers = 2, c.max_len = 8;  // 4 heads of width 2, 2 key/value heads
  DecoderOnly model(c, 7);
  llama_block_test::perturb_gains(model, 40);
  const Tensor ids = test::ids({1, 4, 5, 6, 3, 2, 6, 5}, 2), targets = test::ids({4, 5, 6, 3, 2, 6, 5, 1}, 2);
  const std::vector<Variable> leaves = model.parameters();
  REQUIRE(model.parameter_count() == decoder_only_parameter_count(c));
  CHECK_GRADCHECK([&] { return cross_entropy(model.forward(ids, llama_block_test::causal(4)), targets); }, leaves);
}

TEST_CASE("RMSNorm: a weight of ones and nothing else, and x / sqrt(mean(x^2) + eps) * weight") {
  RMSNorm norm(4, 1e-6, DType::Float64);
  const auto named = norm.named_parameters();
  REQUIRE(named.size() == 1);
  CHECK(named[0].first == "weight");
  CHECK(named[0].second.shape() == Shape{4});
  CHECK(values(norm.weight.value()) == std::vector<double>{1, 1, 1, 1});
  CHECK(std::string(norm.kind()) == "RMSNorm");
  CHECK(norm.eps == 1e-6);
  LayerNorm layer_norm(4, 1e-5, DType::Float64);
  CHECK(layer_norm.named_parameters().size() == 2);  // LayerNorm: weight and bias
  Tensor w = norm.weight.value();
  w.copy_(tensor({1, 2, 3, 4}, {4}, DType::Float64));
  // x = [1, -1, 2, 0]: mean(x^2) = 6 / 4 = 1.5
  const std::vector<double> y = values(norm.forward(Variable(tensor({1, -1, 2, 0}, {1, 4}, DType::Float64))).value());
  const double r = 1 / std::sqrt(1.5 + 1e-6);
  CHECK(y[0] == Approx(1 * r * 1).epsilon(1e-14));
  CHECK(y[1] == Approx(-1 * r * 2).epsilon(1e-14));
  CHECK(y[2] == Approx(2 * r * 3).epsilon(1e-14));
  CHECK(y[3] == 0.0);
  norm.reset_parameters();
  CHECK(values(norm.weight.value()) == std::vector<double>{1, 1, 1, 1});
}
