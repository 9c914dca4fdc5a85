// import_hub: small random models in the hub's layout (a Llama with grouped-query attention and
// llama3 rotary scaling, untied; a Qwen2 with q, k, v biases and one key/value head, tied; a Llama
// whose head width is not d / H), imported and compared, logit by logit, with llama_reference.h's
// float64 model written from the published equations over the hub's own tensors.
#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
#include <vector>

#include "hub_folder_files.h"
#include "llama_reference.h"
#include "tensor/all.h"
#include "transformer/model/masks.h"
#include "transformer/store/import_hub.h"

namespace {

using namespace gradformer;

struct Case {
  std::string name, model_type;
  llama_reference::Sizes sizes;
  bool qkv_bias = false;
};

// Uniform in [lo, hi) from a 64-bit linear congruential generator: the test's own numbers.
struct Numbers {
  uint64_t state;
  double next(double lo, double hi) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return lo + (hi - lo) * static_cast<double>(state >> 11) / 9007199254740992.0;
  }
};

constexpr int64_t kVocab = 13;  // the 4 specials and 9 words of the test's tokenizer

StateDict random_state(const Case& c, uint64_t seed) {
  const llama_reference::Sizes& s = c.sizes;
  Numbers r{seed};
  StateDict out;
  auto add = [&](const std::string& name, Shape shape, double lo, double hi) {
    Tensor t = Tensor::empty(shape);
    for (int64_t k = 0; k < t.numel(); ++k) t.data<float>()[k] = static_cast<float>(r.next(lo, hi));
    out[name] = t;
  };
  const int64_t q = s.heads * s.head_dim, kv = s.kv_heads * s.head_dim;
  add("model.embed_tokens.weight", {kVocab, s.d}, -1, 1);
  for (int64_t i = 0; i < s.layers; ++i) {
    const std::string l = "model.layers." + std::to_string(i) + ".";
    add(l + "input_layernorm.weight", {s.d}, 0.8, 1.2);
    add(l + "self_attn.q_proj.weight", {q, s.d}, -0.5, 0.5);
    add(l + "self_attn.k_proj.weight", {kv, s.d}, -0.5, 0.5);
    add(l + "self_attn.v_proj.weight", {kv, s.d}, -0.5, 0.5);
    if (c.qkv_bias) {
      add(l + "self_attn.q_proj.bias", {q}, -0.3, 0.3);
      add(l + "self_attn.k_proj.bias", {kv}, -0.3, 0.3);
      add(l + "self_attn.v_proj.bias", {kv}, -0.3, 0.3);
    }
    add(l + "self_attn.o_proj.weight", {s.d, q}, -0.5, 0.5);
    add(l + "post_attention_layernorm.weight", {s.d}, 0.8, 1.2);
    add(l + "mlp.gate_proj.weight", {s.ff, s.d}, -0.5, 0.5);
    add(l + "mlp.up_proj.weight", {s.ff, s.d}, -0.5, 0.5);
    add(l + "mlp.down_proj.weight", {s.d, s.ff}, -0.5, 0.5);
  }
  add("model.norm.weight", {s.d}, 0.8, 1.2);
  if (!s.tied) add("lm_head.weight", {kVocab, s.d}, -1, 1);
  return out;
}

std::string config_text(const Case& c) {
  const llama_reference::Sizes& s = c.sizes;
  hub_test::Members m = {{"model_type", "\"" + c.model_type + "\""},
                         {"vocab_size", std::to_string(kVocab)},
                         {"hidden_size", std::to_string(s.d)},
                         {"intermediate_size", std::to_string(s.ff)},
                         {"num_hidden_layers", std::to_string(s.layers)},
                         {"num_attention_heads", std::to_string(s.heads)},
                         {"num_key_value_heads", std::to_string(s.kv_heads)},
                         {"head_dim", std::to_string(s.head_dim)},
                         {"max_position_embeddings", "64"},
                         {"rms_norm_eps", gradformer::message(s.eps)},
                         {"rope_theta", gradformer::message(s.theta)},
                         {"tie_word_embeddings", s.tied ? "true" : "false"},
                         {"hidden_act", "\"silu\""}};
  if (s.scale_factor > 0)
    m.push_back({"rope_scaling", gradformer::message("{\"rope_type\": \"llama3\", \"factor\": ", s.scale_factor,
                                                     ", \"low_freq_factor\": ", s.low, ", \"high_freq_factor\": ",
                                                     s.high, ", \"original_max_position_embeddings\": ", s.original,
                                                     "}")});
  return hub_test::config({}, {}, m);
}

Tokenizer nine_words() {
  return Tokenizer(Vocab::build({{"a", "b", "c", "d", "e", "f", "g", "h", "i"}}));  // 4 specials + 9 = 13
}

const Case kCases[] = {
    // grouped-query attention (4 heads, 2 key/value heads), llama3 scaling over an original length of
    // 16 (so the 4 frequencies of hd 8 fall in all three bands), untied
    {"llama, grouped-query, llama3 scaling, untied", "llama",
     {.d = 16, .heads = 4, .kv_heads = 2, .head_dim = 4, .ff = 24, .layers = 2, .eps = 1e-5, .theta = 500000,
      .scale_factor = 8, .low = 1, .high = 4, .original = 16}},
    {"qwen2, q/k/v biases, multi-query, tied", "qwen2",
     {.d = 16, .heads = 4, .kv_heads = 1, .head_dim = 4, .ff = 20, .layers = 2, .eps = 1e-6, .theta = 1000000,
      .tied = true},
     true},
    {"llama, head width 8 with d 16 and 4 heads (H hd = 32 != d)", "llama",
     {.d = 16, .heads = 4, .kv_heads = 4, .head_dim = 8, .ff = 24, .layers = 3, .eps = 1e-5, .theta = 10000}},
};

}  // namespace

TEST_CASE("import_hub: each model's logits are the float64 reference's, from the hub's own tensors, to 1e-5") {
  for (const Case& c : kCases) {
    SECTION(c.name) {
      const test::TempDir dir("import-hub");
      const StateDict state = random_state(c, 7);
      hub_test::write_single_file_folder(dir, state, config_text(c));
      const HubImport imported =
          import_hub(read_hub_config(dir / "config.json"), open_hub_tensors(dir.path().string()), nine_words());
      const std::vector<int64_t> ids = {1, 5, 9, 12, 4, 7, 7, 2, 11, 6, 3, 8};
      const Tensor logits =
          imported.model->forward(from_vector(ids, {1, static_cast<int64_t>(ids.size())}),
                                  causal_mask(static_cast<int64_t>(ids.size())).unsqueeze(0))
              .value();
      const llama_reference::Matrix expected = llama_reference::logits(state, ids, c.sizes);
      double worst = 0;
      for (size_t t = 0; t < ids.size(); ++t)
        for (int64_t v = 0; v < kVocab; ++v)
          worst = std::max(worst, std::abs(logits.at({0, static_cast<int64_t>(t), v}) - expected[t][v]));
      INFO("largest difference " << worst);
      CHECK(worst < 1e-5);
    }
  }
}
