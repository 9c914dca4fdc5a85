// Chapter 19: GPT-2. The companion program of tutorials/19-gpt2.md: every listing of the chapter is a
// piece of this file (or of the library file it names), and every output the chapter shows is what
// this program (or a gradformer run the chapter lists) prints. It exits non-zero if a claim does not
// hold.
//
//   19-gpt2                 the chapter's run (seconds), the cost of a token on a GPT-2-small-sized model
//   19-gpt2 --quick         the same, the cost measured on a small model (under a second)
//   19-gpt2 [--quick] DIR   also reads a real GPT-2 from DIR (the hub's model.safetensors, vocab.json,
//                           merges.txt): its tensors, its count, its continuation of a prompt
//
// Nothing here needs the real weights: the checked outputs come from a small random model that the
// program writes in GPT-2's file layout.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "autograd/all.h"
#include "claims.h"
#include "gpt2_files.h"        // gpt2_layout, write_toy_tokenizer, write_config_json: GPT-2's files
#include "memory_bandwidth.h"  // read_bandwidth_gbs, wall_seconds: chapter 18's measurements, shared
#include "nn/functional.h"
#include "nn/safetensors.h"
#include "transformer/data/bpe.h"
#include "transformer/data/tokenizer.h"
#include "transformer/inspect/svg.h"
#include "transformer/model/decoder_only.h"
#include "transformer/model/gpt2_init.h"
#include "transformer/model/masks.h"
#include "transformer/model/sampling.h"
#include "transformer/store/checkpoint.h"
#include "transformer/store/import_gpt2.h"

using namespace gradformer;
using namespace tutorial;
namespace fs = std::filesystem;

namespace {

long long ll(int64_t v) { return static_cast<long long>(v); }

std::string shape_text(const Shape& shape) {
  std::string s = "[";
  for (int i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

// ---- 1. GPT-2 as a configuration ----------------------------------------------------------------------

void configuration() {
  section("GPT-2 small as a configuration");
  const TransformerConfig c = gpt2_small_config();
  std::printf("arch %s, vocabulary %lld, context (n_ctx) %lld\n", architecture_name(c.arch), ll(c.tgt_vocab),
              ll(c.max_len));
  std::printf("d_model %lld, heads %lld, layers %lld, d_ff %lld\n", ll(c.d_model), ll(c.heads), ll(c.layers),
              ll(c.d_ff));
  std::printf("norm %s, positions %s, activation %s, norm_eps %g\n",
              c.norm == NormPlacement::Pre ? "pre-LN" : "post-LN",
              c.positions == Positions::Learned ? "learned" : "sinusoidal", activation_name(c.activation), c.norm_eps);
  std::printf("tie_embeddings %s, scale_embedding %s\n", c.tie_embeddings ? "true" : "false",
              c.scale_embedding ? "true" : "false");
  claim(c.norm == NormPlacement::Pre && c.positions == Positions::Learned && c.activation == Activation::GELUTanh &&
            c.tie_embeddings && !c.scale_embedding && c.norm_eps == 1e-5,
        "gpt2_small_config is pre-LN, learned positions, gelu-tanh, tied, unscaled, eps 1e-5");
}

// ---- 2. initialisation scaled by depth ------------------------------------------------------------------

// A small GPT-2: everything as GPT-2 small but the sizes.
TransformerConfig small_gpt2(int64_t vocab, int64_t n_ctx, int64_t d, int64_t heads, int64_t layers) {
  TransformerConfig c = gpt2_small_config();
  c.src_vocab = c.tgt_vocab = vocab;
  c.max_len = n_ctx, c.d_model = d, c.heads = heads, c.layers = layers, c.d_ff = 4 * d, c.dropout = 0;
  return c;
}

double rms(const Tensor& t) {  // sqrt(mean(t^2))
  double sum = 0;
  const std::vector<double> v = t.to(DType::Float64).contiguous().to_vector<double>();
  for (double x : v) sum += x * x;
  return std::sqrt(sum / static_cast<double>(v.size()));
}

// The residual stream h_l, block by block: its RMS after the embedding (l = 0) and after each block.
std::vector<double> stream_rms(const DecoderOnly& model, const Tensor& ids) {
  NoGradGuard no_grad;
  const Tensor mask = causal_mask(ids.size(1)).unsqueeze(0);  // [1, T, T]
  Variable h = model.embed_tokens(ids);                       // h_0 = wte[ids] + wpe[0 .. T-1]   [B, T, d]
  std::vector<double> out{rms(h.value())};
  for (const auto& block : *model.decoder->layers) {
    h = block->forward(h, mask);  // h + attn(ln_1(h)), then + mlp(ln_2(h))
    out.push_back(rms(h.value()));
  }
  return out;
}

void depth_scaled_init() {
  section("initialisation scaled by depth");
  const int64_t layers = 24;
  const TransformerConfig c = small_gpt2(/*vocab=*/512, /*n_ctx=*/64, /*d=*/64, /*heads=*/4, layers);
  std::printf("%lld blocks, d %lld: N = 2 x %lld = %lld residual layers\n", ll(layers), ll(c.d_model), ll(layers),
              ll(2 * layers));
  std::printf(
      "gpt2_init_: wte N(0, %g), wpe N(0, %g), c_attn and c_fc N(0, %g), attn.c_proj and mlp.c_proj N(0, %.5f)\n",
      Gpt2Init::weight_std, Gpt2Init::position_std, Gpt2Init::weight_std, Gpt2Init::residual_std(layers));
  DecoderOnly scaled(c, /*seed=*/1, skip_init), unscaled(c, /*seed=*/1, skip_init);
  Generator gen_a(7), gen_b(7);
  gpt2_init_(scaled, gen_a);
  gpt2_init_(unscaled, gen_b);  // the same numbers ...
  const double undo = Gpt2Init::weight_std / Gpt2Init::residual_std(layers);
  for (const auto& block : *unscaled.decoder->layers) {  // ... with the residual projections N(0, 0.02)
    Tensor(block->self_attn->out_proj->weight.value()).mul_(undo);
    Tensor(block->linear2->weight.value()).mul_(undo);
  }
  Generator gen(3);
  const Tensor ids = randint({8, 64}, 0, c.tgt_vocab, gen);  // 8 sequences of 64 random tokens
  const std::vector<double> with = stream_rms(scaled, ids), without = stream_rms(unscaled, ids);
  std::printf("RMS of the residual stream h_l at initialisation (8 x 64 random tokens)\n");
  std::printf("  block l   std 0.02 everywhere   residual projections 0.02/sqrt(N)\n");
  for (int64_t l = 0; l <= layers; l += 3) std::printf("  %7lld   %19.4f   %34.4f\n", ll(l), without[l], with[l]);
  std::printf("growth from h_1 to h_%lld: %.2fx without the scaling, %.2fx with it\n", ll(layers),
              without[layers] / without[1], with[layers] / with[1]);
  PlotSeries unscaled_line{"std 0.02 everywhere", {}, without}, scaled_line{"scaled: 0.02/sqrt(N)", {}, with};
  for (int64_t l = 0; l <= layers; ++l)
    unscaled_line.x.push_back(static_cast<double>(l)), scaled_line.x.push_back(static_cast<double>(l));
  write_svg(output_path("19-residual-rms.svg"),
            line_plot_svg({.title = "RMS of the residual stream at initialisation, 24 blocks",
                           .x_label = "after block l",
                           .y_label = "RMS of h_l",
                           .series = {unscaled_line, scaled_line}}));
  claim(without[layers] / without[1] > 2 * (with[layers] / with[1]),
        "without the depth scaling, the stream grows more than twice as much");
  claim(with[layers] < 2 * with[1], "with the depth scaling, h_N's RMS is less than twice h_1's");
}

// ---- 3. GPT-2's file: the tensors, term by term --------------------------------------------------------

// Which term of the parameter formula a tensor of GPT-2's file belongs to ("" for the attention
// mask buffers that some files carry, h.{i}.attn.bias [1, 1, n_ctx, n_ctx] and attn.masked_bias).
std::string term_of(std::string name, const Shape& shape) {
  if (name.rfind("transformer.", 0) == 0) name = name.substr(12);
  if (name == "wte.weight" || name == "lm_head.weight") return name == "wte.weight" ? "wte" : "";
  if (name == "wpe.weight") return "wpe";
  if (name.rfind("ln_f.", 0) == 0) return "ln_f";
  if (name.find(".ln_") != std::string::npos) return "ln_1, ln_2";
  if (name.find("attn.c_attn.") != std::string::npos) return "attn.c_attn";
  if (name.find("attn.c_proj.") != std::string::npos) return "attn.c_proj";
  if (name.find("mlp.c_fc.") != std::string::npos) return "mlp.c_fc";
  if (name.find("mlp.c_proj.") != std::string::npos) return "mlp.c_proj";
  (void)shape;
  return "";
}

struct Term {
  const char* name;
  const char* formula;
  int64_t count;  // from the formula, for the whole model
};

// decoder_only_parameter_count's formula (transformer/model/decoder_only.cpp), term by term.
std::vector<Term> formula_terms(const TransformerConfig& c) {
  const int64_t d = c.d_model, V = c.tgt_vocab, N = c.layers, ff = c.d_ff;
  return {{"wte", "V d", V * d},
          {"wpe", "n_ctx d", c.max_len * d},
          {"ln_1, ln_2", "N 4 d", N * 4 * d},
          {"attn.c_attn", "N (3 d^2 + 3 d)", N * (3 * d * d + 3 * d)},
          {"attn.c_proj", "N (d^2 + d)", N * (d * d + d)},
          {"mlp.c_fc", "N (d d_ff + d_ff)", N * (d * ff + ff)},
          {"mlp.c_proj", "N (d_ff d + d)", N * (ff * d + d)},
          {"ln_f", "2 d", 2 * d}};
}

// The file's tensors summed by term, against the formula's; returns the file's total.
int64_t count_by_term(const StateDict& file, const TransformerConfig& c) {
  std::map<std::string, int64_t> in_file;
  int64_t total = 0;
  for (const auto& [name, t] : file) {
    const std::string term = term_of(name, t.shape());
    if (term.empty()) continue;
    in_file[term] += t.numel();
    total += t.numel();
  }
  std::printf("  %-12s %-18s %12s %12s\n", "term", "formula", "formula", "in the file");
  int64_t formula_total = 0;
  for (const Term& term : formula_terms(c)) {
    std::printf("  %-12s %-18s %12lld %12lld\n", term.name, term.formula, ll(term.count), ll(in_file[term.name]));
    claim(in_file[term.name] == term.count, "each term of the formula counts the file's tensors of that term");
    formula_total += term.count;
  }
  std::printf("  %-12s %-18s %12lld %12lld\n", "total", "", ll(formula_total), ll(total));
  claim(formula_total == decoder_only_parameter_count(c), "the terms add up to decoder_only_parameter_count");
  return total;
}

// The small random model: GPT-2's computation at toy sizes, written as GPT-2's hub file.
TransformerConfig toy_config(int64_t vocab) { return small_gpt2(vocab, /*n_ctx=*/64, /*d=*/32, /*heads=*/4, 2); }

void gpt2_file(const DecoderOnly& model, const fs::path& path) {
  section("GPT-2's file, tensor by tensor");
  save_safetensors(path, gpt2_layout(model), {{"format", "pt"}});
  const SafetensorsFile file = load_safetensors(path);
  std::printf("%s: %zu tensors\n", path.filename().string().c_str(), file.tensors.size());
  for (const auto& [name, t] : file.tensors)
    std::printf("  %-24s %-12s %lld\n", name.c_str(), shape_text(t.shape()).c_str(), ll(t.numel()));
  const TransformerConfig& c = model.config();
  std::printf("counted against the formula (V %lld, n_ctx %lld, d %lld, N %lld, d_ff %lld):\n", ll(c.tgt_vocab),
              ll(c.max_len), ll(c.d_model), ll(c.layers), ll(c.d_ff));
  const int64_t total = count_by_term(file.tensors, c);
  claim(total == decoder_only_parameter_count(c), "the file holds decoder_only_parameter_count numbers");
  claim(total == static_cast<int64_t>(model.parameter_count()), "the file holds every parameter of the model once");
}

void gpt2_small_shapes() {
  section("GPT-2 small, shapes computed");
  const TransformerConfig c = gpt2_small_config();
  const int64_t d = c.d_model, ff = c.d_ff;
  // The shapes alone, from the importer's name table for one block (a StateDict of empty tensors of
  // these shapes would allocate half a gigabyte).
  for (const Gpt2Name& name : gpt2_names({c.tgt_vocab, d, c.max_len, 1, ff}))
    std::printf("  %-24s %s\n", name.gpt2.c_str(), shape_text(name.shape).c_str());
  std::printf("  (h.1 to h.%lld as h.0)\n", ll(c.layers - 1));
  std::printf("  %-12s %-18s %12s\n", "term", "formula", "count");
  int64_t total = 0;
  for (const Term& term : formula_terms(c)) {
    std::printf("  %-12s %-18s %12lld\n", term.name, term.formula, ll(term.count));
    total += term.count;
  }
  std::printf("  %-12s %-18s %12lld\n", "total", "", ll(total));
  claim(total == decoder_only_parameter_count(c) && total == 124439808, "GPT-2 small: 124,439,808 parameters");
  std::printf("float32: %.1f MB\n", static_cast<double>(total) * 4 / 1e6);
}

// ---- 4. Conv1D and Linear: the transpose --------------------------------------------------------------

void conv1d_and_linear() {
  section("GPT-2's Conv1D and a Linear");
  const Tensor x = from_vector(std::vector<float>{1, 2, 3}, {1, 3});                // [1, in 3]
  const Tensor conv_w = from_vector(std::vector<float>{1, 2, 3, 4, 5, 6}, {3, 2});  // GPT-2: [in 3, out 2]
  const Tensor b = from_vector(std::vector<float>{0.5f, -1}, {2});
  const Tensor conv = add(matmul(x, conv_w), b);                                    // Conv1D: x W + b
  const Tensor linear_w = conv_w.transpose(0, 1).contiguous();                      // Linear: [out 2, in 3]
  const Tensor lin = linear(Variable(x), Variable(linear_w), Variable(b)).value();  // x W^T + b
  const auto row = [](const Tensor& t) {
    const std::vector<float> v = t.contiguous().to_vector<float>();
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) {
      if (i > 0) s += " ";
      s += std::to_string(v[i]).substr(0, 4);
    }
    return s;
  };
  std::printf("x = [%s]\n", row(x).c_str());
  std::printf("Conv1D weight [3, 2] rows: [%s] [%s] [%s]\n", row(conv_w.narrow(0, 0, 1)).c_str(),
              row(conv_w.narrow(0, 1, 1)).c_str(), row(conv_w.narrow(0, 2, 1)).c_str());
  std::printf("Linear weight [2, 3] rows: [%s] [%s]\n", row(linear_w.narrow(0, 0, 1)).c_str(),
              row(linear_w.narrow(0, 1, 1)).c_str());
  std::printf("Conv1D: x W + b   = [%s]\n", row(conv).c_str());
  std::printf("Linear: x W^T + b = [%s]\n", row(lin).c_str());
  claim(conv.contiguous().to_vector<float>() == lin.contiguous().to_vector<float>(),
        "a Linear holding the transposed weight computes what the Conv1D computes");
}

// ---- 5. a tokenizer in GPT-2's format ------------------------------------------------------------------

const std::vector<std::pair<std::string, std::string>> toy_merges{{" ", "m"}, {"e", "a"}, {" m", "ea"}, {"i", "n"},
                                                                  {" ", "l"}, {"i", "f"}, {" l", "if"}, {"T", "h"}};

void toy_tokenizer(const fs::path& dir) {
  section("a tokenizer in GPT-2's format");
  write_toy_tokenizer(dir, toy_merges);
  const Tokenizer tokenizer =
      Tokenizer::gpt2(BytePairEncoding::read_gpt2((dir / "vocab.json").string(), (dir / "merges.txt").string()));
  std::printf("vocab.json: %lld tokens (256 bytes, %zu merges, <|endoftext|>); merges.txt: %zu merges\n",
              ll(tokenizer.size()), toy_merges.size(), toy_merges.size());
  const std::string prompt = "The meaning of life is";
  const std::vector<int64_t> ids = tokenizer.encode(prompt);
  std::printf("\"%s\" -> %zu tokens:", prompt.c_str(), ids.size());
  for (int64_t id : ids) std::printf(" %lld", ll(id));
  std::printf("\n  as GPT-2's byte characters:");
  for (int64_t id : ids) std::printf(" %s", tokenizer.piece(id).c_str());
  std::printf("\n");
  claim(tokenizer.decode(ids) == prompt, "the toy tokenizer decodes the prompt back");
}

// ---- 6. importing, and generating ----------------------------------------------------------------------

// The prompt's continuation, as GPT-2's byte characters (a random model's bytes are rarely text).
std::string continuation(DecoderOnly& model, const Tokenizer& tokenizer, const std::string& prompt,
                         const SamplingOptions& options, uint64_t seed) {
  Generator gen(seed);
  std::string out;
  for (int64_t id : generate(model, tokenizer.encode(prompt), options, gen)) out += tokenizer.piece(id) + " ";
  return out;
}

void import_and_generate(const DecoderOnly& toy, const fs::path& dir) {
  section("importing GPT-2's file, and generating");
  write_config_json(dir / "config.json", toy.config());
  Gpt2Import imported = import_gpt2_files(
      {.model = (dir / "model.safetensors").string(), .tokenizer_dir = "", .config = "", .heads = std::nullopt});
  imported.model->eval();  // GPT-2 trains with dropout 0.1 (config.json's resid_pdrop); generating, none
  std::printf("imported %s: %lld layers, d %lld, heads %lld, V %lld, n_ctx %lld\n", dir.string().c_str(),
              ll(imported.info.config.layers), ll(imported.info.config.d_model), ll(imported.info.config.heads),
              ll(imported.info.config.tgt_vocab), ll(imported.info.config.max_len));
  const std::vector<int64_t> prompt_ids = imported.info.target_tokenizer.encode("The meaning of life is");
  const Tensor ids = from_vector(prompt_ids, {1, static_cast<int64_t>(prompt_ids.size())});  // [1, T]
  const Tensor mask = causal_mask(ids.size(1)).unsqueeze(0);
  NoGradGuard no_grad;
  const std::vector<float> mine = imported.model->forward(ids, mask).value().contiguous().to_vector<float>();
  const std::vector<float> original = toy.forward(ids, mask).value().contiguous().to_vector<float>();
  double difference = 0;
  for (size_t i = 0; i < mine.size(); ++i) difference = std::max(difference, std::abs(double{mine[i]} - original[i]));
  std::printf("largest difference between the imported model's logits and the original's: %g\n", difference);
  claim(difference == 0, "the import gives back the model that was written, exactly (transposes lose nothing)");

  const fs::path checkpoint = dir / "gpt2-toy.gradformer.safetensors";  // what `gradformer import --gpt2` writes
  save_checkpoint(checkpoint.string(), *imported.model, imported.info.config, {}, imported.info);
  LoadedDecoderOnly loaded = load_decoder_only_checkpoint(checkpoint.string());
  const Tokenizer& tokenizer = loaded.info.target_tokenizer;
  const int64_t end_of_text = tokenizer.size() - 1;  // <|endoftext|>, GPT-2's last token
  const std::string prompt = "The meaning of life is";
  const SamplingOptions greedy{.max_tokens = 12, .temperature = 0, .eos = end_of_text};
  const SamplingOptions top_k{.max_tokens = 12, .temperature = 1, .top_k = 40, .eos = end_of_text};
  std::printf("prompt: %s\n", prompt.c_str());
  std::printf("greedy:   %s\n", continuation(*loaded.model, tokenizer, prompt, greedy, 1).c_str());
  std::printf("top-k 40: %s\n", continuation(*loaded.model, tokenizer, prompt, top_k, 1).c_str());
}

// A real GPT-2 from the hub (model.safetensors, config.json, vocab.json, merges.txt in one folder):
// its tensors counted as the toy's were, and its continuation of the prompt. Not in the chapter's
// checked outputs: the files are not in the repository.
// The sizes a GPT-2 file's shapes tell (the heads aside): V and d from wte, n_ctx from wpe, N from
// the blocks, d_ff from the first block's c_fc. Names may start with "transformer.".
TransformerConfig sizes_of(const StateDict& file) {
  std::map<std::string, Shape> shapes;
  for (const auto& [name, t] : file) shapes[name.rfind("transformer.", 0) == 0 ? name.substr(12) : name] = t.shape();
  TransformerConfig c = gpt2_small_config();
  c.src_vocab = c.tgt_vocab = shapes.at("wte.weight")[0];
  c.d_model = shapes.at("wte.weight")[1], c.max_len = shapes.at("wpe.weight")[0];
  c.d_ff = shapes.at("h.0.mlp.c_fc.bias")[0], c.layers = 0;
  while (shapes.count("h." + std::to_string(c.layers) + ".ln_1.weight")) ++c.layers;
  c.heads = 1;  // unknown from the shapes; not counted
  return c;
}

void real_gpt2(const fs::path& dir) {
  section("a real GPT-2 (not checked)");
  const std::string path = (dir / "model.safetensors").string();
  {  // the file counted term by term, then let go before the import reads it again
    const SafetensorsFile file = load_safetensors(path);
    const TransformerConfig sizes = sizes_of(file.tensors);
    std::printf("%s: V %lld, n_ctx %lld, d %lld, N %lld, d_ff %lld\n", path.c_str(), ll(sizes.tgt_vocab),
                ll(sizes.max_len), ll(sizes.d_model), ll(sizes.layers), ll(sizes.d_ff));
    count_by_term(file.tensors, sizes);
  }
  Gpt2Import imported = import_gpt2_files({.model = path, .tokenizer_dir = "", .config = "", .heads = std::nullopt});
  imported.model->eval();
  std::printf("imported: %lld heads\n", ll(imported.info.config.heads));
  const Tokenizer& tokenizer = imported.info.target_tokenizer;
  const std::string prompt = "The meaning of life is";
  const std::vector<int64_t> ids = tokenizer.encode(prompt);
  for (const SamplingOptions& options :
       {SamplingOptions{.max_tokens = 20, .temperature = 0, .eos = tokenizer.size() - 1},
        SamplingOptions{.max_tokens = 20, .temperature = 1, .top_k = 40, .eos = tokenizer.size() - 1}}) {
    Generator gen(1);
    std::printf("%s: %s%s\n", options.temperature == 0 ? "greedy" : "top-k 40", prompt.c_str(),
                tokenizer.decode(generate(*imported.model, ids, options, gen)).c_str());
  }
}

// ---- 7. the cost of a generated token -------------------------------------------------------------------

// Generating one token with the KV cache multiplies one vector by every weight matrix: each weight is
// read once and used for one multiply-add, so the time is set by the bytes read, not by the flops:
//   bytes per token = 4 (parameters + the cache's 2 N T d keys and values),   time >= bytes / bandwidth
// Reading a prompt is the other half of generating: all of its P tokens go through the model in one
// step, so each weight is read once for P multiply-adds, and the products are matrix-matrix ones again.
// Their rate is compared with a plain 1024 x 1024 x 1024 product timed right after.
//   flops = P (2 (N (4 d^2 + 2 d d_ff) + V d))  +  N 4 P^2 d      (the layers and the output; attention)
void reading_a_prompt(const DecoderOnly& model, bool quick) {
  const TransformerConfig& c = model.config();
  const double d = static_cast<double>(c.d_model), N = static_cast<double>(c.layers);
  const double per_token =
      2 * (N * (4 * d * d + 2 * d * static_cast<double>(c.d_ff)) + static_cast<double>(c.tgt_vocab) * d);
  const Tensor a = full({1024, 1024}, 0.01), b = full({1024, 1024}, 0.01);
  Generator gen(3);
  std::printf(
      "reading a prompt in one step, against a 1024 x 1024 x 1024 matmul timed after it\n"
      "  prompt   ms/prompt   GFLOP/s   matmul GFLOP/s   of it\n");
  for (int64_t prompt : quick ? std::vector<int64_t>{64} : std::vector<int64_t>{128, 512, 1024}) {
    const Tensor ids = randint({1, prompt}, 0, c.tgt_vocab, gen);
    const double P = static_cast<double>(prompt), flops = P * per_token + N * 4 * P * P * d;
    const double seconds = best_wall_seconds(2, [&] {
      DecoderOnlyCache cache = model.start_cache();
      model.forward_step(ids, cache);
    });
    const double matmul_gflops = 2.0 * 1024 * 1024 * 1024 / best_wall_seconds(5, [&] { matmul(a, b); }) / 1e9;
    std::printf("  %6lld   %9.1f   %7.1f   %14.1f   %4.0f%%\n", ll(prompt), seconds * 1e3, flops / seconds / 1e9,
                matmul_gflops, 100 * flops / seconds / 1e9 / matmul_gflops);
  }
}

void cost_of_a_token(bool quick) {
  section("the cost of a generated token");
  const TransformerConfig c = quick ? small_gpt2(50257, 1024, 128, 4, 2) : gpt2_small_config();
  std::printf("threads %d\n", num_threads());
  DecoderOnly model(c, /*seed=*/1, skip_init);
  // Every weight written (pages never written would all map to one page of zeros, read from the
  // cache, not from memory). The values do not change the time: a constant costs no random draws.
  for (const auto& [name, p] : model.named_parameters()) fill_(p, 0.01);
  Generator gen(2);
  model.eval();
  const double parameters = static_cast<double>(model.parameter_count());
  std::printf("model: d %lld, N %lld, V %lld: %.1fM parameters, %.0f MB in float32\n", ll(c.d_model), ll(c.layers),
              ll(c.tgt_vocab), parameters / 1e6, parameters * 4 / 1e6);
  std::printf("a token: 2 flops per weight of 4 bytes, %.2f flops per byte read\n", 2.0 / 4.0);
  std::printf("  prompt   ms/token   MB read/token   GB/s   a read's GB/s   of it   GFLOP/s\n");
  const int generated = quick ? 3 : 9;
  NoGradGuard no_grad;
  DecoderOnlyCache cache = model.start_cache();  // one sequence, growing: each prompt extends the last
  for (int64_t prompt : quick ? std::vector<int64_t>{8, 64} : std::vector<int64_t>{8, 128, 512, 1000}) {
    model.forward_step(randint({1, prompt - cache.length}, 0, c.tgt_vocab, gen), cache);  // the prompt's rest
    const Tensor next = randint({1, 1}, 0, c.tgt_vocab, gen);
    // Each token timed alone, then a read of memory right after it: the machine's bandwidth drifts
    // (its clocks, the other programs), so a token is compared with the bandwidth of its own moment.
    std::vector<double> token_seconds, read_gbs, fractions;
    const double cache_bytes = 4.0 * 2 * static_cast<double>(c.layers * (prompt + generated / 2) * c.d_model);
    const double bytes = 4 * parameters + cache_bytes;
    for (int i = 0; i < generated; ++i) {
      token_seconds.push_back(wall_seconds([&] { model.forward_step(next, cache); }));
      read_gbs.push_back(read_bandwidth_gbs(1));
      fractions.push_back(bytes / token_seconds.back() / 1e9 / read_gbs.back());
    }
    const double per_token = median(token_seconds);
    // a multiply-add per weight, and attention's q k^T and p v over the cache: 4 N T d
    const double flops = 2 * parameters + 4.0 * static_cast<double>(c.layers * (prompt + generated / 2) * c.d_model);
    std::printf("  %6lld   %8.1f   %13.0f   %4.1f   %13.1f   %4.0f%%   %7.1f\n", ll(prompt), per_token * 1e3,
                bytes / 1e6, bytes / per_token / 1e9, median(read_gbs), 100 * median(fractions),
                flops / per_token / 1e9);
  }
  reading_a_prompt(model, quick);
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  fs::path real_dir;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0)
      quick = true;
    else
      real_dir = argv[i];
  }
  const fs::path work = output_path("gpt2-toy");
  fs::create_directories(work);

  configuration();
  depth_scaled_init();

  toy_tokenizer(work);
  const int64_t toy_vocab = 256 + static_cast<int64_t>(toy_merges.size()) + 1;
  DecoderOnly toy(toy_config(toy_vocab), /*seed=*/1, skip_init);
  Generator init(1);
  gpt2_init_(toy, init);
  gpt2_file(toy, work / "model.safetensors");
  gpt2_small_shapes();
  conv1d_and_linear();
  import_and_generate(toy, work);
  cost_of_a_token(quick);
  if (!real_dir.empty()) real_gpt2(real_dir);

  if (failures > 0) std::printf("\n%d claim(s) failed\n", failures);
  return failures > 0 ? 1 : 0;
}
