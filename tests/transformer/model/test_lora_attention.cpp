// LoRA on attention's projections (MultiheadAttention::add_lora): each of W^Q, W^K, W^V its own
// update on its rows of the stacked in_proj, W^O's on out_proj; whatever subset is adapted, the
// output is that of the attention whose weights have the updates merged, in self-attention,
// cross-attention and incremental decoding alike.
#include "catch.h"
#include "nn/all.h"
#include "transformer/model/masks.h"
#include "transformer/model/multihead_attention.h"

using namespace gradformer;

namespace {

std::shared_ptr<MultiheadAttention> attention(uint64_t seed) {
  Generator gen(seed);
  auto mha = std::make_shared<MultiheadAttention>(8, 4, 0.0, skip_init, std::make_shared<Generator>(1), DType::Float64,
                                                  AttentionShape{.kv_heads = 2, .head_dim = 0, .bias = Bias::All});
  mha->reset_parameters(gen);
  return mha;
}

// The same attention with every update merged into its weights: rows [0, 8) of in_proj are W^Q's,
// [8, 12) W^K's, [12, 16) W^V's (4 query heads and 2 key/value heads of 2).
std::shared_ptr<MultiheadAttention> merged(const MultiheadAttention& a, uint64_t seed) {
  auto m = attention(seed);
  Tensor w = m->in_proj_weight.value();
  const std::tuple<int64_t, int64_t, const LoraAdapter*> blocks[] = {
      {0, 8, a.lora_q.get()}, {8, 4, a.lora_k.get()}, {12, 4, a.lora_v.get()}};
  for (const auto& [first, rows, adapter] : blocks) {
    if (!adapter) continue;
    Tensor part = w.narrow(0, first, rows);
    part.copy_(add(part, adapter->delta()));
  }
  if (a.out_proj->lora) {
    Tensor o = m->out_proj->weight.value();
    o.copy_(add(o, a.out_proj->lora->delta()));
  }
  return m;
}

void check_close(const Variable& a, const Variable& b) {
  const std::vector<double> x = a.value().contiguous().to_vector<double>(),
                            y = b.value().contiguous().to_vector<double>();
  REQUIRE(x.size() == y.size());
  for (size_t i = 0; i < x.size(); ++i) CHECK(x[i] == Approx(y[i]).margin(1e-12));
}

}  // namespace

TEST_CASE("attention with LoRA on any of W^Q, W^K, W^V, W^O gives what its merged weights give") {
  for (const auto& [q, k, v, o] : {std::tuple{true, true, true, true}, std::tuple{true, false, true, false},
                                   std::tuple{false, true, false, true}}) {
    INFO("q " << q << " k " << k << " v " << v << " o " << o);
    auto a = attention(5);
    Generator gen(6);
    a->add_lora(q, k, v, 2, 4.0, &gen);
    if (o) a->out_proj->add_lora(2, 4.0, &gen);
    for (const auto& [name, p] : a->named_parameters())
      if (name.find(".B") != std::string::npos) normal_(p, 0, 0.5, gen);
    const auto m = merged(*a, 5);
    const Variable x(normal({2, 3, 8}, 0, 1, gen).to(DType::Float64)),
        memory(normal({2, 5, 8}, 0, 1, gen).to(DType::Float64));
    check_close(a->forward(x, x, x).output, m->forward(x, x, x).output);                      // self-attention
    check_close(a->forward(x, memory, memory).output, m->forward(x, memory, memory).output);  // cross-attention
    KVCache ca, cm;
    check_close(a->forward_step(x, ca).output, m->forward_step(x, cm).output);  // incremental decoding
  }
}

TEST_CASE("attention's LoRA updates are named by what they adapt, and start at zero") {
  auto a = attention(5);
  Generator draws(2);
  const Variable x(normal({1, 2, 8}, 0, 1, draws).to(DType::Float64));
  const std::vector<double> before = a->forward(x, x, x).output.value().to_vector<double>();
  Generator gen(7);
  a->add_lora(true, false, true, 1, 1.0, &gen);
  std::vector<std::string> names;
  for (const auto& [name, p] : a->named_parameters())
    if (name.find("lora") != std::string::npos) names.push_back(name + " " + to_string(p.shape()));
  CHECK(names == std::vector<std::string>{"lora_q.A [1, 8]", "lora_q.B [8, 1]", "lora_v.A [1, 8]", "lora_v.B [4, 1]"});
  CHECK(a->forward(x, x, x).output.value().to_vector<double>() == before);  // B = 0: nothing changed
}
