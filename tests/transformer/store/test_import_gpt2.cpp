// GPT-2's weights imported (transformer/store/import_gpt2.h), checked against GPT-2's forward pass
// written here in plain float64 loops straight from its definition, on the ORIGINAL tensors in
// GPT-2's Conv1D layout (x W + b with W [in, out]): if a transpose, the q | k | v split, the
// LayerNorm epsilon, the activation or the unscaled embedding were wrong, the logits would differ.
// The files are written here in GPT-2's formats: a small random model, and a tokenizer of the 256
// bytes in GPT-2's bytes_to_unicode order plus a few merges.
#include <sys/stat.h>

#include <cmath>
#include <map>
#include <random>

#include "../train/training_helpers.h"
#include "tensor/support/json.h"
#include "transformer/model/masks.h"
#include "transformer/store/import_gpt2.h"

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

// Each tensor's random values, mean and scale: LayerNorm gains about 1, biases small, matrices larger.
std::pair<double, double> mean_and_scale(const std::string& name) {
  const auto ends = [&](const char* tail) { return name.ends_with(tail); };
  if (name == "wte.weight") return {0, 0.5};
  if (ends("ln_1.weight") || ends("ln_2.weight") || name == "ln_f.weight") return {1, 0.2};
  if (ends(".bias")) return {0, 0.1};
  if (ends("attn.c_attn.weight")) return {0, 0.4};
  if (ends("mlp.c_proj.weight")) return {0, 0.15};
  return {0, 0.3};  // wpe, attn.c_proj, mlp.c_fc
}

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
    // GPT-2's names from the importer's table: were one misspelt, the forward pass below, which
    // spells each out, would not find it; were one mapped to the wrong parameter, the logits would differ.
    for (const Gpt2Name& name : gpt2_names({V, d, n_ctx, layers, d_ff})) {
      const auto [mean, scale] = mean_and_scale(name.gpt2);
      add(name.gpt2, name.shape, mean, scale);
    }
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
    CHECK(imported.transposed ==
          std::vector<std::string>{"attn.c_attn.weight [16, 48] -> self_attn.in_proj_weight [48, 16]",
                                   "attn.c_proj.weight [16, 16] -> self_attn.out_proj.weight [16, 16]",
                                   "mlp.c_fc.weight [16, 64] -> linear1.weight [64, 16]",
                                   "mlp.c_proj.weight [64, 16] -> linear2.weight [16, 64]"});
    CHECK(largest_difference(*imported.model, m) < 1e-5);
  }
}

TEST_CASE("import_gpt2: lm_head.weight a copy of wte is tied, one bit different it is the untied output") {
  TempDir dir("gpt2-import-lm-head");
  const Tokenizer tokenizer = tiny_tokenizer(dir);
  const Gpt2 m(9);
  StateDict s = m.state_dict(true, DType::Float32, /*tied_head=*/false);
  s["lm_head.weight"] = s.at("transformer.wte.weight").clone();  // its own storage, as in a file
  CHECK(import_gpt2(s, "copy", tokenizer, heads(4)).info.config.tie_embeddings);
  std::vector<float> values = s.at("lm_head.weight").to_vector<float>();
  values[17] = std::nextafter(values[17], 1.0f);
  s["lm_head.weight"] = from_vector<float>(values, {kVocab, 16});
  const Gpt2Import untied = import_gpt2(s, "changed", tokenizer, heads(4));
  CHECK(!untied.info.config.tie_embeddings);
  CHECK(untied.model->state_dict().at("generator.weight").to_vector<float>() == values);
}

TEST_CASE("import_gpt2: float64 files agree to 1e-12, an untied lm_head is the output, config.json's eps and gelu") {
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
  // The checkpoint keeps all of it: float64, the erf GELU, eps 1e-3, the unscaled embedding.
  save_checkpoint(dir / "erf.safetensors", *e.model, e.info.config, {}, e.info);
  LoadedDecoderOnly loaded = load_decoder_only_checkpoint(dir / "erf.safetensors");
  loaded.model->eval();
  CHECK(largest_difference(*loaded.model, erf) < 1e-12);
}

TEST_CASE("import_gpt2_files: the hub's files (vocab.json, merges.txt, config.json) to a checkpoint that loads back") {
  TempDir dir("gpt2-files");
  const Gpt2 m(5);
  write_tokenizer(dir.path(), "vocab.json", "merges.txt");
  save_safetensors(dir / "model.safetensors", m.state_dict(true), {{"format", "pt"}});
  test::write_text(dir / "config.json", R"({"activation_function": "gelu_new", "n_embd": 16, "n_head": 4, "n_layer": 3,
    "n_positions": 12, "n_ctx": 12, "vocab_size": 261, "layer_norm_epsilon": 1e-05, "resid_pdrop": 0.1,
    "architectures": ["GPT2LMHeadModel"], "task_specific_params": {"text-generation": {"do_sample": true}}})");
  Gpt2Files files;
  files.model = dir.path().string();  // the directory: its model.safetensors
  const Gpt2Import imported = import_gpt2_files(files);
  CHECK(imported.info.config.heads == 4);
  CHECK(imported.config_source == dir / "config.json");
  CHECK(imported.tokenizer_source ==
        message((dir.path() / "vocab.json").string(), " and ", (dir.path() / "merges.txt").string()));
  save_checkpoint(dir / "gpt2.safetensors", *imported.model, imported.info.config, {}, imported.info);

  LoadedDecoderOnly loaded = load_decoder_only_checkpoint(dir / "gpt2.safetensors");
  loaded.model->eval();
  CHECK(largest_difference(*loaded.model, m) < 1e-5);
  const Tokenizer on_files = Tokenizer::gpt2(BytePairEncoding::read_gpt2(dir / "vocab.json", dir / "merges.txt"));
  for (const std::string text : {" the an", "the theater", "Hello, world!\n\tthe end", "caf\xC3\xA9 \xF0\x9F\x98\x80"})
    CHECK(loaded.info.target_tokenizer.encode(text) == on_files.encode(text));
  // From first principles: "Ġthe" is merge 2 (id 258); in " an", a+n (rank 3) wins over Ġ+a (rank 4),
  // leaving the space alone: byte 32, the 33rd byte that does not print, id 188 + 32.
  CHECK(loaded.info.target_tokenizer.encode(" the an") == std::vector<int64_t>{258, 220, 259});
  CHECK(loaded.info.source_tokenizer == Tokenizer());  // a decoder-only model has one side, the target's
}

TEST_CASE("import_gpt2: each user error names the file, the tensor and the shapes") {
  TempDir dir("gpt2-errors");
  const Tokenizer tokenizer = tiny_tokenizer(dir);
  const Gpt2 m(6);
  const auto refused = [&](StateDict tensors, const Gpt2Options& o, const std::string& text) {
    CHECK_THROWS_MSG(import_gpt2(std::move(tensors), "gpt2.safetensors", tokenizer, o), CheckpointError, text);
  };
  StateDict s = m.state_dict(true);
  s.erase("transformer.h.1.ln_2.bias"), s.erase("transformer.ln_f.weight");
  refused(s, heads(4),
          "gpt2.safetensors: the tensors are not those of GPT-2 with V 261, d 16, n_ctx 12, 3 layers, d_ff 64:\n"
          "  missing: h.1.ln_2.bias [16]\n  missing: ln_f.weight [16]");
  s = m.state_dict(false);
  s["h.2.attn.c_attn.weight"] = s["h.2.attn.c_attn.weight"].transpose(0, 1).contiguous();  // a Linear's layout
  refused(s, heads(4),
          "mismatched: h.2.attn.c_attn.weight is [16, 48] float32 in GPT-2's layout, [48, 16] float32 in the file");
  s = m.state_dict(false);
  s["h.0.extra.weight"] = s["h.0.ln_1.weight"];
  refused(s, heads(4), "unexpected: h.0.extra.weight [16]");
  s = m.state_dict(false);
  s["lm_head.weight"] = zeros({kVocab, 8});
  refused(s, heads(4),
          "mismatched: lm_head.weight is [261, 16] float32 in GPT-2's layout, [261, 8] float32 in the file");
  s = m.state_dict(false);
  for (const std::string part :
       {"ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias", "attn.c_proj.weight", "attn.c_proj.bias",
        "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight", "mlp.c_fc.bias", "mlp.c_proj.weight", "mlp.c_proj.bias",
        "attn.bias", "attn.masked_bias"})
    s.erase("h.1." + part);
  refused(s, heads(4), "gpt2.safetensors: a gap in the layer indices: h.2.* is there but no h.1.*");
  s = m.state_dict(true);
  s["transformer.h.0.ln_1.weight"] = zeros({16}, DType::Int64);
  refused(s, heads(4),
          "gpt2.safetensors: transformer.h.0.ln_1.weight is [16] int64, but GPT-2's weights are float32 or float64");
  s = m.state_dict(true);
  s.erase("transformer.wte.weight");
  refused(s, heads(4), "gpt2.safetensors: no wte.weight (GPT-2's token embedding, whose shape tells V and d)");
  refused(m.state_dict(false), heads(3),
          "gpt2.safetensors: 3 heads (--heads) do not divide d 16 (wte.weight [261, 16])");
  refused(m.state_dict(false), Gpt2Options{},
          "gpt2.safetensors: no tensor's shape tells the number of heads: --heads H is needed");

  s = m.state_dict(true);
  s["wpe.weight"] = s.at("transformer.wpe.weight");
  refused(s, heads(4), "gpt2.safetensors: wpe.weight is there both with and without the prefix transformer.");
  s = m.state_dict(false);
  s["h.9223372036854775807.ln_1.weight"] = s.at("h.0.ln_1.weight");
  refused(s, heads(4),
          "gpt2.safetensors: tensor h.9223372036854775807.ln_1.weight has a layer index beyond the 1024 layers");
  s = {{"wte.weight", s.at("wte.weight")}, {"wpe.weight", s.at("wpe.weight")}};
  refused(s, heads(4), "gpt2.safetensors: no blocks h.{i}.* (h.0.attn.c_attn.weight, ...): not GPT-2's weights");
  write_tokenizer(dir.path() / "four", "vocab.json", "merges.txt", 4);
  const Gpt2Tokenizer four = read_gpt2_tokenizer((dir.path() / "four").string());
  Gpt2Options o = heads(4);
  o.tokenizer_source = four.source;
  CHECK_THROWS_MSG(import_gpt2(m.state_dict(false), "gpt2.safetensors", four.tokenizer, o), CheckpointError,
                   "gpt2.safetensors: wte.weight has 261 rows (one per token), but " + four.source + " has 260 tokens");
}

TEST_CASE("import_gpt2: config.json disagreeing with the shapes or --heads, and what gradformer does not compute") {
  TempDir dir("gpt2-config");
  const Tokenizer tokenizer = tiny_tokenizer(dir);
  const Gpt2 m(7);
  const auto refused = [&](const std::string& json, std::optional<int64_t> h, const std::string& text) {
    Gpt2Options o;
    o.heads = h;
    CHECK_THROWS_MSG((o.config = parse_gpt2_config(json, "config.json"),
                      import_gpt2(m.state_dict(false), "gpt2.safetensors", tokenizer, o)),
                     CheckpointError, text);
  };
  refused(R"({"n_head": 4, "n_embd": 32})", {},
          "config.json: n_embd 32 disagrees with the weights: gpt2.safetensors: wte.weight is [261, 16]: d 16");
  refused(R"({"n_head": 4, "vocab_size": 50257})", {},
          "config.json: vocab_size 50257 disagrees with the weights: gpt2.safetensors: wte.weight is [261, 16]: V 261");
  refused(R"({"n_head": 4, "n_layer": 12})", {},
          "config.json: n_layer 12 disagrees with the weights: gpt2.safetensors: h.0 to h.2: 3 layers");
  refused(
      R"({"n_head": 4, "n_positions": 1024})", {},
      "config.json: n_positions 1024 disagrees with the weights: gpt2.safetensors: wpe.weight is [12, 16]: n_ctx 12");
  refused(R"({"n_head": 4, "n_inner": 3072})", {},
          "config.json: n_inner 3072 disagrees with the weights: gpt2.safetensors: h.0.mlp.c_fc.weight is [16, 64]: "
          "d_ff 64");
  refused(R"({"n_head": 4})", 2, "--heads 2 disagrees with config.json's n_head 4");
  refused(R"({"n_head": 3})", {}, "gpt2.safetensors: 3 heads (config.json's n_head) do not divide d 16");
  refused(R"({"n_embd": 16})", {}, "--heads H is needed (or config.json with n_head)");
  refused(R"({"n_head": "four"})", {}, "config.json: n_head is \"four\", but it should be an integer");
  refused(R"({"activation_function": "swish"})", 4,
          "config.json: activation_function \"swish\" is not one gradformer computes");
  refused(R"({"scale_attn_by_inverse_layer_idx": true})", 4,
          "config.json: scale_attn_by_inverse_layer_idx is true, which gradformer's attention does not support");
  refused(R"({"reorder_and_upcast_attn": true})", 4,
          "config.json: reorder_and_upcast_attn is true, which gradformer's attention does not support");
  refused(R"({"scale_attn_weights": false})", 4, "config.json: scale_attn_weights is false");
  refused(R"([1, 2])", 4, "config.json: expected a JSON object such as GPT-2's config.json");
  refused(R"({"n_head": 4,})", 4, "config.json: not a JSON configuration: json:");
  // false, null and the defaults are accepted: an activation given as relu is ReLU
  Gpt2Options o = heads(4);
  o.config =
      parse_gpt2_config(R"({"activation_function": "relu", "reorder_and_upcast_attn": false, "n_inner": null})", "c");
  CHECK(import_gpt2(m.state_dict(false), "gpt2", tokenizer, o).info.config.activation == Activation::ReLU);
}

TEST_CASE(
    "import_gpt2_files: the tokenizer's files, --heads needed without a config, a gradformer checkpoint refused") {
  TempDir dir("gpt2-files-errors");
  const Gpt2 m(8);
  save_safetensors(dir / "model.safetensors", m.state_dict(false), {{"format", "pt"}});
  Gpt2Files files;
  files.model = dir / "missing.safetensors";  // named first, before the heads it would lack
  CHECK_THROWS_MSG(import_gpt2_files(files), CheckpointError,
                   "missing.safetensors: no such file (--gpt2 takes GPT-2's model.safetensors or the directory "
                   "holding it)");
  files.model = dir / "model.safetensors";
  CHECK_THROWS_MSG(
      import_gpt2_files(files), CheckpointError,
      "model.safetensors: no tensor's shape tells the number of heads: --heads H is needed (or a config.json "
      "with n_head beside the model, or --config FILE)");
  files.heads = 4;
  CHECK_THROWS_MSG(
      import_gpt2_files(files), CheckpointError,
      ": no GPT-2 tokenizer: neither vocab.json + merges.txt (the hub's names) nor encoder.json + vocab.bpe");
  write_tokenizer(dir.path(), "vocab.json", "unused.txt");
  CHECK_THROWS_MSG(import_gpt2_files(files), CheckpointError,
                   ": vocab.json is there but not merges.txt; GPT-2's tokenizer is the two files together");
  write_tokenizer(dir.path() / "release", "encoder.json", "vocab.bpe");  // the original release's names
  files.tokenizer_dir = (dir.path() / "release").string();
  Gpt2Import imported = import_gpt2_files(files);
  imported.model->eval();
  CHECK(largest_difference(*imported.model, m) < 1e-5);
  save_checkpoint(dir / "gpt2.safetensors", *imported.model, imported.info.config, {}, imported.info);
  files.model = dir / "gpt2.safetensors";
  CHECK_THROWS_MSG(import_gpt2_files(files), CheckpointError, "already a gradformer checkpoint");
  files.model = dir / "model.safetensors", files.config = dir / "absent.json";
  CHECK_THROWS_MSG(import_gpt2_files(files), CheckpointError,
                   "absent.json: cannot open for reading: No such file or directory");
}

TEST_CASE("import_gpt2_files refuses what every reader of its checkpoint would: a merge whose token vocab.json lacks") {
  // merges.txt's last merge joins "h a", a token vocab.json lacks (it has "Ġa" there): the import made
  // a checkpoint that generate, params, score and resume all refused; now it refuses, naming both files.
  TempDir dir("gpt2-merge-lacks-token");
  const Gpt2 m(8);
  save_safetensors(dir / "model.safetensors", m.state_dict(false), {{"format", "pt"}});
  write_tokenizer(dir.path(), "vocab.json", "merges.txt");
  test::write_text(dir / "merges.txt", "#version: 0.2\n\xC4\xA0 t\nh e\n\xC4\xA0t he\na n\nh a\n");
  Gpt2Files files;
  files.model = dir / "model.safetensors", files.heads = 4;
  CHECK_THROWS_MSG(
      import_gpt2_files(files), CheckpointError,
      "vocab.json and " + (dir.path() / "merges.txt").string() + ": the merge h a makes a token the vocabulary lacks");
  // and a tokenizer built any other way holds the same rule
  std::vector<std::string> bytes;
  for (int b = 0; b < 256; ++b) bytes.emplace_back(1, static_cast<char>(b));
  CHECK_THROWS_MSG(Tokenizer::gpt2(BytePairEncoding(bytes, {{"a", "n"}})), ValueError,
                   "the merge a n makes a token the vocabulary lacks");
}

TEST_CASE("import_gpt2_files names an input that is not a regular file instead of waiting on a FIFO") {
  TempDir dir("gpt2-fifo");
  const Gpt2 m(8);
  save_safetensors(dir / "model.safetensors", m.state_dict(false), {{"format", "pt"}});
  write_tokenizer(dir.path(), "vocab.json", "merges.txt");
  std::filesystem::remove(dir / "merges.txt");
  REQUIRE(::mkfifo((dir / "merges.txt").c_str(), 0600) == 0);  // no writer: opening it would block
  Gpt2Files files;
  files.model = dir.path().string(), files.heads = 4;
  CHECK_THROWS_MSG(import_gpt2_files(files), CheckpointError,
                   "merges.txt: not a regular file (a FIFO, a device or a directory); a tokenizer file is read whole");
  std::filesystem::remove(dir / "merges.txt");
  write_tokenizer(dir.path(), "vocab.json", "merges.txt");
  REQUIRE(::mkfifo((dir / "config.json").c_str(), 0600) == 0);
  CHECK_THROWS_MSG(
      import_gpt2_files(files), CheckpointError,
      "config.json: not a regular file (a FIFO, a device or a directory); GPT-2's config.json is read whole");
  // what the output may not be: every file the import may read, resolved as the import resolves them
  files.tokenizer_dir = dir / "tok";
  const std::vector<std::string> inputs = gpt2_input_paths(files);
  const std::vector<std::string> expected = {dir / "model.safetensors", dir / "config.json",
                                             dir / "tok/vocab.json",    dir / "tok/merges.txt",
                                             dir / "tok/encoder.json",  dir / "tok/vocab.bpe"};
  CHECK(inputs == expected);
}

TEST_CASE("Json::parse_config keeps true, false, null and real numbers as written, parse still refuses them") {
  const Json j =
      Json::parse_config(R"({"a": true, "b": false, "c": null, "d": 1e-05, "e": -0.5, "f": 2.5E+3, "g": 12})");
  const std::vector<std::string> literals = {"true", "false", "null", "1e-05", "-0.5", "2.5E+3"};
  for (size_t i = 0; i < literals.size(); ++i) {
    CHECK(j.members()[i].second.is_literal());
    CHECK(j.members()[i].second.text() == literals[i]);
  }
  CHECK((j.members()[6].second.is_integer() && j.members()[6].second.value() == 12));
  CHECK(Json::parse_config(j.dump()).dump() == j.dump());
  CHECK_THROWS_MSG(Json::parse_config("tru"), JsonError, "unsupported value");
  CHECK_THROWS_MSG(Json::parse_config("1."), JsonError, "expected a digit");
  CHECK_THROWS_MSG(Json::parse_config("1e"), JsonError, "expected a digit");
  CHECK_THROWS_MSG(Json::parse_config("01.5"), JsonError, "leading zero");
  CHECK_THROWS_MSG(Json::parse_config(".5"), JsonError, "unexpected character '.'");
  CHECK_THROWS_MSG(Json::parse("null"), JsonError, "unsupported value");
  CHECK_THROWS_MSG(Json::parse("1e-05"), JsonError, "unsupported number");
}

namespace gradformer {

TEST_CASE("import_gpt2: a config.json past 1 MiB is refused as it is read, naming the limit") {
  // An array under a key import ignores: each value was built in memory (50 MB took 3.2 GB).
  TempDir dir("gpt2-big-config");
  const std::string path = dir / "config.json";
  test::write_text(path, "{\"ignored\": [" + std::string((1 << 20) + 10, '1') + "], \"n_head\": 2}");
  CHECK_THROWS_MSG(read_gpt2_config(path), CheckpointError,
                   path + ": more than 1048576 bytes, the most a configuration file may hold");
}

}  // namespace gradformer
