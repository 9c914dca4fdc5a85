// An independent float64 Llama, written from the published equations and transformers'
// modeling_llama.py (Qwen2 and Mistral compute the same, with their biases), over the hub's own
// tensor names and layouts: nothing of gradformer's model code is used. The import tests compare
// gradformer's logits with it.
//
//   h = E[ids]
//   each layer:  x = RMSNorm(h) = h / sqrt(mean(h^2) + eps) * g_in
//                q = x Wq^T + bq, k = x Wk^T + bk, v = x Wv^T + bv     (H, N, N heads of hd)
//                q, k turned by position: q * cos + rotate_half(q) * sin, rotate_half(x) = (-x2, x1),
//                  cos and sin of t * f_i repeated for both halves, f_i = theta^(-2i/hd) (llama3-scaled)
//                head j reads key/value head j / (H / N); softmax(q k^T / sqrt(hd)) causal; v
//                h = h + concat(heads) Wo^T (+ bo)
//                x = RMSNorm(h) * g_post;  h = h + (silu(x Wg^T) * (x Wu^T)) Wd^T
//   logits = RMSNorm(h) * g_final  lm_head^T (tied: E^T)
#pragma once

#include <cmath>
#include <numbers>
#include <string>
#include <vector>

#include "nn/safetensors.h"
#include "tensor/all.h"

namespace llama_reference {

using gradformer::StateDict;
using gradformer::Tensor;
using Matrix = std::vector<std::vector<double>>;  // [rows][cols]

struct Sizes {
  int64_t d = 0, heads = 0, kv_heads = 0, head_dim = 0, ff = 0, layers = 0;
  double eps = 1e-5, theta = 10000;
  double scale_factor = 0, low = 1, high = 4;  // llama3 scaling when scale_factor > 0
  int64_t original = 8192;
  bool tied = false;
};

inline Matrix matrix(const StateDict& s, const std::string& name) {
  const Tensor t = s.at(name).to(gradformer::DType::Float64).contiguous();
  const int64_t rows = t.dim() == 1 ? 1 : t.size(0), cols = t.size(-1);
  Matrix m(static_cast<size_t>(rows), std::vector<double>(static_cast<size_t>(cols)));
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) m[r][c] = t.data<double>()[r * cols + c];
  return m;
}

// x [T][in] W^T [out][in] + b -> [T][out]
inline Matrix linear(const Matrix& x, const Matrix& w, const std::vector<double>* b = nullptr) {
  Matrix y(x.size(), std::vector<double>(w.size(), 0.0));
  for (size_t t = 0; t < x.size(); ++t)
    for (size_t o = 0; o < w.size(); ++o) {
      double sum = b ? (*b)[o] : 0.0;
      for (size_t i = 0; i < w[o].size(); ++i) sum += x[t][i] * w[o][i];
      y[t][o] = sum;
    }
  return y;
}

inline Matrix rms_norm(const Matrix& x, const std::vector<double>& g, double eps) {
  Matrix y = x;
  for (auto& row : y) {
    double ms = 0;
    for (double v : row) ms += v * v;
    const double r = 1 / std::sqrt(ms / static_cast<double>(row.size()) + eps);
    for (size_t i = 0; i < row.size(); ++i) row[i] *= r * g[i];
  }
  return y;
}

// transformers' _compute_llama3_parameters, written out
inline std::vector<double> frequencies(const Sizes& s) {
  std::vector<double> f;
  for (int64_t i = 0; i < s.head_dim / 2; ++i) f.push_back(1.0 / std::pow(s.theta, 2.0 * i / s.head_dim));
  if (s.scale_factor <= 0) return f;
  const double low_wavelen = s.original / s.low, high_wavelen = s.original / s.high;
  for (double& fi : f) {
    const double wavelen = 2 * std::numbers::pi / fi;
    const double scaled = wavelen > low_wavelen ? fi / s.scale_factor : fi;
    const double smooth = (s.original / wavelen - s.low) / (s.high - s.low);
    const bool medium = !(wavelen < high_wavelen) && !(wavelen > low_wavelen);
    fi = medium ? (1 - smooth) * scaled / s.scale_factor + smooth * scaled : scaled;
  }
  return f;
}

// columns [head * hd, (head + 1) * hd) of every row, turned by each row's position
inline void rope(Matrix& x, int64_t heads, const Sizes& s) {
  const std::vector<double> f = frequencies(s);
  const int64_t half = s.head_dim / 2;
  for (size_t t = 0; t < x.size(); ++t)
    for (int64_t h = 0; h < heads; ++h) {
      double* v = x[t].data() + h * s.head_dim;
      std::vector<double> out(static_cast<size_t>(s.head_dim));
      for (int64_t i = 0; i < s.head_dim; ++i) {
        const double angle = static_cast<double>(t) * f[static_cast<size_t>(i % half)];
        const double rotated = i < half ? -v[i + half] : v[i - half];  // rotate_half
        out[static_cast<size_t>(i)] = v[i] * std::cos(angle) + rotated * std::sin(angle);
      }
      std::copy(out.begin(), out.end(), v);
    }
}

inline const std::vector<double>* bias(const StateDict& state, const std::string& name, std::vector<double>& keep) {
  if (!state.count(name)) return nullptr;
  keep = matrix(state, name)[0];
  return &keep;
}

inline Matrix attention(const StateDict& st, const std::string& l, const Matrix& x, const Sizes& s) {
  std::vector<double> bq, bk, bv, bo;
  Matrix q = linear(x, matrix(st, l + "self_attn.q_proj.weight"), bias(st, l + "self_attn.q_proj.bias", bq));
  Matrix k = linear(x, matrix(st, l + "self_attn.k_proj.weight"), bias(st, l + "self_attn.k_proj.bias", bk));
  const Matrix v = linear(x, matrix(st, l + "self_attn.v_proj.weight"), bias(st, l + "self_attn.v_proj.bias", bv));
  rope(q, s.heads, s), rope(k, s.kv_heads, s);
  const size_t T = x.size();
  Matrix heads(T, std::vector<double>(static_cast<size_t>(s.heads * s.head_dim), 0.0));
  for (int64_t h = 0; h < s.heads; ++h) {
    const int64_t g = h / (s.heads / s.kv_heads);  // the key/value head of query head h
    for (size_t t = 0; t < T; ++t) {
      std::vector<double> p(t + 1);
      double most = -1e300, total = 0;
      for (size_t u = 0; u <= t; ++u) {
        double dot = 0;
        for (int64_t i = 0; i < s.head_dim; ++i) dot += q[t][h * s.head_dim + i] * k[u][g * s.head_dim + i];
        p[u] = dot / std::sqrt(static_cast<double>(s.head_dim));
        most = std::max(most, p[u]);
      }
      for (double& e : p) total += (e = std::exp(e - most));
      for (size_t u = 0; u <= t; ++u)
        for (int64_t i = 0; i < s.head_dim; ++i)
          heads[t][h * s.head_dim + i] += p[u] / total * v[u][g * s.head_dim + i];
    }
  }
  return linear(heads, matrix(st, l + "self_attn.o_proj.weight"), bias(st, l + "self_attn.o_proj.bias", bo));
}

inline Matrix logits(const StateDict& st, const std::vector<int64_t>& ids, const Sizes& s) {
  const Matrix E = matrix(st, "model.embed_tokens.weight");
  Matrix h;
  for (int64_t id : ids) h.push_back(E[static_cast<size_t>(id)]);
  for (int64_t layer = 0; layer < s.layers; ++layer) {
    const std::string l = "model.layers." + std::to_string(layer) + ".";
    const Matrix a = attention(st, l, rms_norm(h, matrix(st, l + "input_layernorm.weight")[0], s.eps), s);
    for (size_t t = 0; t < h.size(); ++t)
      for (size_t i = 0; i < h[t].size(); ++i) h[t][i] += a[t][i];
    const Matrix x = rms_norm(h, matrix(st, l + "post_attention_layernorm.weight")[0], s.eps);
    Matrix gate = linear(x, matrix(st, l + "mlp.gate_proj.weight"));
    const Matrix up = linear(x, matrix(st, l + "mlp.up_proj.weight"));
    for (size_t t = 0; t < gate.size(); ++t)
      for (size_t i = 0; i < gate[t].size(); ++i) gate[t][i] = gate[t][i] / (1 + std::exp(-gate[t][i])) * up[t][i];
    const Matrix m = linear(gate, matrix(st, l + "mlp.down_proj.weight"));
    for (size_t t = 0; t < h.size(); ++t)
      for (size_t i = 0; i < h[t].size(); ++i) h[t][i] += m[t][i];
  }
  return linear(rms_norm(h, matrix(st, "model.norm.weight")[0], s.eps), s.tied ? E : matrix(st, "lm_head.weight"));
}

}  // namespace llama_reference
