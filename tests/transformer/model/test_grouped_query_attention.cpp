// Grouped-query attention (MultiheadAttention with N key/value heads for H query heads) against the
// definition, computed here with loops in float64: per query head h, K and V of key/value head
// h / (H / N), softmax(q k^T / sqrt(d_k)) v, the heads concatenated, then W^O. With masks, with and
// without biases, a head width of its own, rotary positions; N = H through the grouped path's
// twin; the cache holding N heads.
#include <cmath>
#include <functional>
#include <vector>

#include "autograd/helpers.h"
#include "transformer/model/multihead_attention.h"
#include "transformer/model/rotary.h"

using namespace gradformer;
using test::rnd;
using test::values;

namespace gqa_test {

using Allowed = std::function<bool(int64_t b, int64_t t, int64_t s)>;

struct Reference {
  std::vector<double> output;   // [B, Tq, d]
  std::vector<double> weights;  // [B, H, Tq, Tk]
};

// x [B, T, d] times rows [first, first + count) of w [rows, d] (+ those of bias): [B, T, count]
std::vector<double> project(const std::vector<double>& x, int64_t BT, int64_t d, const std::vector<double>& w,
                            const std::vector<double>& bias, int64_t first, int64_t count) {
  std::vector<double> out(static_cast<size_t>(BT * count));
  for (int64_t r = 0; r < BT; ++r)
    for (int64_t j = 0; j < count; ++j) {
      double s = bias.empty() ? 0 : bias[first + j];
      for (int64_t c = 0; c < d; ++c) s += x[r * d + c] * w[(first + j) * d + c];
      out[r * count + j] = s;
    }
  return out;
}

// Turns each head's pairs (i, i + d_k/2) of row r (position r % T) by position * theta^(-2i/d_k).
void turn(std::vector<double>& x, int64_t rows, int64_t T, int64_t heads, int64_t dk, double theta) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t h = 0; h < heads; ++h)
      for (int64_t i = 0; i < dk / 2; ++i) {
        const double angle = static_cast<double>(r % T) * std::pow(theta, -2.0 * static_cast<double>(i) / dk);
        double& a = x[(r * heads + h) * dk + i];
        double& b = x[(r * heads + h) * dk + i + dk / 2];
        const double a0 = a, b0 = b;
        a = a0 * std::cos(angle) - b0 * std::sin(angle), b = b0 * std::cos(angle) + a0 * std::sin(angle);
      }
}

// The definition, for query input xq [B, Tq, d] and key/value input xkv [B, Tk, d].
Reference attention(const MultiheadAttention& a, const Tensor& xq, const Tensor& xkv, const Allowed& allowed,
                    double rotary_theta = 0) {
  const int64_t B = xq.size(0), Tq = xq.size(1), Tk = xkv.size(1), d = a.d_model(), H = a.heads(), N = a.kv_heads(),
                dk = a.head_dim();
  const std::vector<double> w = values(a.in_proj_weight.value()), wo = values(a.out_proj->weight.value());
  const std::vector<double> b = a.in_proj_bias.defined() ? values(a.in_proj_bias.value()) : std::vector<double>();
  const std::vector<double> bo = a.out_proj->bias.defined() ? values(a.out_proj->bias.value()) : std::vector<double>();
  std::vector<double> q = project(values(xq), B * Tq, d, w, b, 0, H * dk);  // [B, Tq, H, dk]
  std::vector<double> k = project(values(xkv), B * Tk, d, w, b, H * dk, N * dk);
  const std::vector<double> v = project(values(xkv), B * Tk, d, w, b, (H + N) * dk, N * dk);
  if (rotary_theta > 0) turn(q, B * Tq, Tq, H, dk, rotary_theta), turn(k, B * Tk, Tk, N, dk, rotary_theta);
  Reference ref{std::vector<double>(static_cast<size_t>(B * Tq * d)),
                std::vector<double>(static_cast<size_t>(B * H * Tq * Tk))};
  std::vector<double> merged(static_cast<size_t>(H * dk));
  for (int64_t bi = 0; bi < B; ++bi)
    for (int64_t t = 0; t < Tq; ++t) {
      for (int64_t h = 0; h < H; ++h) {
        const int64_t n = h / (H / N);  // the key/value head this query head reads
        std::vector<double> score(static_cast<size_t>(Tk));
        double top = -INFINITY, total = 0;
        for (int64_t s = 0; s < Tk; ++s) {
          double dot = 0;
          for (int64_t j = 0; j < dk; ++j)
            dot += q[((bi * Tq + t) * H + h) * dk + j] * k[((bi * Tk + s) * N + n) * dk + j];
          score[s] = allowed(bi, t, s) ? dot / std::sqrt(static_cast<double>(dk)) : -INFINITY;
          top = std::max(top, score[s]);
        }
        for (double& e : score) total += (e = std::exp(e - top));
        for (int64_t j = 0; j < dk; ++j) {
          double o = 0;
          for (int64_t s = 0; s < Tk; ++s) o += score[s] / total * v[((bi * Tk + s) * N + n) * dk + j];
          merged[h * dk + j] = o;
        }
        for (int64_t s = 0; s < Tk; ++s) ref.weights[((bi * H + h) * Tq + t) * Tk + s] = score[s] / total;
      }
      for (int64_t e = 0; e < d; ++e) {  // Concat(head_1, ..., head_H) W^O + b^O
        double o = bo.empty() ? 0 : bo[e];
        for (int64_t i = 0; i < H * dk; ++i) o += merged[i] * wo[e * H * dk + i];
        ref.output[(bi * Tq + t) * d + e] = o;
      }
    }
  return ref;
}

// An attention of the shape asked for, every parameter drawn from U(-1, 1) (biases too, so none is 0).
std::shared_ptr<MultiheadAttention> make(int64_t d, int64_t H, AttentionShape shape, uint64_t seed) {
  auto a = std::make_shared<MultiheadAttention>(d, H, 0.0, skip_init, nullptr, DType::Float64, shape);
  for (const auto& [name, p] : a->named_parameters()) {
    Tensor v = p.value();
    v.copy_(rnd(p.shape(), seed++));
  }
  return a;
}

void check_close(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) CHECK(got[i] == Approx(want[i]).margin(tol));
}

Tensor bool_mask(const Allowed& allowed, int64_t B, int64_t T, int64_t S) {
  std::vector<int64_t> v;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t s = 0; s < S; ++s) v.push_back(allowed(b, t, s) ? 1 : 0);
  return ne(from_vector(v, {B, T, S}), zeros({}, DType::Int64));
}

}  // namespace gqa_test

TEST_CASE("grouped-query attention: H 4, N 2 and N 1 against the definition, causal and padding masks") {
  const int64_t B = 2, T = 4, S = 5, d = 12, H = 4;
  const Tensor x = rnd({B, T, d}, 100), memory = rnd({B, S, d}, 101);
  const gqa_test::Allowed causal = [](int64_t, int64_t t, int64_t s) { return s <= t; };
  const gqa_test::Allowed padding = [](int64_t b, int64_t, int64_t s) { return b == 0 || s < 3; };  // row 1: 3 real
  const gqa_test::Allowed all = [](int64_t, int64_t, int64_t) { return true; };
  const Tensor causal_mask = gqa_test::bool_mask(causal, 1, T, T);    // [1, T, T]
  const Tensor padding_mask = gqa_test::bool_mask(padding, B, 1, S);  // [B, 1, S]
  REQUIRE(padding_mask.shape() == Shape{B, 1, S});
  for (int64_t N : {2, 1})
    for (Bias bias : {Bias::All, Bias::None, Bias::QKV})
      for (int64_t head_dim : {0, 5}) {
        INFO("N " << N << ", bias " << bias_name(bias) << ", head_dim " << head_dim);
        const auto held = gqa_test::make(d, H, {N, head_dim, bias}, 200 + 10 * static_cast<uint64_t>(N));
        const MultiheadAttention& a = *held;
        REQUIRE(a.in_proj_weight.shape() == Shape{(H + 2 * N) * a.head_dim(), d});
        const Variable xv(x), mv(memory);
        const Attention self = a.forward(xv, xv, xv, causal_mask);
        const gqa_test::Reference want_self = gqa_test::attention(a, x, x, causal);
        gqa_test::check_close(values(self.output.value()), want_self.output, 1e-12);
        REQUIRE(self.weights.shape() == Shape{B, H, T, T});
        gqa_test::check_close(values(self.weights), want_self.weights, 1e-12);
        const Attention cross = a.forward(xv, mv, mv, padding_mask);
        const gqa_test::Reference want_cross = gqa_test::attention(a, x, memory, padding);
        gqa_test::check_close(values(cross.output.value()), want_cross.output, 1e-12);
        gqa_test::check_close(values(cross.weights), want_cross.weights, 1e-12);
        gqa_test::check_close(values(a.forward(xv, mv, mv).output.value()),
                              gqa_test::attention(a, x, memory, all).output, 1e-12);
        // a [B, H, T, T] mask (one per head): head 1 sees only itself, the others causally
        const gqa_test::Allowed per_head = [](int64_t, int64_t t, int64_t s) { return s <= t; };
        std::vector<int64_t> heads_mask;
        for (int64_t bi = 0; bi < B; ++bi)
          for (int64_t h = 0; h < H; ++h)
            for (int64_t t = 0; t < T; ++t)
              for (int64_t s = 0; s < T; ++s) heads_mask.push_back(h == 1 ? s == t : per_head(bi, t, s));
        const Attention masked =
            a.forward(xv, xv, xv, ne(from_vector(heads_mask, {B, H, T, T}), zeros({}, DType::Int64)));
        const std::vector<double> w = values(masked.weights);
        for (int64_t bi = 0; bi < B; ++bi)
          for (int64_t t = 0; t < T; ++t) {
            CHECK(w[((bi * H + 1) * T + t) * T + t] == Approx(1.0).margin(1e-15));  // head 1: itself only
            CHECK(w[((bi * H + 2) * T + t) * T + 0] ==
                  Approx(want_self.weights[((bi * H + 2) * T + t) * T]).margin(1e-12));
          }
      }
}

TEST_CASE(
    "grouped-query attention: with N = H, the multi-head path; with N < H, the same as N = H with the heads repeated") {
  const int64_t B = 2, T = 3, d = 8, H = 4;
  const Tensor x = rnd({B, T, d}, 110);
  const Variable xv(x);
  const Tensor mask = gqa_test::bool_mask([](int64_t, int64_t t, int64_t s) { return s <= t; }, 1, T, T);
  // kv_heads 4 given, and 0 (as many as heads): one path, the same numbers, the same names and shapes
  const auto given = gqa_test::make(d, H, {H, 0, Bias::All}, 300), plain = gqa_test::make(d, H, {0, 0, Bias::All}, 300);
  CHECK(plain->kv_heads() == H);
  CHECK(values(given->forward(xv, xv, xv, mask).output.value()) ==
        values(plain->forward(xv, xv, xv, mask).output.value()));
  // N key/value heads, and an H-head attention whose key/value head h is the grouped one's h / (H / N):
  // the grouped path (stacked queries) and the multi-head path must agree.
  for (int64_t N : {2, 1}) {
    INFO("N " << N);
    const auto grouped_ptr = gqa_test::make(d, H, {N, 0, Bias::All}, 400);
    const MultiheadAttention& grouped = *grouped_ptr;
    const auto repeated_ptr = gqa_test::make(d, H, {0, 0, Bias::All}, 500);
    MultiheadAttention& repeated = *repeated_ptr;
    const int64_t dk = d / H, G = H / N;
    Tensor w = repeated.in_proj_weight.value(), b = repeated.in_proj_bias.value();
    const Tensor gw = grouped.in_proj_weight.value(), gb = grouped.in_proj_bias.value();
    w.narrow(0, 0, H * dk).copy_(gw.narrow(0, 0, H * dk));  // W^Q as it is
    b.narrow(0, 0, H * dk).copy_(gb.narrow(0, 0, H * dk));
    for (int64_t part = 0; part < 2; ++part)  // W^K, then W^V
      for (int64_t h = 0; h < H; ++h) {
        const int64_t from = (H + part * N + h / G) * dk, to = (H + part * H + h) * dk;
        w.narrow(0, to, dk).copy_(gw.narrow(0, from, dk));
        b.narrow(0, to, dk).copy_(gb.narrow(0, from, dk));
      }
    Tensor wo = repeated.out_proj->weight.value(), bo = repeated.out_proj->bias.value();
    wo.copy_(grouped.out_proj->weight.value()), bo.copy_(grouped.out_proj->bias.value());
    const Attention a = grouped.forward(xv, xv, xv, mask), r = repeated.forward(xv, xv, xv, mask);
    gqa_test::check_close(values(a.output.value()), values(r.output.value()), 1e-13);
    gqa_test::check_close(values(a.weights), values(r.weights), 1e-13);
  }
}

TEST_CASE("grouped-query attention: rotary turns self-attention's queries and keys, not cross-attention's") {
  const int64_t B = 1, T = 5, S = 3, d = 16, H = 4, N = 2;
  const auto held = gqa_test::make(d, H, {N, 6, Bias::None}, 600);  // d_k 6: W^O [16, 24]
  MultiheadAttention& a = *held;
  CHECK(a.out_proj->weight.shape() == Shape{d, H * 6});
  CHECK_FALSE(a.in_proj_bias.defined());
  LayerConfig layer;
  layer.d_model = d, layer.heads = H, layer.max_len = 8, layer.dtype = DType::Float64;
  layer.block.head_dim = 6, layer.block.rope_theta = 1000;
  a.use_rotary(std::make_shared<const RotaryTables>(rotary_tables(layer)));
  const Tensor x = rnd({B, T, d}, 120), memory = rnd({B, S, d}, 121);
  const gqa_test::Allowed causal = [](int64_t, int64_t t, int64_t s) { return s <= t; };
  const Variable xv(x), mv(memory);
  gqa_test::check_close(values(a.forward(xv, xv, xv, gqa_test::bool_mask(causal, 1, T, T)).output.value()),
                        gqa_test::attention(a, x, x, causal, 1000).output, 1e-12);
  const gqa_test::Allowed all = [](int64_t, int64_t, int64_t) { return true; };
  gqa_test::check_close(values(a.forward(xv, mv, mv).output.value()), gqa_test::attention(a, x, memory, all).output,
                        1e-12);
}

TEST_CASE("grouped-query attention: the KV cache holds N heads, and forward_step equals forward") {
  const int64_t B = 2, T = 6, d = 8, H = 4;
  const Tensor x = rnd({B, T, d}, 130);
  const gqa_test::Allowed causal = [](int64_t, int64_t t, int64_t s) { return s <= t; };
  for (int64_t N : {2, 1}) {
    INFO("N " << N);
    const auto held = gqa_test::make(d, H, {N, 0, Bias::QKV}, 700);
    const MultiheadAttention& a = *held;
    const std::vector<double> full = gqa_test::attention(a, x, x, causal).output;  // [B, T, d]
    KVCache cache;
    std::vector<std::vector<double>> steps;
    steps.push_back(values(a.forward_step(Variable(x.narrow(1, 0, 1)), cache).output.value()));
    CHECK(cache.k.shape() == Shape{B, N, 1, d / H});
    steps.push_back(values(a.forward_step(Variable(x.narrow(1, 1, 3)), cache).output.value()));  // three at once
    for (int64_t t = 4; t < T; ++t)
      steps.push_back(values(a.forward_step(Variable(x.narrow(1, t, 1)), cache).output.value()));
    CHECK(cache.k.size(1) == N);
    CHECK(cache.v.size(1) == N);
    CHECK(cache.length() == T);
    const int64_t widths[] = {1, 3, 1, 1};
    int64_t t0 = 0;
    for (size_t i = 0; i < steps.size(); ++i) {
      const int64_t tn = widths[i];
      for (int64_t bi = 0; bi < B; ++bi)
        for (int64_t j = 0; j < tn * d; ++j)
          CHECK(steps[i][bi * tn * d + j] == Approx(full[(bi * T + t0) * d + j]).margin(1e-12));
      t0 += tn;
    }
  }
}
