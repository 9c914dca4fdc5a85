// GPT-2's weights imported (transformer/train/import_gpt2.h), checked against GPT-2's forward pass
// written here in plain float64 loops straight from its definition, on the ORIGINAL tensors in
// GPT-2's Conv1D layout (x W + b with W [in, out]): if a transpose, the q | k | v split, the
// LayerNorm epsilon, the activation or the unscaled embedding were wrong, the logits would differ.
// The files are written here in GPT-2's formats: a small random model, and a tokenizer of the 256
// bytes in GPT-2's bytes_to_unicode order plus a few merges.
#include <cmath>
#include <map>
#include <random>

#include "training_helpers.h"
#include "transformer/model/masks.h"
#include "transformer/train/import_gpt2.h"

using namespace gradformer;
using test::TempDir;

namespace {

// ---- GPT-2's tokenizer files ----------------------------------------------------------------------

std::string utf8(char32_t cp) {
  std::string out;
  if (cp < 0x80) return out += static_cast<char>(cp), out;
  if (cp < 0x800) return out += static_cast<char>(0xC0 | (cp >> 6)), out += static_cast<char>(0x80 | (cp & 0x3F)), out;
  out += static_cast<char>(0xE0 | (cp >> 12)), out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
  return out += static_cast<char>(0x80 | (cp & 0x3F)), out;
}

// GPT-2's encoder.py, bytes_to_unicode(): the printable bytes stand for themselves, in this order,
// then the others take 256, 257, ... The byte tokens' ids in encoder.json follow this order.
std::vector<std::pair<int, char32_t>> bytes_to_unicode() {
  std::vector<std::pair<int, char32_t>> table;
  std::vector<bool> printable(256, false);
  for (int b = '!'; b <= '~'; ++b) printable[b] = true;
  for (int b = 0xA1; b <= 0xAC; ++b) printable[b] = true;
  for (int b = 0xAE; b <= 0xFF; ++b) printable[b] = true;
  for (int b = 0; b < 256; ++b)
    if (printable[b]) table.emplace_back(b, static_cast<char32_t>(b));
  char32_t next = 256;
  for (int b = 0; b < 256; ++b)
    if (!printable[b]) table.emplace_back(b, next++);
  return table;
}

// "Ġt" in GPT-2's byte characters; space is 0x120.
const std::vector<std::pair<std::string, std::string>> kMerges = {
    {"\xC4\xA0", "t"}, {"h", "e"}, {"\xC4\xA0t", "he"}, {"a", "n"}, {"\xC4\xA0", "a"}};

// encoder.json + vocab.bpe (or vocab.json + merges.txt) of the 256 bytes and the first `merges`.
void write_tokenizer(const std::filesystem::path& dir, const char* tokens_name, const char* merges_name,
                     size_t merges = kMerges.size()) {
  std::filesystem::create_directories(dir);
  std::string json = "{", bpe = "#version: 0.2\n";
  int64_t id = 0;
  const auto add = [&](const std::string& token) {
    const std::string key = token == "\"" ? "\\\"" : token == "\\" ? "\\\\" : token;
    json += (id ? ", \"" : "\"") + key + "\": " + std::to_string(id);
    ++id;
  };
  for (const auto& [byte, cp] : bytes_to_unicode()) add(utf8(cp));
  for (size_t m = 0; m < merges; ++m)
    add(kMerges[m].first + kMerges[m].second), bpe += kMerges[m].first + " " + kMerges[m].second + "\n";
  test::write_text((dir / tokens_name).string(), json + "}");
  test::write_text((dir / merges_name).string(), bpe);
}
constexpr int64_t kVocab = 256 + 5;

// ---- a random GPT-2 in its own layout ---------------------------------------------------------------

struct Gpt2 {
  int64_t V = kVocab, d = 16, n_ctx = 12, layers = 3, heads = 4, d_ff = 64;
  double eps = 1e-5;
  bool erf_gelu = false;
  std::map<std::string, std::vector<double>> w;  // GPT-2's names, float32 values held exactly
  std::map<std::string, Shape> shapes;

  explicit Gpt2(uint64_t seed, bool untied_head = false) {
    std::mt19937_64 gen(seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    const auto add = [&](const std::string& name, Shape shape, double mean, double scale) {
      int64_t n = 1;
      for (int64_t s : shape) n *= s;
      std::vector<double>& v = w[name];
      for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<float>(mean + scale * normal(gen)));
      shapes[name] = std::move(shape);
    };
    add("wte.weight", {V, d}, 0, 0.5), add("wpe.weight", {n_ctx, d}, 0, 0.3);
    for (int64_t i = 0; i < layers; ++i) {
      const std::string h = "h." + std::to_string(i) + ".";
      add(h + "ln_1.weight", {d}, 1, 0.2), add(h + "ln_1.bias", {d}, 0, 0.1);
      add(h + "attn.c_attn.weight", {d, 3 * d}, 0, 0.4), add(h + "attn.c_attn.bias", {3 * d}, 0, 0.1);
      add(h + "attn.c_proj.weight", {d, d}, 0, 0.3), add(h + "attn.c_proj.bias", {d}, 0, 0.1);
      add(h + "ln_2.weight", {d}, 1, 0.2), add(h + "ln_2.bias", {d}, 0, 0.1);
      add(h + "mlp.c_fc.weight", {d, d_ff}, 0, 0.3), add(h + "mlp.c_fc.bias", {d_ff}, 0, 0.1);
      add(h + "mlp.c_proj.weight", {d_ff, d}, 0, 0.15), add(h + "mlp.c_proj.bias", {d}, 0, 0.1);
    }
    add("ln_f.weight", {d}, 1, 0.2), add("ln_f.bias", {d}, 0, 0.1);
    if (untied_head) add("lm_head.weight", {V, d}, 0, 0.5);
  }

  // The state dict as the hub stores it: "transformer." before each name when `prefix`, the
  // causal-mask buffers of every block, lm_head.weight (wte's copy when tied).
  StateDict state_dict(bool prefix, DType dtype = DType::Float32, bool tied_head = true) const {
    StateDict out;
    const std::string p = prefix ? "transformer." : "";
    for (const auto& [name, v] : w)
      out[name == "lm_head.weight" ? name : p + name] = from_vector<double>(v, shapes.at(name)).to(dtype);
    for (int64_t i = 0; i < layers; ++i) {
      out[p + "h." + std::to_string(i) + ".attn.bias"] = causal_mask(n_ctx).to(dtype).reshape({1, 1, n_ctx, n_ctx});
      out[p + "h." + std::to_string(i) + ".attn.masked_bias"] = from_vector<double>({-1e4}, {}).to(dtype);
    }
    if (tied_head && !w.count("lm_head.weight")) out["lm_head.weight"] = out.at(p + "wte.weight");
    return out;
  }

  const double* at(const std::string& name) const { return w.at(name).data(); }
};

// ---- GPT-2's forward pass in float64, from its definition -------------------------------------------

using Rows = std::vector<std::vector<double>>;  // [T, n]

// x W + b, W [in, out] as GPT-2's Conv1D stores it.
Rows conv1d(const Rows& x, const double* W, const double* b, int64_t in, int64_t out) {
  Rows y(x.size(), std::vector<double>(out));
  for (size_t t = 0; t < x.size(); ++t)
    for (int64_t o = 0; o < out; ++o) {
      double s = b[o];
      for (int64_t i = 0; i < in; ++i) s += x[t][i] * W[i * out + o];
      y[t][o] = s;
    }
  return y;
}

// LayerNorm: (x - mean) / sqrt(var + eps) * g + b, the variance biased (divided by d).
Rows layer_norm(const Rows& x, const double* g, const double* b, double eps) {
  Rows y = x;
  for (auto& row : y) {
    const double n = static_cast<double>(row.size());
    double mean = 0, var = 0;
    for (double v : row) mean += v / n;
    for (double v : row) var += (v - mean) * (v - mean) / n;
    for (size_t j = 0; j < row.size(); ++j) row[j] = (row[j] - mean) / std::sqrt(var + eps) * g[j] + b[j];
  }
  return y;
}

double gelu(double x, bool erf_form) {
  if (erf_form) return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  const double pi = std::acos(-1.0);
  return 0.5 * x * (1 + std::tanh(std::sqrt(2 / pi) * (x + 0.044715 * x * x * x)));
}

// softmax(q k^T / sqrt(d_head) + causal mask) v for each head; q | k | v are qkv's thirds.
Rows attention(const Rows& qkv, int64_t d, int64_t heads) {
  const int64_t T = static_cast<int64_t>(qkv.size()), dh = d / heads;
  Rows out(T, std::vector<double>(d));
  for (int64_t h = 0; h < heads; ++h)
    for (int64_t t = 0; t < T; ++t) {
      std::vector<double> scores(t + 1);
      double top = -1e300, total = 0;
      for (int64_t u = 0; u <= t; ++u) {
        double s = 0;
        for (int64_t c = 0; c < dh; ++c) s += qkv[t][h * dh + c] * qkv[u][d + h * dh + c];
        scores[u] = s / std::sqrt(static_cast<double>(dh));
        top = std::max(top, scores[u]);
      }
      for (double& s : scores) total += (s = std::exp(s - top));
      for (int64_t u = 0; u <= t; ++u)
        for (int64_t c = 0; c < dh; ++c) out[t][h * dh + c] += scores[u] / total * qkv[u][2 * d + h * dh + c];
    }
  return out;
}

void add_to(Rows& h, const Rows& x) {
  for (size_t t = 0; t < h.size(); ++t)
    for (size_t j = 0; j < h[t].size(); ++j) h[t][j] += x[t][j];
}

Rows reference_logits(const Gpt2& m, const std::vector<int64_t>& ids) {
  const int64_t d = m.d, T = static_cast<int64_t>(ids.size());
  Rows h(T, std::vector<double>(d));
  for (int64_t t = 0; t < T; ++t)  // no sqrt(d) scaling
    for (int64_t j = 0; j < d; ++j) h[t][j] = m.at("wte.weight")[ids[t] * d + j] + m.at("wpe.weight")[t * d + j];
  for (int64_t i = 0; i < m.layers; ++i) {
    const std::string p = "h." + std::to_string(i) + ".";
    const Rows a = layer_norm(h, m.at(p + "ln_1.weight"), m.at(p + "ln_1.bias"), m.eps);
    const Rows qkv = conv1d(a, m.at(p + "attn.c_attn.weight"), m.at(p + "attn.c_attn.bias"), d, 3 * d);
    add_to(h, conv1d(attention(qkv, d, m.heads), m.at(p + "attn.c_proj.weight"), m.at(p + "attn.c_proj.bias"), d, d));
    Rows f = conv1d(layer_norm(h, m.at(p + "ln_2.weight"), m.at(p + "ln_2.bias"), m.eps), m.at(p + "mlp.c_fc.weight"),
                    m.at(p + "mlp.c_fc.bias"), d, m.d_ff);
    for (auto& row : f)
      for (double& v : row) v = gelu(v, m.erf_gelu);
    add_to(h, conv1d(f, m.at(p + "mlp.c_proj.weight"), m.at(p + "mlp.c_proj.bias"), m.d_ff, d));
  }
  h = layer_norm(h, m.at("ln_f.weight"), m.at("ln_f.bias"), m.eps);
  const double* out = m.w.count("lm_head.weight") ? m.at("lm_head.weight") : m.at("wte.weight");
  Rows logits(T, std::vector<double>(m.V));
  for (int64_t t = 0; t < T; ++t)
    for (int64_t v = 0; v < m.V; ++v)
      for (int64_t j = 0; j < d; ++j) logits[t][v] += h[t][j] * out[v * d + j];
  return logits;
}

// The largest |model - reference| over a few sequences, the longest n_ctx tokens.
double largest_difference(const DecoderOnly& model, const Gpt2& m) {
  const std::vector<std::vector<int64_t>> sequences = {
      {5}, {258, 3, 100, 7, 260}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {kVocab - 1, 64, 64, 64, 17, 255, 256}};
  double worst = 0;
  for (const auto& ids : sequences) {
    const int64_t T = static_cast<int64_t>(ids.size());
    const Tensor x = from_vector<int64_t>(ids, {1, T});
    const std::vector<double> got =
        model.forward(x, causal_mask(T).unsqueeze(0)).value().contiguous().to_vector<double>();
    const Rows want = reference_logits(m, ids);
    for (int64_t t = 0; t < T; ++t)
      for (int64_t v = 0; v < m.V; ++v) worst = std::max(worst, std::abs(got[t * m.V + v] - want[t][v]));
  }
  return worst;
}

Gpt2Options heads(int64_t h) {
  Gpt2Options o;
  o.heads = h;
  return o;
}

Tokenizer tiny_tokenizer(const TempDir& dir) {
  write_tokenizer(dir.path() / "tok", "encoder.json", "vocab.bpe");
  return read_gpt2_tokenizer((dir.path() / "tok").string()).tokenizer;
}

}  // namespace

TEST_CASE(
    "import_gpt2: the logits are GPT-2's, from a float64 forward on the Conv1D tensors, with or without the prefix") {
  TempDir dir("gpt2-import");
  const Tokenizer tokenizer = tiny_tokenizer(dir);
  const Gpt2 m(1);
  for (const bool prefix : {false, true}) {
    Gpt2Import imported = import_gpt2(m.state_dict(prefix), "gpt2.safetensors", tokenizer, heads(m.heads));
    imported.model->eval();
    const TransformerConfig& c = imported.info.config;
    CHECK(c.arch == Architecture::DecoderOnly);
    CHECK(
        (c.tgt_vocab == kVocab && c.d_model == 16 && c.layers == 3 && c.heads == 4 && c.d_ff == 64 && c.max_len == 12));
    CHECK((c.norm == NormPlacement::Pre && c.positions == Positions::Learned && c.activation == Activation::GELUTanh));
    CHECK((!c.scale_embedding && c.tie_embeddings && c.norm_eps == 1e-5 && c.dtype == DType::Float32));
    CHECK(imported.prefixed == prefix);
    CHECK(imported.ignored.size() == 6);  // attn.bias and attn.masked_bias of 3 blocks
    CHECK(largest_difference(*imported.model, m) < 1e-5);
  }
}

TEST_CASE("import_gpt2: float64 files agree to 1e-12; an untied lm_head is the output; config.json's eps and gelu") {
  TempDir dir("gpt2-import-f64");
  const Tokenizer tokenizer = tiny_tokenizer(dir);
  Gpt2 two_heads(2);
  two_heads.heads = 2;
  Gpt2Import f64 = import_gpt2(two_heads.state_dict(true, DType::Float64), "f64", tokenizer, heads(2));
  f64.model->eval();
  CHECK(f64.info.config.dtype == DType::Float64);
  CHECK(largest_difference(*f64.model, two_heads) < 1e-12);

  Gpt2 untied(3, /*untied_head=*/true);
  Gpt2Import u = import_gpt2(untied.state_dict(false, DType::Float64), "untied", tokenizer, heads(4));
  u.model->eval();
  CHECK(!u.info.config.tie_embeddings);
  CHECK(largest_difference(*u.model, untied) < 1e-12);

  Gpt2 erf(4);
  erf.eps = 1e-3, erf.erf_gelu = true;
  Gpt2Options o = heads(4);
  o.config = parse_gpt2_config(R"({"activation_function": "gelu", "layer_norm_epsilon": 1e-3, "resid_pdrop": 0.25,
                                   "n_inner": null, "scale_attn_weights": true, "summary_activation": null})",
                               "config.json");
  Gpt2Import e = import_gpt2(erf.state_dict(false, DType::Float64), "erf", tokenizer, o);
  e.model->eval();
  CHECK((e.info.config.activation == Activation::GELU && e.info.config.norm_eps == 1e-3 &&
         e.info.config.dropout == 0.25));
  CHECK(largest_difference(*e.model, erf) < 1e-12);
}
