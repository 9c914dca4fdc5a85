// gradformer trace --train (transformer/inspect/train_trace.h): the loss it shows is the training
// loss of the model's own forward pass and the one score gives; its gradients are those of the
// model's own backward pass, and agree with gradients worked out by hand; its step is
// w <- w - lr dL/dw; its page is one self-contained document.
#include <cmath>

#include "catch.h"
#include "tiny_translator.h"
#include "transformer/data/batch.h"
#include "transformer/evaluate/evaluate.h"
#include "transformer/inspect/train_trace.h"
#include "transformer/model/masks.h"
#include "transformer/train/forward.h"

using namespace gradformer;

namespace {

const std::vector<std::string> kSource = {"je", "suis", "heureux", "."}, kTarget = {"i", "am", "happy", "."};

// The tracers' tiny translator, with the pair every test here traces.
struct TraceTranslator : TinyTranslator {
  using TinyTranslator::TinyTranslator;
  Batch batch() const { return collate({{source.encode(kSource), target.encode(kTarget)}}, {0}); }
  Tensor logits() const {  // [1, T, V], eval mode, the model's own forward pass
    InferenceGuard inference(*model);
    return teacher_forced_logits(*model, batch()).value();
  }
};

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// dL/dlogits of the mean label-smoothed cross-entropy over n positions, from first principles:
// row i is (softmax(logits_i) - q_i) / n with q_i = (1 - eps) onehot(target_i) + eps / V.  [T, V]
std::vector<std::vector<double>> logits_gradient(const Tensor& logits, const Tensor& tgt_out, double eps) {
  const Tensor z = logits.select(0, 0).to(DType::Float64).contiguous();
  const int64_t T = z.size(0), V = z.size(1);
  std::vector<std::vector<double>> g(static_cast<size_t>(T), std::vector<double>(static_cast<size_t>(V)));
  for (int64_t i = 0; i < T; ++i) {
    double largest = -1e300, total = 0;
    for (int64_t c = 0; c < V; ++c) largest = std::max(largest, z.at({i, c}));
    for (int64_t c = 0; c < V; ++c) total += std::exp(z.at({i, c}) - largest);
    for (int64_t c = 0; c < V; ++c) {
      const double q = (c == static_cast<int64_t>(tgt_out.at({0, i})) ? 1 - eps : 0) + eps / static_cast<double>(V);
      g[static_cast<size_t>(i)][static_cast<size_t>(c)] =
          (std::exp(z.at({i, c}) - largest) / total - q) / static_cast<double>(T);
    }
  }
  return g;
}

double norm_of(const std::vector<std::vector<double>>& rows) {
  double squares = 0;
  for (const auto& row : rows)
    for (double v : row) squares += v * v;
  return std::sqrt(squares);
}

const GradientAt& gradient(const TrainStepTrace& t, const std::string& stage, const std::string& name) {
  for (const BackwardStage& s : t.backward)
    if (s.name == stage)
      for (const GradientAt& g : s.gradients)
        if (g.name == name) return g;
  FAIL("no gradient " << name << " in " << stage);
  throw;
}

}  // namespace

TEST_CASE("trace --train: the loss is the training loss of the model's forward pass, and score's") {
  for (const NormPlacement norm : {NormPlacement::Post, NormPlacement::Pre}) {
    TraceTranslator tiny(norm);
    const Batch batch = tiny.batch();
    const double training_loss = [&] {
      InferenceGuard inference(*tiny.model);
      return cross_entropy(teacher_forced_logits(*tiny.model, batch), batch.tgt_out,
                           {.ignore_index = Vocab::pad, .label_smoothing = 0.1})
          .item();
    }();
    const double score = sentence_log_probs(*tiny.model, batch)[0];
    const TrainStepTrace t =
        trace_train_step(*tiny.model, tiny.source, tiny.target, kSource, kTarget, {.label_smoothing = 0.1});
    CHECK(tiny.model->is_training());  // eval for the step, and the mode given back
    CHECK(t.loss == training_loss);    // the same ops on the same bits
    REQUIRE(t.positions.size() == 5);  // i am happy . </s>
    const std::vector<std::string> in = {"<s>", "i", "am", "happy", "."}, out = {"i", "am", "happy", ".", "</s>"};
    double nll = 0, smoothed = 0;
    for (size_t i = 0; i < 5; ++i) {
      CHECK(t.positions[i].input == in[i]);
      CHECK(t.positions[i].target == out[i]);
      CHECK(t.positions[i].loss == Approx(-std::log(t.positions[i].probability)));
      CHECK(t.positions[i].smoothed_loss > t.positions[i].loss * 0.9);
      nll += t.positions[i].loss, smoothed += t.positions[i].smoothed_loss;
    }
    CHECK(-nll == Approx(score).epsilon(1e-5));           // score sums log P over the target and its </s>
    CHECK(nll / 5 == Approx(t.nll).epsilon(1e-12));       // the positions average to the mean
    CHECK(smoothed / 5 == Approx(t.loss).epsilon(1e-5));  // and the smoothed ones to the loss minimised
    CHECK(t.source_tokens == std::vector<std::string>{"je", "suis", "heureux", ".", "</s>"});
  }
}

TEST_CASE("trace --train: the gradients are the model's own, and those worked out by hand") {
  for (const NormPlacement norm : {NormPlacement::Post, NormPlacement::Pre}) {
    TraceTranslator tiny(norm), twin(norm);  // the same seed: the same parameters
    const double eps = 0.1;
    const Tensor logits = tiny.logits();
    const auto by_hand = logits_gradient(logits, tiny.batch().tgt_out, eps);
    const TrainStepTrace t =
        trace_train_step(*tiny.model, tiny.source, tiny.target, kSource, kTarget, {.label_smoothing = eps, .lr = 0});
    // the backward pass's order: the output first, the decoder top down, then the encoder top down
    std::vector<std::string> stages;
    for (const BackwardStage& s : t.backward) stages.push_back(s.name);
    CHECK(stages == std::vector<std::string>{"output layer", "decoder layer 1", "decoder layer 0", "target embedding",
                                             "encoder output", "encoder layer 1", "encoder layer 0",
                                             "source embedding"});
    CHECK(t.backward[1].gradients.size() == (norm == NormPlacement::Post ? 6u : 9u));  // 3 sub-layers
    CHECK(t.backward[5].gradients.size() == (norm == NormPlacement::Post ? 4u : 6u));  // 2 sub-layers

    // dL/dlogits = (softmax - q) / n
    const GradientAt& top = gradient(t, "output layer", "logits = y W^T + b");
    CHECK(top.shape == Shape{1, 5, tiny.target.size()});
    CHECK(top.norm == Approx(norm_of(by_hand)).epsilon(1e-5));
    // post-LN, the last decoder layer's output y feeds the logits alone: dL/dy = dL/dlogits W
    if (norm == NormPlacement::Post) {
      const Tensor W = tiny.model->output_projection->weight.value().to(DType::Float64).contiguous();  // [V, d]
      std::vector<std::vector<double>> dy(by_hand.size(), std::vector<double>(16, 0.0));
      for (size_t i = 0; i < by_hand.size(); ++i)
        for (int64_t c = 0; c < W.size(0); ++c)
          for (int64_t k = 0; k < 16; ++k)
            dy[i][static_cast<size_t>(k)] += by_hand[i][static_cast<size_t>(c)] * W.at({c, k});
      CHECK(gradient(t, "decoder layer 1", "add & norm (norm3)").norm == Approx(norm_of(dy)).epsilon(1e-4));
    }
    // x = E[id] sqrt(d) + PE: dL/dE[id] = sqrt(d) dL/dx
    for (const char* stage : {"source embedding", "target embedding"}) {
      const BackwardStage& s =
          *std::find_if(t.backward.begin(), t.backward.end(), [&](auto& b) { return b.name == stage; });
      CHECK(s.gradients[1].name == "E[id]");
      CHECK(s.gradients[1].norm == Approx(4 * s.gradients[0].norm).epsilon(1e-5));
    }

    // The parameters' gradients are those of the model's own forward and backward passes.
    twin.model->eval();
    for (const Variable& p : twin.model->parameters()) Variable(p).zero_grad();
    const Batch batch = twin.batch();
    cross_entropy(teacher_forced_logits(*twin.model, batch), batch.tgt_out,
                  {.ignore_index = Vocab::pad, .label_smoothing = eps})
        .backward();
    double all = 0;
    for (const ParameterGradient& g : t.parameter_gradients) {
      double squares = 0;
      int64_t parameters = 0;
      for (const auto& [name, p] : twin.model->named_parameters())
        if (name.rfind(g.name + ".", 0) == 0) {
          const Tensor d = p.grad().to(DType::Float64);
          squares += sum(d * d).item(), parameters += p.numel();
        }
      CHECK(g.parameters == parameters);
      CHECK(g.norm == Approx(std::sqrt(squares)).epsilon(1e-5));
      all += squares;
    }
    CHECK(t.gradient_norm == Approx(std::sqrt(all)).epsilon(1e-5));
    CHECK(t.parameter_gradients.front().name == "generator");
    CHECK(t.parameter_gradients.back().name == "src_embed");
    CHECK(t.parameter_gradients[1].name == (norm == NormPlacement::Post ? "decoder.layers.1" : "decoder.norm"));
  }
}

TEST_CASE("trace --train: the step is w <- w - lr dL/dw, and lowers the loss as lr |dL/dw|^2 says") {
  TraceTranslator tiny(NormPlacement::Post);
  const std::vector<std::pair<std::string, Variable>> parameters = tiny.model->named_parameters();
  std::vector<Tensor> before;
  for (const auto& [name, p] : parameters) before.push_back(p.value().clone());
  const double lr = 1e-3;
  const TrainStepTrace t = trace_train_step(*tiny.model, tiny.source, tiny.target, kSource, kTarget, {.lr = lr});
  for (size_t i = 0; i < parameters.size(); ++i) {  // SGD leaves the gradient it stepped along
    const Tensor moved = (parameters[i].second.value() - before[i]).to(DType::Float64);
    const Tensor expected = (parameters[i].second.grad() * -lr).to(DType::Float64);
    const Tensor gap = moved - expected;
    CHECK(max(maximum(gap, -gap)).item() < 1e-6);
  }
  // the loss after, measured again on the changed model
  const Batch batch = tiny.batch();
  const Tensor logits = tiny.logits();
  CHECK(t.loss_after == cross_entropy(Variable(logits), batch.tgt_out, {.ignore_index = Vocab::pad}).item());
  // to first order, a step of lr along -g lowers the loss by lr |g|^2
  CHECK(t.loss - t.loss_after == Approx(lr * t.gradient_norm * t.gradient_norm).epsilon(0.05));
  double nll_after = 0;
  for (const PositionLoss& p : t.positions) nll_after -= std::log(p.probability_after);
  CHECK(nll_after / 5 == Approx(t.nll_after).epsilon(1e-9));
  CHECK(t.loss_after < t.loss);
}

TEST_CASE("trace --train: dL/dlogits at a position is (P - q)/n, by hand and from backward") {
  TraceTranslator tiny(NormPlacement::Post);
  const double eps = 0.1;
  const Tensor logits = tiny.logits();
  const std::vector<std::vector<double>> by_hand = logits_gradient(logits, tiny.batch().tgt_out, eps);
  const auto V = static_cast<double>(tiny.target.size());
  const TrainStepTrace t =
      trace_train_step(*tiny.model, tiny.source, tiny.target, kSource, kTarget, {.label_smoothing = eps, .lr = 0});
  const LogitGradient& g = t.logit_gradient;
  // by default the position of the largest loss
  size_t worst = 0;
  for (size_t i = 1; i < t.positions.size(); ++i)
    if (t.positions[i].loss > t.positions[worst].loss) worst = i;
  CHECK(g.position == static_cast<int64_t>(worst));
  CHECK(g.tokens == 5);
  REQUIRE(g.rows.size() == 5);  // the right word, then the four most probable others
  CHECK(g.rows[0].token == t.positions[worst].target);
  CHECK(g.rows[0].q == Approx(1 - eps + eps / V));
  for (size_t r = 0; r < g.rows.size(); ++r) {
    const LogitGradientRow& row = g.rows[r];
    const double expected = by_hand[worst][static_cast<size_t>(row.id)];
    CHECK(row.formula == Approx(expected).margin(1e-9));
    CHECK(row.backward == Approx(expected).margin(1e-7));  // float32's backward against float64's formula
    CHECK(row.p == Approx(t.positions[worst].probability).margin(r == 0 ? 1e-6 : 1.0));
    if (r > 0) CHECK(row.q == Approx(eps / V));
    if (r > 1) CHECK(row.p <= g.rows[r - 1].p);
  }
  CHECK(g.largest_difference < 1e-7);
  // a chosen position and fewer rows; a position outside the target refused
  const TrainStepTrace at2 = trace_train_step(*tiny.model, tiny.source, tiny.target, kSource, kTarget,
                                              {.label_smoothing = eps, .lr = 0, .position = 2, .top = 3});
  CHECK(at2.logit_gradient.position == 2);
  CHECK(at2.logit_gradient.rows.size() == 3);
  CHECK(at2.logit_gradient.rows[0].token == "happy");
  CHECK_THROWS_MSG(trace_train_step(*tiny.model, tiny.source, tiny.target, kSource, kTarget, {.position = 5}),
                   ValueError,
                   "trace_train_step: position 5 is not one of the target's 5 positions (0 to 4; -1: the one of the "
                   "largest loss)");
  CHECK_THROWS_MSG(trace_train_step(*tiny.model, tiny.source, tiny.target, kSource, kTarget, {.top = 0}), ValueError,
                   "trace_train_step: top must be from 1 to 1000, got 0");
}

TEST_CASE("trace --train: Adam's first step moves the weight of the largest gradient by lr, SGD's by lr g") {
  TraceTranslator tiny(NormPlacement::Pre);
  const double lr = 0.5;
  const TrainStepTrace t = trace_train_step(*tiny.model, tiny.source, tiny.target, kSource, kTarget, {.lr = lr});
  const AdamStepAt& a = t.adam;
  REQUIRE(!a.parameter.empty());
  CHECK(a.parameter.find('[') != std::string::npos);
  // the largest |dL/dw| of any weight: SGD's step leaves the gradients it stepped along
  double largest = 0;
  for (const auto& [name, p] : tiny.model->named_parameters()) {
    const Tensor g = p.grad().to(DType::Float64);
    largest = std::max(largest, max(maximum(g, -g)).item());
  }
  CHECK(std::abs(a.g) == Approx(largest));
  // m = (1 - 0.9) g, v = (1 - 0.98) g^2; bias-corrected, m/0.1 = g and v/0.02 = g^2: the step is -lr sign(g)
  CHECK(a.m == Approx(0.1 * a.g));
  CHECK(a.v == Approx(0.02 * a.g * a.g));
  CHECK(a.adam_update == Approx(a.g > 0 ? -lr : lr).epsilon(1e-6));
  CHECK(a.sgd_update == Approx(-lr * a.g));
}

TEST_CASE("trace --train: the text and the page show every stage and every word") {
  TraceTranslator tiny(NormPlacement::Pre);
  const TrainStepTrace t = trace_train_step(*tiny.model, tiny.source, tiny.target, {"je", "suis", "triste", "."},
                                            kTarget, {.label_smoothing = 0.1});
  CHECK(t.unknown == std::vector<bool>{false, false, true, false});
  const std::string text = train_trace_text(t);
  for (const char* part :
       {"1. The pair", "je=", "triste=3", "tgt_in:   <s> i am happy .", "tgt_out:  i am happy . </s>",
        "1 word not in the vocabularies became <unk>", "label-smoothed cross-entropy, eps 0.1",
        "3. Where the backward pass starts: dL/dlogits at position", "(P - q)/n", "4. Backward", "decoder layer 1",
        "encoder layer 0", "memory (what cross-attention reads)", "5. Parameter gradients", "decoder.layers.0",
        "6. One gradient-descent step (SGD", "7. What training's optimizer, Adam, would do instead"})
    CHECK(text.find(part) != std::string::npos);
  const std::string page = train_trace_html(t);
  CHECK(page.rfind("<!DOCTYPE html>", 0) == 0);
  // the pair, the loss, dL/dlogits, backward, the parameters, the step, Adam's
  CHECK(count(page, "<section>") == 7);
  CHECK(count(page, "class='token unk'") == 1);
  // every word of the pair as a token card, every layer and parameter group by name
  for (const char* word : {"je", "suis", "triste", ".", "&lt;/s&gt;", "&lt;s&gt;", "i", "am", "happy",
                           "decoder layer 1", "encoder layer 0", "source embedding"})
    CHECK(page.find(std::string("<b>") + word + "</b>") != std::string::npos);
  for (const char* part : {"<td>src_embed</td>", "<td>decoder.layers.1</td>", "label-smoothed cross-entropy"})
    CHECK(page.find(part) != std::string::npos);
  CHECK(page.find("<script") == std::string::npos);  // nothing runs, nothing is fetched
  CHECK(page.find("<link") == std::string::npos);
  CHECK(page.find("src=") == std::string::npos);
  CHECK(page.find("One training step: &ldquo;je suis triste .&rdquo; &rarr; &ldquo;i am happy .&rdquo;") !=
        std::string::npos);
}

TEST_CASE("trace --train: bad requests are errors naming the problem") {
  TraceTranslator tiny(NormPlacement::Post);
  CHECK_THROWS_MSG(trace_train_step(*tiny.model, tiny.source, tiny.target, {}, kTarget), ValueError,
                   "trace_train_step: the source sentence is empty");
  CHECK_THROWS_MSG(trace_train_step(*tiny.model, tiny.source, tiny.target, kSource, {}), ValueError,
                   "the target sentence is empty");
  CHECK_THROWS_MSG(trace_train_step(*tiny.model, tiny.source, tiny.target, kSource, kTarget, {.lr = -1}), ValueError,
                   "lr must be a finite number at least 0, got -1");
  CHECK_THROWS_MSG(trace_train_step(*tiny.model, tiny.source, tiny.target, kSource, kTarget, {.label_smoothing = 1}),
                   ValueError, "label_smoothing must be in [0, 1), got 1");
  CHECK_THROWS_MSG(trace_train_step(*tiny.model, tiny.source, tiny.target, std::vector<std::string>(40, "je"), kTarget),
                   DataError, "the source has 40 tokens; this model takes at most 31");
  CHECK_THROWS_MSG(trace_train_step(*tiny.model, tiny.source, tiny.target, kSource, std::vector<std::string>(32, "i")),
                   DataError, "the target has 32 tokens; this model takes at most 31");
}
