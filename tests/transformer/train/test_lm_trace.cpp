// gradformer trace of a decoder-only model (lm_trace.h) on the tiny GPT-2 of tiny_gpt2.h: the
// attention rows are distributions hidden above the diagonal, layer 0's equal softmax(q k^T / sqrt(d_k))
// worked out here from the layer's weights, the next tokens' probabilities equal the softmax of
// model.forward's last row, and the text and the page show what they should.
#include <cmath>

#include "catch.h"
#include "tiny_gpt2.h"
#include "transformer/inspect/lm_trace.h"
#include "transformer/model/masks.h"

namespace gradformer {
namespace {

struct TinyGpt2 {
  Tokenizer tokens = tiny_gpt2::tokenizer();
  DecoderOnly model{tiny_gpt2::config(tokens.size()), 3};
};

// Layer 0's attention weights of head h, [T, T], in double from the layer's own parameters:
// a = LayerNorm_1(x); q = a W^Q_h^T, k = a W^K_h^T; softmax over k <= q of q . k / sqrt(d_k).
std::vector<double> layer0_weights(const DecoderOnly& model, const std::vector<int64_t>& ids, int64_t h) {
  const auto T = static_cast<int64_t>(ids.size());
  const int64_t d = model.config().d_model, dk = d / model.config().heads;
  const EncoderLayer& layer = (*model.decoder->layers)[0];
  const std::vector<double> a = layer.norm1->forward(model.embed_tokens(from_vector(ids, {1, T})))
                                    .value()
                                    .to(DType::Float64)
                                    .contiguous()
                                    .to_vector<double>();
  const std::vector<double> W =
      layer.self_attn->in_proj_weight.value().to(DType::Float64).contiguous().to_vector<double>();
  const std::vector<double> b =
      layer.self_attn->in_proj_bias.value().to(DType::Float64).contiguous().to_vector<double>();
  auto project = [&](int64_t t, int64_t row) {  // row of the stacked [3d, d] in_proj_weight
    double s = b[static_cast<size_t>(row)];
    for (int64_t j = 0; j < d; ++j) s += a[static_cast<size_t>(t * d + j)] * W[static_cast<size_t>(row * d + j)];
    return s;
  };
  std::vector<double> w(static_cast<size_t>(T * T), 0.0);
  for (int64_t q = 0; q < T; ++q) {
    std::vector<double> score(static_cast<size_t>(q + 1));
    double total = 0;
    for (int64_t k = 0; k <= q; ++k) {
      double s = 0;
      for (int64_t i = 0; i < dk; ++i) s += project(q, h * dk + i) * project(k, d + h * dk + i);
      score[static_cast<size_t>(k)] = std::exp(s / std::sqrt(static_cast<double>(dk)));
      total += score[static_cast<size_t>(k)];
    }
    for (int64_t k = 0; k <= q; ++k) w[static_cast<size_t>(q * T + k)] = score[static_cast<size_t>(k)] / total;
  }
  return w;
}

}  // namespace

TEST_CASE("lm trace: one H x T x T map per layer, rows summing to 1, zero above the diagonal") {
  TinyGpt2 t;
  const LmTrace trace = trace_prompt(t.model, t.tokens, "the cat is");
  const std::vector<int64_t> ids = t.tokens.encode("the cat is");
  CHECK(trace.ids == ids);
  REQUIRE(trace.attention.size() == 2);
  const auto T = static_cast<int64_t>(ids.size());
  for (const Tensor& layer : trace.attention) {
    REQUIRE(layer.shape() == Shape{4, T, T});
    const double* w = layer.data<double>();
    for (int64_t h = 0; h < 4; ++h)
      for (int64_t q = 0; q < T; ++q) {
        double sum = 0;
        for (int64_t k = 0; k < T; ++k) {
          const double v = w[(h * T + q) * T + k];
          if (k > q) CHECK(v == 0);
          sum += v;
        }
        CHECK(sum == Approx(1).epsilon(1e-6));
      }
  }
  CHECK(trace.pieces[5] == "Ġis");
  CHECK(trace.texts[5] == " is");
}

TEST_CASE("lm trace: layer 0's weights are softmax(q k^T / sqrt(d_k)) under the causal mask") {
  TinyGpt2 t;
  const LmTrace trace = trace_prompt(t.model, t.tokens, "the cat is");
  const auto T = static_cast<int64_t>(trace.ids.size());
  for (int64_t h = 0; h < 4; ++h) {
    const std::vector<double> expected = layer0_weights(t.model, trace.ids, h);
    const double* w = trace.attention[0].data<double>() + h * T * T;
    for (size_t i = 0; i < expected.size(); ++i) CHECK(w[i] == Approx(expected[i]).margin(1e-5));
  }
}

TEST_CASE("lm trace: the next tokens are the softmax of model.forward's last row, most likely first") {
  TinyGpt2 t;
  const LmTrace trace = trace_prompt(t.model, t.tokens, "the cat is", {.top = 10});
  const auto T = static_cast<int64_t>(trace.ids.size());
  InferenceGuard guard(t.model);
  const std::vector<float> z = t.model.forward(from_vector(trace.ids, {1, T}), causal_mask(T).unsqueeze(0))
                                   .value()
                                   .select(0, 0)
                                   .select(0, T - 1)
                                   .contiguous()
                                   .to_vector<float>();
  double total = 0;
  for (float v : z) total += std::exp(static_cast<double>(v));
  REQUIRE(trace.next.size() == 10);
  for (size_t r = 0; r < trace.next.size(); ++r) {
    const NextToken& n = trace.next[r];
    CHECK(n.probability == Approx(std::exp(static_cast<double>(z[static_cast<size_t>(n.id)])) / total).epsilon(1e-9));
    if (r > 0) CHECK(n.probability <= trace.next[r - 1].probability);
    CHECK(n.piece == t.tokens.piece(n.id));
  }
  int64_t best = 0;
  for (size_t i = 0; i < z.size(); ++i)
    if (z[i] > z[static_cast<size_t>(best)]) best = static_cast<int64_t>(i);
  CHECK(trace.next[0].id == best);
}

TEST_CASE("lm trace: scores that are not finite stop the trace, naming the position") {
  TinyGpt2 t;  // every weight finite, the final LayerNorm's gain 3e38: the scores overflow
  bool found = false;
  for (auto& [name, p] : t.model.named_parameters())
    if (name == "decoder.norm.weight") Tensor(p.value()).fill_(3e38), found = true;
  REQUIRE(found);
  CHECK_THROWS_MSG(trace_prompt(t.model, t.tokens, "the cat is", {.top = 10}), ValueError,
                   "trace: the model's scores for the token at position 6 hold ");
}

TEST_CASE("lm trace: a model of words reads <s> first") {
  const Vocab vocab = Vocab::build({{"le", "chat", "noir"}});
  TransformerConfig c = decoder_only_config(vocab.size());
  c.d_model = 8, c.heads = 2, c.layers = 3, c.d_ff = 16, c.max_len = 8;
  DecoderOnly model(c, 1);
  const LmTrace trace = trace_prompt(model, Tokenizer(vocab), "le chien noir", {.top = 3});
  CHECK(trace.pieces == std::vector<std::string>{"<s>", "le", "<unk>", "noir"});
  CHECK(trace.attention.size() == 3);
  CHECK(trace.attention[2].shape() == Shape{2, 4, 4});
  CHECK_THROWS_MSG(trace_prompt(model, Tokenizer(vocab), " "), ValueError, "trace: the prompt is empty");
  CHECK_THROWS_MSG(trace_prompt(model, Tokenizer(vocab), "le le le le le le le le"), DataError,
                   "trace: the prompt's 9 tokens do not fit the model's context of 8 tokens");
}

TEST_CASE("lm trace: the text shows the chosen heads, a long prompt's rows as their top keys") {
  TinyGpt2 t;
  const LmTrace trace = trace_prompt(t.model, t.tokens, "the cat is");
  const std::string all = lm_trace_text(trace);
  for (const char* head : {"layer 0 head 0\n", "layer 0 head 3\n", "layer 1 head 0\n", "layer 1 head 3\n"})
    CHECK(all.find(head) != std::string::npos);
  CHECK(all.find("   5 Ġis          ") != std::string::npos);
  const std::string one = lm_trace_text(trace, {.layer = 1, .head = 2});
  CHECK(one.find("layer 1 head 2\n") != std::string::npos);
  CHECK(one.find("layer 0 head") == std::string::npos);
  CHECK(one.find("layer 1 head 1") == std::string::npos);
  CHECK(one.find("->") == std::string::npos);
  const std::string keys = lm_trace_text(trace, {.layer = 0, .matrix_tokens = 3, .top_keys = 2});
  CHECK(keys.find("    0 the          ->  the (0) 100%\n") != std::string::npos);
  CHECK_THROWS_MSG(lm_trace_text(trace, {.layer = 2}), ValueError,
                   "trace: layer must be from 0 to 1 (the model has 2), got 2");
  CHECK_THROWS_MSG(lm_trace_html(trace, {.head = 4}), ValueError, "trace: head must be from 0 to 3");
}

TEST_CASE("lm trace: the page holds every token and a heatmap per head, and fetches nothing") {
  TinyGpt2 t;
  const LmTrace trace = trace_prompt(t.model, t.tokens, "the <cat> is");
  const std::string page = lm_trace_html(trace);
  for (const std::string& piece : trace.pieces) {
    std::string escaped = piece == "<" ? "&lt;" : piece == ">" ? "&gt;" : piece;
    CHECK(page.find("<b>" + escaped + "</b>") != std::string::npos);
  }
  size_t maps = 0;
  for (size_t at = page.find("<svg"); at != std::string::npos; at = page.find("<svg", at + 1)) ++maps;
  CHECK(maps == 2 * 4);
  // Nothing runs, nothing is fetched: no script, no source or link to load (the only address is SVG's namespace).
  for (const char* fetch : {"<script", "src=", "href=", "<link", "@import"})
    CHECK(page.find(fetch) == std::string::npos);
  for (size_t at = page.find("url("); at != std::string::npos; at = page.find("url(", at + 1))
    CHECK(page.substr(at, 5) == "url(#");  // a gradient defined in the page itself
  std::string addresses = page;
  for (size_t at; (at = addresses.find("http://www.w3.org/2000/svg")) != std::string::npos;) addresses.erase(at, 26);
  CHECK(addresses.find("http") == std::string::npos);
  size_t one_layer = 0;
  const std::string page1 = lm_trace_html(trace, {.layer = 1, .head = 0});
  for (size_t at = page1.find("<svg"); at != std::string::npos; at = page1.find("<svg", at + 1)) ++one_layer;
  CHECK(one_layer == 1);
}

}  // namespace gradformer

namespace gradformer {

TEST_CASE("lm trace: each head's habits, from weights made by hand: itself, the first token, the one before") {
  LmTrace t;
  t.config.heads = 3, t.config.tgt_vocab = 10;
  t.ids = {4, 5, 6, 7};
  t.pieces = t.texts = {"a", "b", "c", "d"};
  std::vector<double> w(3 * 4 * 4, 0.0);  // [H, T, T]
  for (size_t q = 0; q < 4; ++q) {
    w[(0 * 4 + q) * 4 + q] = 1;                     // head 0: itself
    w[(1 * 4 + q) * 4 + 0] = 1;                     // head 1: the first token
    w[(2 * 4 + q) * 4 + (q == 0 ? 0 : q - 1)] = 1;  // head 2: the token before
  }
  t.attention = {from_vector(w, {3, 4, 4})};
  const HeadHabits self = head_habits(t, 0, 0), first = head_habits(t, 0, 1), previous = head_habits(t, 0, 2);
  CHECK(self.self == Approx(1));
  CHECK(self.first == 0);
  CHECK(first.first == Approx(1));
  CHECK(first.previous == Approx(1.0 / 3));  // token 1's first token is the one before it
  CHECK(previous.previous == Approx(1));
  CHECK(previous.first == Approx(1.0 / 3));
  const std::string text = lm_trace_text(t);
  CHECK(text.find("          h0    h1    h2\nlayer 0  S 100 F 100 P 100\n") != std::string::npos);
}

}  // namespace gradformer

namespace gradformer {

TEST_CASE("lm trace: a page of more attention cells than kMaxPageCells is refused, naming --layer and --head") {
  LmTrace t;
  t.config.heads = 8;
  const int64_t T = 180;  // 8 heads x 180 x 180 = 259200 cells; one head: 32400
  t.ids.assign(T, 5);
  t.pieces.assign(T, "x"), t.texts.assign(T, "x");
  std::vector<double> w(static_cast<size_t>(8 * T * T), 0.0);
  for (int64_t h = 0; h < 8; ++h)
    for (int64_t q = 0; q < T; ++q) w[static_cast<size_t>((h * T + q) * T + q)] = 1;
  t.attention = {from_vector(w, {8, T, T})};
  CHECK_THROWS_MSG(lm_trace_html(t), PageSizeError,
                   "trace: the page would draw 8 heads of 180 x 180 tokens, more than 250000 cells: choose fewer with "
                   "--layer and --head");
  CHECK_THROWS_MSG(lm_trace_html(t, {.layer = 0}), ValueError, "would draw 8 heads");
  CHECK(lm_trace_html(t, {.head = 3}).find("<svg") != std::string::npos);
}

TEST_CASE("lm trace: a page too large is refused before the forward pass, not after every head's weights exist") {
  const Tokenizer tokens = tiny_gpt2::tokenizer();
  DecoderOnly model(tiny_gpt2::config(tokens.size(), /*context=*/200), 3);  // 2 layers x 4 heads
  // Scores that overflow make the forward pass itself fail (the test case above): the page's
  // refusal coming first shows that no forward pass ran.
  for (auto& [name, p] : model.named_parameters())
    if (name == "decoder.norm.weight") Tensor(p.value()).fill_(3e38);
  const std::string prompt(180, 'x');  // 180 byte tokens: 8 x 180 x 180 = 259200 cells
  CHECK_THROWS_MSG(trace_prompt(model, tokens, prompt, {.page = LmTraceView{}}), PageSizeError,
                   "trace: the page would draw 8 heads of 180 x 180 tokens, more than 250000 cells");
  // One head of one layer fits (32400 cells): the forward pass runs, and meets the overflow.
  CHECK_THROWS_MSG(trace_prompt(model, tokens, prompt, {.page = LmTraceView{.layer = 1, .head = 2}}), ValueError,
                   "hold ");
}

}  // namespace gradformer
