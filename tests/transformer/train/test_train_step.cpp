// One training step (transformer/train/trainer.h, train_step) against the same step written out by
// hand on a twin model: the loss it returns, the clipped gradients it leaves, and Adam's first
// update, which moves every parameter by about lr * sign(gradient).
#include <cmath>

#include "nn/all.h"
#include "training_helpers.h"
#include "transformer/train/trainer.h"

using namespace gradformer;

namespace {

// No dropout, so the step's forward pass and the twin's compute the same numbers.
TransformerConfig no_dropout_config() {
  TransformerConfig c;
  c.src_vocab = 9, c.tgt_vocab = 9, c.d_model = 16, c.d_ff = 32, c.heads = 2, c.layers = 1;
  c.dropout = 0, c.max_len = 16;
  return c;
}

double squared_norm(const std::vector<Variable>& params) {
  double total = 0;
  for (const Variable& p : params)
    if (p.grad().defined())
      for (double g : p.grad().to_vector<double>()) total += g * g;
  return total;
}

}  // namespace

TEST_CASE("train_step: returns the loss before the update, clips to the global norm, then takes Adam's step") {
  EncoderDecoder model(no_dropout_config(), 4), twin(no_dropout_config(), 4);
  model.train(), twin.train();
  const Batch b = collate({{{4, 5, 6, 7}, {5, 6}}, {{8, 4}, {7, 8, 4}}}, {0, 1});  // the second source padded
  const CrossEntropyOptions loss{.ignore_index = Vocab::pad, .label_smoothing = 0.1};

  // The twin by hand: forward, loss, backward; its gradients' global norm before clipping.
  const Variable twin_loss = cross_entropy(teacher_forced_logits(twin, b), b.tgt_out, loss);
  twin_loss.backward();
  const double norm = std::sqrt(squared_norm(twin.parameters()));
  REQUIRE(norm > 0);
  const double clip = norm / 4;  // so clipping scales every gradient by about 1/4

  const std::vector<Variable> params = model.parameters(), twin_params = twin.parameters();
  std::vector<std::vector<double>> before;
  for (const Variable& p : params) before.push_back(p.value().to_vector<double>());
  Adam adam(params, {.lr = 0});
  const double lr = 1e-3;
  const double value = train_step(adam, translation_batch(model, {b}, loss), lr, clip);

  CHECK(test::same_bits({value}, {twin_loss.item()}));  // measured before the update
  CHECK(adam.lr() == lr);
  CHECK(std::sqrt(squared_norm(params)) == Approx(clip).epsilon(1e-5));
  for (size_t i = 0; i < params.size(); ++i) {
    INFO("parameter " << i);
    const std::vector<double> after = params[i].value().to_vector<double>();
    const Tensor& g = params[i].grad();
    if (!g.defined()) {  // no gradient reached it: Adam leaves it alone
      CHECK(after == before[i]);
      continue;
    }
    const std::vector<double> clipped = g.to_vector<double>(), unclipped = twin_params[i].grad().to_vector<double>();
    for (size_t k = 0; k < after.size(); ++k) {
      CHECK(clipped[k] == Approx(unclipped[k] * clip / (norm + 1e-6)).margin(1e-9));
      // First Adam step, bias-corrected: m_hat = g, v_hat = g^2, so p -= lr * g / (|g| + eps).
      CHECK(after[k] == Approx(before[i][k] - lr * clipped[k] / (std::fabs(clipped[k]) + 1e-9)).margin(1e-6));
    }
  }
  // The step moved the parameters: not all of them by zero.
  CHECK(params[0].value().to_vector<double>() != before[0]);
}

TEST_CASE("train_step: without clipping the gradients are the plain backward's") {
  EncoderDecoder model(no_dropout_config(), 6), twin(no_dropout_config(), 6);
  const Batch b = collate({{{4, 5}, {6, 7, 8}}}, {0});
  cross_entropy(teacher_forced_logits(twin, b), b.tgt_out, {.ignore_index = Vocab::pad}).backward();
  Adam adam(model.parameters(), {.lr = 0});
  (void)train_step(adam, translation_batch(model, {b}, {.ignore_index = Vocab::pad}), 0.0, 0);
  const std::vector<Variable> params = model.parameters(), twin_params = twin.parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    INFO("parameter " << i);
    REQUIRE(params[i].grad().defined() == twin_params[i].grad().defined());
    if (params[i].grad().defined()) CHECK(test::bitwise_equal(params[i].grad(), twin_params[i].grad()));
  }
}

TEST_CASE("train_step: a batch in pieces takes the whole batch's step (losses weighted by target tokens)") {
  EncoderDecoder model(no_dropout_config(), 5), twin(no_dropout_config(), 5);
  model.train(), twin.train();
  // Three pairs with 2, 4 and 1 target tokens (3, 5 and 2 with </s>): pieces of 3 + 2 and 5 tokens.
  const std::vector<EncodedPair> pairs = {{{4, 5}, {6, 7}}, {{4, 5, 6, 7, 8}, {5, 6, 7, 8}}, {{6}, {4}}};
  const Batch whole = collate(pairs, {0, 1, 2});
  const CrossEntropyOptions loss{.ignore_index = Vocab::pad, .label_smoothing = 0.1};
  const Variable twin_loss = cross_entropy(teacher_forced_logits(twin, whole), whole.tgt_out, loss);
  twin_loss.backward();
  Adam adam(model.parameters(), {.lr = 0});
  const double value =
      train_step(adam, translation_batch(model, {collate(pairs, {0, 2}), collate(pairs, {1})}, loss), 0.0, 0);
  // The mean over all 10 target tokens, whichever rectangles they were padded in.
  CHECK(value == Approx(twin_loss.item()).epsilon(1e-6));
  const std::vector<Variable> params = model.parameters(), twin_params = twin.parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    INFO("parameter " << i);
    REQUIRE(params[i].grad().defined() == twin_params[i].grad().defined());
    if (!params[i].grad().defined()) continue;
    const std::vector<double> g = params[i].grad().to_vector<double>(), h = twin_params[i].grad().to_vector<double>();
    for (size_t k = 0; k < g.size(); ++k) CHECK(g[k] == Approx(h[k]).margin(1e-6));
  }
}

TEST_CASE("train_step: a finite gradient whose squares overflow Adam's second moment is a divergence") {
  // loss = sum(p) * s: every gradient element is s, the global norm s * sqrt(2). Squared in float32,
  // 1e20 overflows (3.4e38 is the largest float32), so Adam's v would hold inf for good.
  Variable p(zeros({2}), /*requires_grad=*/true);
  Adam adam({p});
  const auto batch_with_slope = [&](double s) { return TrainBatch{{Piece{[=] { return sum(p) * s; }, 1}}}; };
  const std::string error =
      test::error_message<NonFiniteError>([&] { train_step(adam, batch_with_slope(1e20), 1e-3, /*clip=*/0); });
  CHECK(error.find("the gradient norm 1.41421e+20 is past 9.22337e+18, where its squares overflow float32 in Adam's "
                   "second moment") == 0);
  CHECK(p.value().to_vector<double>() == std::vector<double>{0, 0});  // no update was taken
  CHECK(adam.second_moment(0).to_vector<double>() == std::vector<double>{0, 0});
  // Clipped to a norm of 1 first, the same gradient is a step like any other.
  CHECK(std::isfinite(train_step(adam, batch_with_slope(1e20), 1e-3, /*clip=*/1)));
  for (double v : adam.second_moment(0).to_vector<double>()) CHECK(v == Approx(0.02 * 0.5).epsilon(1e-6));
  // Just inside the bound, v is large but finite: (1 - beta2) * g^2 with g = 6e18.
  Adam fresh({p});
  CHECK(std::isfinite(train_step(fresh, batch_with_slope(6e18), 1e-3, /*clip=*/0)));
  for (double v : fresh.second_moment(0).to_vector<double>()) CHECK(v == Approx(0.02 * 3.6e37).epsilon(1e-6));
}
