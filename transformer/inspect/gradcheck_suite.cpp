#include "transformer/inspect/gradcheck_suite.h"

#include "autograd/op_checks.h"
#include "nn/all.h"
#include "transformer/data/batch.h"
#include "transformer/model/encoder_decoder.h"
#include "transformer/model/masks.h"

namespace gradformer {
namespace {

Tensor rnd(const Shape& shape, uint64_t seed, double lo = -1, double hi = 1) {
  Generator gen(seed);
  return uniform(shape, lo, hi, gen, DType::Float64);
}

// A module (built fresh in float64, dropout 0) checked with respect to its parameters and input x.
template <class Make, class Forward>
NamedGradcheck layer(std::string name, Make make, Forward forward, Tensor x) {
  return {std::move(name), [make, forward, x] {
            auto module = make();
            Variable input(x, true);
            std::vector<Variable> leaves = module->parameters();
            leaves.push_back(input);
            return gradcheck([&] { return forward(*module, input); }, leaves);
          }};
}

LayerConfig tiny_layer(NormPlacement norm) {
  return {.d_model = 8, .heads = 2, .d_ff = 16, .dropout = 0, .norm = norm, .dtype = DType::Float64};
}

// Llama's block: pre-LN, RMSNorm, rotary positions, SwiGLU, no biases; 4 heads sharing 2 key/value heads.
LayerConfig tiny_llama_layer() {
  LayerConfig c = tiny_layer(NormPlacement::Pre);
  c.heads = 4, c.activation = Activation::SwiGLU, c.rotary = true, c.max_len = 8;
  c.block = {.normalization = Normalization::RMSNorm, .kv_heads = 2, .bias = Bias::None};
  return c;
}

TransformerConfig tiny_model(NormPlacement norm) {
  return {.src_vocab = 7,
          .tgt_vocab = 6,
          .d_model = 8,
          .d_ff = 16,
          .heads = 2,
          .layers = 2,
          .dropout = 0,
          .norm = norm,
          .max_len = 16,
          .dtype = DType::Float64};
}

}  // namespace

std::vector<NamedGradcheck> gradient_checks() {
  // Every op (autograd's own list), then every layer, then whole models.
  std::vector<NamedGradcheck> checks;
  std::vector<OpCheck> ops = autograd_op_checks();
  for (OpCheck& c : ops)
    checks.push_back({c.name, [f = std::move(c.f), inputs = std::move(c.inputs)] { return gradcheck(f, inputs); }});
  // Each check seeds its own initialisation when it runs (a generator shared by reference would
  // be gone by then, and the result would depend on which checks ran before).
  checks.push_back(layer(
      "Linear",
      [] {
        Generator gen(9);
        return std::make_shared<Linear>(4, 3, gen, true, DType::Float64);
      },
      [](Linear& l, const Variable& x) { return l.forward(x); }, rnd({2, 3, 4}, 10)));
  // LoRA's B starts at 0, which would make A's gradient 0: drawn here so that both are checked.
  checks.push_back(layer(
      "Linear with a LoRA update (rank 2, alpha 4)",
      [] {
        Generator gen(9);
        auto l = std::make_shared<Linear>(4, 3, gen, true, DType::Float64);
        l->add_lora(2, 4.0, &gen);
        normal_(l->lora->B, 0, 0.5, gen);
        return l;
      },
      [](Linear& l, const Variable& x) { return l.forward(x); }, rnd({2, 3, 4}, 20)));
  checks.push_back(layer(
      "multi-head attention with LoRA on W^Q, W^V and W^O (2 key/value heads)",
      [] {
        Generator gen(9);
        auto mha =
            std::make_shared<MultiheadAttention>(8, 4, 0.0, skip_init, std::make_shared<Generator>(1), DType::Float64,
                                                 AttentionShape{.kv_heads = 2, .head_dim = 0, .bias = Bias::All});
        mha->reset_parameters(gen);
        mha->add_lora(true, false, true, 2, 2.0, &gen);
        mha->out_proj->add_lora(2, 2.0, &gen);
        for (LoraAdapter* a : {mha->lora_q.get(), mha->lora_v.get(), mha->out_proj->lora.get()})
          normal_(a->B, 0, 0.5, gen);
        return mha;
      },
      [](MultiheadAttention& mha, const Variable& x) { return mha.forward(x, x, x).output; }, rnd({2, 4, 8}, 21)));
  checks.push_back(layer(
      "LayerNorm", [] { return std::make_shared<LayerNorm>(4, 1e-5, DType::Float64); },
      [](LayerNorm& l, const Variable& x) { return l.forward(x); }, rnd({3, 4}, 11)));
  checks.push_back(layer(
      "RMSNorm", [] { return std::make_shared<RMSNorm>(4, 1e-6, DType::Float64); },
      [](RMSNorm& l, const Variable& x) { return l.forward(x); }, rnd({3, 4}, 16)));
  const Tensor pad_mask =
      from_vector(std::vector<bool>{true, true, true, false}, {1, 1, 4}).expand({2, 1, 4}).contiguous();
  checks.push_back(layer(
      "multi-head attention (padding mask)",
      [] {
        Generator gen(9);
        return std::make_shared<MultiheadAttention>(8, 2, 0.0, gen, std::make_shared<Generator>(1), DType::Float64);
      },
      [pad_mask](MultiheadAttention& mha, const Variable& x) { return mha.forward(x, x, x, pad_mask).output; },
      rnd({2, 4, 8}, 12)));
  checks.push_back(layer(
      "Llama's block (RMSNorm, rotary, SwiGLU, grouped-query attention, no biases), causal",
      [] {
        Generator gen(9);
        return std::make_shared<EncoderLayer>(tiny_llama_layer(), gen, std::make_shared<Generator>(1));
      },
      [](EncoderLayer& l, const Variable& x) { return l.forward(x, causal_mask(4).unsqueeze(0)); },
      rnd({2, 4, 8}, 17)));
  checks.push_back(layer(
      "decoder layer with Llama's settings (rotary self-attention, grouped cross-attention)",
      [] {
        Generator gen(9);
        return std::make_shared<DecoderLayer>(tiny_llama_layer(), gen, std::make_shared<Generator>(1));
      },
      [pad_mask](DecoderLayer& l, const Variable& x) {
        return l.forward(x, Variable(rnd({2, 4, 8}, 18)), pad_mask, causal_mask(3).unsqueeze(0));
      },
      rnd({2, 3, 8}, 19)));
  for (NormPlacement norm : {NormPlacement::Post, NormPlacement::Pre}) {
    const std::string which = norm == NormPlacement::Post ? " (post-LN)" : " (pre-LN)";
    checks.push_back(layer(
        "encoder layer" + which,
        [norm] {
          Generator gen(9);
          return std::make_shared<EncoderLayer>(tiny_layer(norm), gen, std::make_shared<Generator>(1));
        },
        [pad_mask](EncoderLayer& l, const Variable& x) { return l.forward(x, pad_mask); }, rnd({2, 4, 8}, 13)));
    const Tensor memory = rnd({2, 4, 8}, 14);
    checks.push_back(layer(
        "decoder layer" + which,
        [norm] {
          Generator gen(9);
          return std::make_shared<DecoderLayer>(tiny_layer(norm), gen, std::make_shared<Generator>(1));
        },
        [pad_mask, memory](DecoderLayer& l, const Variable& x) {
          return l.forward(x, Variable(memory), pad_mask, causal_mask(3).unsqueeze(0));
        },
        rnd({2, 3, 8}, 15)));
    checks.push_back({"encoder-decoder + label-smoothed loss" + which, [norm] {
                        EncoderDecoder model(tiny_model(norm), 16);
                        const Tensor src = from_vector(std::vector<int64_t>{4, 5, 6, 2, 5, 4, 2, 0}, {2, 4});
                        const Tensor tgt_in = from_vector(std::vector<int64_t>{1, 4, 5, 1, 5, 0}, {2, 3});
                        const Tensor tgt_out = from_vector(std::vector<int64_t>{4, 5, 2, 5, 2, 0}, {2, 3});
                        const Batch batch = make_batch(src, tgt_in, tgt_out);
                        return gradcheck(
                            [&] {
                              return cross_entropy(
                                  model.forward(batch.src, batch.tgt_in, padding_mask(batch.src, Vocab::pad),
                                                target_mask(batch.tgt_in, Vocab::pad)),
                                  batch.tgt_out, {.ignore_index = 0, .label_smoothing = 0.1});
                            },
                            model.parameters());
                      }});
  }
  return checks;
}

}  // namespace gradformer
