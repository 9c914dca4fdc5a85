// Chapter 20: from GPT-2 to Llama. The companion program of tutorials/20-gpt2-to-llama.md: every
// listing of the chapter is a piece of this file (or of the library file it names), and every output
// the chapter shows is what this program (or a gradformer run the chapter lists) prints. It exits
// non-zero if a claim does not hold.
//
//   20-gpt2-to-llama           the chapter's run (a few minutes on two cores): small models trained
//                              on the book's text with each of the four changes and without it
//   20-gpt2-to-llama --quick   the same steps, each model trained for a few steps (seconds); its
//                              numbers are not the chapter's
//
// Nothing here needs a download: the imported model is a small random Llama that the program writes
// in the hub's folder layout.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <string>
#include <vector>

#include "autograd/all.h"
#include "claims.h"
#include "memory_bandwidth.h"  // wall_seconds, median
#include "nn/safetensors.h"
#include "transformer/data/text_blocks.h"
#include "transformer/data/tokenizer.h"
#include "transformer/evaluate/evaluate.h"
#include "transformer/inspect/diagram.h"
#include "transformer/inspect/svg.h"
#include "transformer/model/decoder_only.h"
#include "transformer/model/masks.h"
#include "transformer/model/rotary.h"
#include "transformer/model/sampling.h"
#include "transformer/store/checkpoint.h"
#include "transformer/store/hub_folder.h"
#include "transformer/store/import_hub.h"
#include "transformer/train/trainer.h"

#ifndef GRADFORMER_TUTORIAL_DATA
#define GRADFORMER_TUTORIAL_DATA "tutorials/data"
#endif

using namespace gradformer;
using namespace tutorial;
namespace fs = std::filesystem;

namespace {

long long ll(int64_t v) { return static_cast<long long>(v); }

// ---- the runs: one small decoder-only model of the book's text, one setting changed at a time ------

// A byte-level language model of the book's own text (tutorials/data/chapters.txt, chapter 16's),
// small (d 64, 2 blocks, 4 heads) and trained briefly on blocks of 64 bytes: the same text, seed
// and budget for every variant, so that the one setting changed is the difference.
const std::string kText = GRADFORMER_TUTORIAL_DATA "/chapters.txt";

TrainOptions text_lm(bool quick, const std::string& name) {
  TrainOptions o = default_train_options("text", Architecture::DecoderOnly);
  o.text_path = kText, o.tokenizer = "bytes", o.context = 64, o.max_len = 128;
  o.d_model = 64, o.d_ff = 256, o.heads = 4, o.layers = 2, o.batch_size = 32;
  o.steps = quick ? 10 : 600, o.warmup = quick ? 5 : 100;  // lr 0.5, the task's
  o.eval_every = 0, o.log_every = 1000, o.quiet = true, o.out_dir = "runs/" + name;
  return o;
}

// A run's model, read back from its checkpoint: its parameters counted.
int64_t parameters_of(const TrainReport& r) {
  return load_decoder_only_checkpoint(r.checkpoint_path).model->parameter_count();
}

double ms_per_step(const TrainReport& r) { return 1e3 * r.train_seconds / static_cast<double>(r.steps); }

// ---- 1. RMSNorm ------------------------------------------------------------------------------------

void rms_norm_example() {
  section("LayerNorm and RMSNorm of one vector");
  const Variable x(tensor({1.0, 2.0, 3.0, 6.0}, {4}));
  const Variable ones(tensor({1.0, 1.0, 1.0, 1.0}, {4})), zeros(tensor({0.0, 0.0, 0.0, 0.0}, {4}));
  const std::vector<double> ln = layer_norm(x, ones, zeros, 1e-5).value().to(DType::Float64).to_vector<double>();
  const std::vector<double> rms = rms_norm(x, ones, 1e-5).value().to(DType::Float64).to_vector<double>();
  std::printf("x       = [1 2 3 6]: mean 3, mean of squares 12.5\n");
  std::printf("LayerNorm (x - 3) / sqrt(var + eps) = [%.3f %.3f %.3f %.3f]\n", ln[0], ln[1], ln[2], ln[3]);
  std::printf("RMSNorm   x / sqrt(12.5 + eps)      = [%.3f %.3f %.3f %.3f]\n", rms[0], rms[1], rms[2], rms[3]);
  claim(std::abs(rms[3] - 6 / std::sqrt(12.5 + 1e-5)) < 1e-5, "RMSNorm divides by the root of the mean square");
}

void rms_norm_training(bool quick) {
  section("LayerNorm or RMSNorm: the same model, budget and seed");
  const TrainOptions base = text_lm(quick, "");
  std::printf("text: d %lld, %lld blocks, %lld heads, d_ff %lld, pre-LN; %lld steps of %lld blocks of %lld bytes\n",
              ll(base.d_model), ll(base.layers), ll(base.heads), ll(base.d_ff), ll(base.steps), ll(base.batch_size),
              ll(base.context));
  std::printf("  norm        parameters   ms/step   validation loss\n");
  for (const Normalization n : {Normalization::LayerNorm, Normalization::RMSNorm}) {
    TrainOptions o = text_lm(quick, std::string("norm-") + normalization_name(n));
    o.block.normalization = n;
    const TrainReport r = train(o);
    std::printf("  %-10s  %10lld   %7.2f   %15.4f\n", normalization_name(n), ll(parameters_of(r)), ms_per_step(r),
                r.valid_loss);
  }
}

// ---- 2. rotary positions ---------------------------------------------------------------------------

double dot(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = a.to(DType::Float64).contiguous().to_vector<double>();
  const std::vector<double> y = b.to(DType::Float64).contiguous().to_vector<double>();
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += x[i] * y[i];
  return s;
}

// One query q and one key k of d_k numbers, placed at every position p of a sequence: row p of
// rotary(...) is q turned by the angles of position p.
void rotary_is_relative() {
  section("rotary positions: the score depends on n - m alone");
  const int64_t dk = 16, positions = 64;
  const RotaryTables t = rotary_tables(positions, dk, 10000, {}, DType::Float64);
  Generator gen(5);
  const Tensor q = randn({1, dk}, gen, DType::Float64), k = randn({1, dk}, gen, DType::Float64);
  const Tensor qs = rotary(Variable(q.expand({positions, dk}).contiguous()), t.cos, t.sin).value();  // [P, d_k]
  const Tensor ks = rotary(Variable(k.expand({positions, dk}).contiguous()), t.cos, t.sin).value();
  auto score = [&](int64_t m, int64_t n) { return dot(qs.select(0, m), ks.select(0, n)); };
  std::printf("d_k %lld, theta 10000: q at m, k at n, and both moved by s\n", ll(dk));
  std::printf("   m    n    q_m . k_n    s   q_m+s . k_n+s\n");
  double largest = 0;
  for (const auto& [m, n] : std::vector<std::pair<int64_t, int64_t>>{{3, 10}, {10, 3}, {0, 5}})
    for (int64_t s : {1, 7, 40}) {
      const double a = score(m, n), b = score(m + s, n + s);
      largest = std::max(largest, std::abs(a - b));
      std::printf("  %2lld   %2lld   %10.6f   %2lld   %13.6f\n", ll(m), ll(n), a, ll(s), b);
    }
  std::printf("largest difference: %.1e\n", largest);
  std::printf("unrotated q . k = %.6f; q_3 . k_3 = %.6f\n", dot(q, k), score(3, 3));
  claim(largest < 1e-12, "moving both positions by s leaves every score the same");
  claim(std::abs(dot(q, k) - score(3, 3)) < 1e-12, "at the same position the rotations cancel");
}

// One pair (x_i, x_{i+h}) of a query and of a key, drawn in its plane at two pairs of positions:
// (m, n) = (1, 3) and (4, 6), the same distance apart, the same angle between them.
void draw_rotation(const std::string& path) {
  const double f = 0.5;  // the pair's frequency: angle(p) = p f
  Diagram d(640, 330);
  d.text(320, 24, "one pair (x_i, x_i+h) of a query and a key, turned by p f (f = 0.5 rad)", {.size = 14});
  const double q0 = 0.3, k0 = 1.2;  // their angles at position 0
  struct Panel {
    double cx;
    int m, n;
  };
  for (const Panel& p : {Panel{170, 1, 3}, Panel{470, 4, 6}}) {
    const double cy = 180, r = 110;
    d.circle(p.cx, cy, r, "none", "#ccc");
    d.arrow({{p.cx - r - 10, cy}, {p.cx + r + 10, cy}}, "#bbb", false, false);
    d.arrow({{p.cx, cy + r + 10}, {p.cx, cy - r - 10}}, "#bbb", false, false);
    const double aq = q0 + p.m * f, ak = k0 + p.n * f;
    d.arrow({{p.cx, cy}, {p.cx + r * std::cos(aq), cy - r * std::sin(aq)}}, "#c0392b");
    d.arrow({{p.cx, cy}, {p.cx + r * std::cos(ak), cy - r * std::sin(ak)}}, "#2e6db4");
    d.text(p.cx + 0.75 * r * std::cos(aq) + 14, cy - 0.75 * r * std::sin(aq), "q at m = " + std::to_string(p.m),
           {.size = 12, .anchor = "start", .colour = "#c0392b"});
    d.text(p.cx + 0.75 * r * std::cos(ak) - 14, cy - 0.75 * r * std::sin(ak), "k at n = " + std::to_string(p.n),
           {.size = 12, .anchor = "end", .colour = "#2e6db4"});
    char caption[96];
    std::snprintf(caption, sizeof caption, "angle from q to k: %.2f rad", ak - aq);
    d.text(p.cx, cy + r + 32, caption, {.size = 12});
  }
  write_svg(path, d.svg());
}

// The held-out tail of the text read in blocks of `context` bytes: the loss per byte predicted.
double held_out_loss(DecoderOnly& model, const Tokenizer& tokenizer, int64_t context) {
  const TextTokens parts = split_text(read_text_file(kText, false), tokenizer, context, kText);
  return lm_eval_loss(model, text_eval_batches(parts.valid, context));
}

void positions_training(bool quick) {
  section("sinusoidal, learned or rotary positions");
  std::printf("trained on blocks of 64 bytes; the held-out text read in blocks of 64, and of 128\n");
  std::printf("  positions    parameters   held-out loss, 64   held-out loss, 128\n");
  std::vector<std::vector<double>> losses;  // [sinusoidal, learned, rope] x [64, 128]
  for (const Positions p : {Positions::Sinusoidal, Positions::Learned, Positions::Rotary}) {
    TrainOptions o = text_lm(quick, std::string("positions-") + positions_name(p));
    o.positions = p;
    const TrainReport r = train(o);
    LoadedDecoderOnly loaded = load_decoder_only_checkpoint(r.checkpoint_path);
    loaded.model->eval();
    const Tokenizer& tokenizer = loaded.info.target_tokenizer;
    const double trained = held_out_loss(*loaded.model, tokenizer, 64),
                 longer = held_out_loss(*loaded.model, tokenizer, 128);
    std::printf("  %-11s  %10lld   %17.4f   %18.4f\n", positions_name(p), ll(loaded.model->parameter_count()), trained,
                longer);
    losses.push_back({trained, longer});
  }
  if (!quick)
    claim(losses[2][0] < std::min(losses[0][0], losses[1][0]) && losses[2][1] < std::min(losses[0][1], losses[1][1]),
          "rotary positions give the lowest held-out loss, at the trained length and at twice it");
}

// ---- 3. SwiGLU ---------------------------------------------------------------------------------------

// The three feed-forward networks at the same parameter count: no biases anywhere, d_ff 3 d for ReLU
// and GELU (two matrices, 2 d d_ff), and 2/3 of it for SwiGLU (three matrices, 3 d d_ff).
void swiglu_training(bool quick) {
  section("ReLU, GELU or SwiGLU at equal parameters");
  std::printf("  activation   d_ff   feed-forward per block   parameters   validation loss\n");
  std::vector<int64_t> counts;
  std::vector<double> losses;
  for (const Activation a : {Activation::ReLU, Activation::GELU, Activation::SwiGLU}) {
    TrainOptions o = text_lm(quick, std::string("ffn-") + activation_name(a));
    o.activation = a, o.block.bias = Bias::None;
    o.d_ff = a == Activation::SwiGLU ? 2 * o.d_model : 3 * o.d_model;
    const int64_t matrices = a == Activation::SwiGLU ? 3 : 2;
    const TrainReport r = train(o);
    std::printf("  %-10s   %4lld   %22lld   %10lld   %15.4f\n", activation_name(a), ll(o.d_ff),
                ll(matrices * o.d_model * o.d_ff), ll(parameters_of(r)), r.valid_loss);
    counts.push_back(parameters_of(r)), losses.push_back(r.valid_loss);
  }
  claim(counts[0] == counts[1] && counts[1] == counts[2], "the three feed-forward networks have equal parameters");
  if (!quick) claim(losses[2] < std::min(losses[0], losses[1]), "SwiGLU learns the most at equal parameters");
}

// ---- 4. grouped-query attention ------------------------------------------------------------------------

// The key/value cache of one token: a key and a value of d_k numbers for each of the N key/value heads
// of each of the L blocks, 4 bytes each in float32.
int64_t cache_bytes_per_token(const TransformerConfig& c) {
  return 2 * c.layers * c.layer().kv_heads() * c.layer().head_dim() * 4;
}

void cache_sizes() {
  section("the key/value cache of one token");
  TransformerConfig c = hub_preset_config("smollm2-135m");
  std::printf("SmolLM2-135M's shape: L %lld, H %lld, d_k %lld\n", ll(c.layers), ll(c.heads), ll(c.layer().head_dim()));
  std::printf("  attention      N   bytes/token   at 8192 tokens\n");
  for (const auto& [name, n] : std::vector<std::pair<const char*, int64_t>>{
           {"multi-head", c.heads}, {"grouped", c.block.kv_heads}, {"multi-query", 1}}) {
    c.block.kv_heads = n;
    const int64_t bytes = cache_bytes_per_token(c);
    std::printf("  %-12s  %2lld   %11lld   %11.1f MB\n", name, ll(n), ll(bytes),
                static_cast<double>(bytes) * 8192 / 1e6);
  }
  c.block.kv_heads = 3;
}

// Tokens per second of generation after a long prompt, with H = 8 query heads and N key/value heads:
// a model whose cache is large beside its weights (d 128, 2 blocks), random weights, one sequence.
void generation_speed(bool quick) {
  section("generating after a long prompt");
  const int64_t prompt = quick ? 128 : 2048, generated = quick ? 8 : 32;
  std::printf("d 128, 2 blocks, 8 query heads of 16, V 256, a prompt of %lld tokens, then %lld generated\n", ll(prompt),
              ll(generated));
  std::printf("  N   cache MB   tokens/s\n");
  for (const int64_t n : {8, 2, 1}) {
    TransformerConfig c = llama_config(256);
    c.d_model = 128, c.heads = 8, c.layers = 2, c.d_ff = 344, c.max_len = prompt + generated + 1, c.block.kv_heads = n;
    DecoderOnly model(c, /*seed=*/1);
    model.eval();
    NoGradGuard no_grad;
    Generator gen(2);
    DecoderOnlyCache cache = model.start_cache();
    model.forward_step(randint({1, prompt}, 0, 256, gen), cache);
    const Tensor next = randint({1, 1}, 0, 256, gen);
    model.forward_step(next, cache);  // one token untimed: the first pays for what later ones reuse
    const double seconds = wall_seconds([&] {
      for (int64_t i = 0; i < generated; ++i) model.forward_step(next, cache);
    });
    std::printf("  %lld   %8.1f   %8.0f\n", ll(n),
                static_cast<double>(cache_bytes_per_token(c) * (prompt + generated + 1)) / 1e6,
                static_cast<double>(generated) / seconds);
  }
}

void grouped_training(bool quick) {
  section("4 query heads sharing 4, 2 or 1 key/value heads");
  std::printf("  N   cache bytes/token   parameters   validation loss\n");
  for (const int64_t n : {4, 2, 1}) {
    TrainOptions o = text_lm(quick, "kv-heads-" + std::to_string(n));
    o.block.kv_heads = n;
    const TrainReport r = train(o);
    const TransformerConfig c = with_model_options(decoder_only_config(1), o);
    std::printf("  %lld   %17lld   %10lld   %15.4f\n", ll(n), ll(cache_bytes_per_token(c)), ll(parameters_of(r)),
                r.valid_loss);
  }
}

// ---- 5. Llama's block, SmolLM2-135M, and a model in the hub's layout ------------------------------

void smollm2() {
  section("SmolLM2-135M, counted");
  const TransformerConfig c = hub_preset_config("smollm2-135m");
  const int64_t n = decoder_only_parameter_count(c);
  std::printf("V %lld, d %lld, L %lld, H %lld, N %lld, d_ff %lld, tied: %lld parameters (%.1f MB in float32)\n",
              ll(c.tgt_vocab), ll(c.d_model), ll(c.layers), ll(c.heads), ll(c.block.kv_heads), ll(c.d_ff), ll(n),
              static_cast<double>(n) * 4 / 1e6);
  claim(n == 134515008, "SmolLM2-135M has 134,515,008 parameters");
}

// A small random Llama written as the hub lays it out: config.json and model.safetensors, the
// hub's names; q, k and v are row blocks of gradformer's in_proj_weight.
void write_llama_folder(const DecoderOnly& model, const fs::path& dir) {
  const TransformerConfig& c = model.config();
  const int64_t q = c.heads * c.layer().head_dim(), kv = c.layer().kv_heads() * c.layer().head_dim();
  StateDict mine = model.state_dict(), hub;
  hub["model.embed_tokens.weight"] = mine.at("embed.weight");
  for (int64_t i = 0; i < c.layers; ++i) {
    const std::string g = "decoder.layers." + std::to_string(i) + ".", h = "model.layers." + std::to_string(i) + ".";
    const Tensor& in = mine.at(g + "self_attn.in_proj_weight");  // [q + 2 kv, d]: W^Q; W^K; W^V
    hub[h + "self_attn.q_proj.weight"] = in.narrow(0, 0, q).contiguous();
    hub[h + "self_attn.k_proj.weight"] = in.narrow(0, q, kv).contiguous();
    hub[h + "self_attn.v_proj.weight"] = in.narrow(0, q + kv, kv).contiguous();
    hub[h + "self_attn.o_proj.weight"] = mine.at(g + "self_attn.out_proj.weight");
    hub[h + "mlp.gate_proj.weight"] = mine.at(g + "linear1.weight");
    hub[h + "mlp.up_proj.weight"] = mine.at(g + "linear3.weight");
    hub[h + "mlp.down_proj.weight"] = mine.at(g + "linear2.weight");
    hub[h + "input_layernorm.weight"] = mine.at(g + "norm1.weight");
    hub[h + "post_attention_layernorm.weight"] = mine.at(g + "norm2.weight");
  }
  hub["model.norm.weight"] = mine.at("decoder.norm.weight");
  fs::create_directories(dir);
  save_safetensors(dir / "model.safetensors", hub);
  std::ofstream(dir / "config.json") << "{\"architectures\": [\"LlamaForCausalLM\"], \"model_type\": \"llama\", "
                                     << "\"vocab_size\": " << c.tgt_vocab << ", \"hidden_size\": " << c.d_model
                                     << ", \"intermediate_size\": " << c.d_ff << ", \"num_hidden_layers\": " << c.layers
                                     << ", \"num_attention_heads\": " << c.heads
                                     << ", \"num_key_value_heads\": " << c.block.kv_heads
                                     << ", \"max_position_embeddings\": " << c.max_len
                                     << ", \"rms_norm_eps\": 1e-05, \"rope_theta\": 10000.0, "
                                     << "\"tie_word_embeddings\": true, \"hidden_act\": \"silu\"}\n";
  std::printf("wrote %s: config.json and model.safetensors (%zu tensors)\n", dir.string().c_str(), hub.size());
}

void hub_import() {
  section("a Llama in the hub's layout, imported");
  const Tokenizer tokenizer = Tokenizer::bytes();
  TransformerConfig c = llama_config(tokenizer.size());
  c.d_model = 32, c.heads = 4, c.block.kv_heads = 2, c.d_ff = 64, c.layers = 2, c.max_len = 64;
  c.tie_embeddings = true;
  const DecoderOnly original(c, /*seed=*/3);
  const fs::path dir = output_path("llama-toy");
  write_llama_folder(original, dir);

  const HubConfig config = read_hub_config((dir / "config.json").string());
  const HubImport imported = import_hub(config, open_hub_tensors(dir.string()), tokenizer);
  const TransformerConfig& i = imported.info.config;
  std::printf("imported: %s, d %lld, L %lld, H %lld, N %lld, d_ff %lld, %s, %s, %s positions\n",
              architecture_name(i.arch), ll(i.d_model), ll(i.layers), ll(i.heads), ll(i.block.kv_heads), ll(i.d_ff),
              normalization_name(i.block.normalization), activation_name(i.activation), positions_name(i.positions));
  const std::vector<int64_t> prompt = tokenizer.encode("le chat dort");
  const Tensor ids = from_vector(prompt, {1, static_cast<int64_t>(prompt.size())});
  double largest = 0;
  {
    NoGradGuard no_grad;
    const Tensor mask = causal_mask(ids.size(1)).unsqueeze(0);
    const Tensor a = original.forward(ids, mask).value(), b = imported.model->forward(ids, mask).value();
    const std::vector<float> x = a.contiguous().to_vector<float>(), y = b.contiguous().to_vector<float>();
    for (size_t k = 0; k < x.size(); ++k) largest = std::max(largest, static_cast<double>(std::abs(x[k] - y[k])));
  }
  std::printf("largest difference between the imported model's logits and the original's: %g\n", largest);
  claim(largest == 0, "the import reproduces the model's logits exactly");
  Generator gen(1);
  const std::vector<int64_t> out =
      generate(*imported.model, tokenizer.encode("le chat"), {.max_tokens = 8, .temperature = 0, .eos = -1}, gen);
  std::printf("greedy continuation of \"le chat\", 8 byte tokens:");
  for (int64_t id : out) std::printf(" %lld", ll(id));
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0)
      quick = true;
    else {
      std::fprintf(stderr, "usage: 20-gpt2-to-llama [--quick]\n");
      return 2;
    }
  }
  rms_norm_example();
  rms_norm_training(quick);
  rotary_is_relative();
  draw_rotation(output_path("20-rotary.svg"));
  positions_training(quick);
  swiglu_training(quick);
  cache_sizes();
  generation_speed(quick);
  grouped_training(quick);
  smollm2();
  hub_import();

  if (failures > 0) std::printf("\n%d claim(s) failed\n", failures);
  return failures > 0 ? 1 : 0;
}
