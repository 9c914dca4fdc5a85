#include "transformer/model/sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "autograd/all.h"
#include "nn/module.h"
#include "transformer/model/masks.h"

namespace gradformer {

void SamplingOptions::validate() const {
  if (max_tokens < 1) throw ValueError(message("generate: max_tokens must be at least 1, got ", max_tokens));
  if (!(temperature >= 0 && std::isfinite(temperature)))
    throw ValueError(message("generate: temperature must be at least 0, got ", temperature));
  if (top_k < 0) throw ValueError(message("generate: top_k must be at least 0 (0: all tokens), got ", top_k));
  if (!(top_p > 0 && top_p <= 1)) throw ValueError(message("generate: top_p must be in (0, 1], got ", top_p));
}

std::vector<double> next_token_distribution(const Tensor& logits, const SamplingOptions& o) {
  o.validate();
  if (logits.dim() != 1) throw ShapeError(message("next_token_distribution: logits must be [V], got ", logits.shape()));
  const std::vector<double> z = logits.to(DType::Float64).contiguous().to_vector<double>();
  const size_t V = z.size();
  std::vector<double> p(V, 0.0);
  const size_t best = static_cast<size_t>(std::max_element(z.begin(), z.end()) - z.begin());
  if (o.temperature == 0) {  // greedy: all the mass on the argmax (the first, on a tie)
    p[best] = 1;
    return p;
  }
  // p_i = exp((z_i - max z) / T) / sum_j exp((z_j - max z) / T)
  double total = 0;
  for (size_t i = 0; i < V; ++i) total += p[i] = std::exp((z[i] - z[best]) / o.temperature);
  for (double& v : p) v /= total;
  // The tokens by probability, most likely first (ties by id, so the order is deterministic).
  std::vector<size_t> order(V);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] > p[b]; });
  size_t keep = o.top_k > 0 ? std::min(V, static_cast<size_t>(o.top_k)) : V;  // top-k
  if (o.top_p < 1) {  // top-p: the smallest prefix whose mass reaches p
    double mass = 0;
    size_t n = 0;
    while (n < keep && mass < o.top_p) mass += p[order[n++]];
    keep = n;
  }
  double kept = 0;
  for (size_t r = 0; r < V; ++r) {
    if (r < keep)
      kept += p[order[r]];
    else
      p[order[r]] = 0;
  }
  for (double& v : p) v /= kept;
  return p;
}

int64_t sample_index(const std::vector<double>& p, Generator& gen) {
  const double u = gen.uniform();
  double cumulative = 0;
  int64_t last = -1;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] <= 0) continue;
    cumulative += p[i], last = static_cast<int64_t>(i);
    if (u < cumulative) return last;
  }
  return last;  // u within rounding of 1
}

std::vector<int64_t> generate(DecoderOnly& model, const std::vector<int64_t>& prompt, const SamplingOptions& o,
                              Generator& gen, const std::function<void(int64_t)>& on_token) {
  o.validate();
  if (prompt.empty()) throw ValueError("generate: the prompt must hold at least one token (usually <s>)");
  const int64_t max_len = model.config().max_len;
  if (static_cast<int64_t>(prompt.size()) + o.max_tokens > max_len + 1)
    throw ShapeError(message("generate: a prompt of ", prompt.size(), " tokens and ", o.max_tokens,
                             " new ones exceed the model's max_len ", max_len));
  InferenceGuard guard(model);
  std::vector<int64_t> sequence = prompt, generated;
  DecoderOnlyCache cache = model.start_cache();
  auto ids = [](const std::vector<int64_t>& v) { return from_vector(v, {1, static_cast<int64_t>(v.size())}); };
  // The first step reads the whole prompt (its positions see each other causally), later ones one token.
  Tensor next = ids(prompt);
  for (int64_t step = 0; step < o.max_tokens; ++step) {
    Variable logits;  // [1, Tn, V]
    if (o.use_cache) {
      logits = model.forward_step(next, cache);
    } else {
      const Tensor all = ids(sequence);
      logits = model.forward(all, causal_mask(all.size(1)).unsqueeze(0));
    }
    const Tensor last = logits.value().select(0, 0).select(0, logits.size(1) - 1);  // [V]: scores for the next token
    const int64_t token = sample_index(next_token_distribution(last, o), gen);
    generated.push_back(token), sequence.push_back(token);
    if (on_token) on_token(token);
    if (token == o.eos) break;
    next = ids({token});
  }
  return generated;
}

std::vector<int64_t> continue_sequence(DecoderOnly& model, const std::vector<int64_t>& prompt, const SamplingOptions& o,
                                       Generator& gen, const std::function<void(int64_t)>& on_token) {
  o.validate();
  if (prompt.empty()) throw ValueError("continue_sequence: the prompt must hold at least one token");
  const int64_t max_len = model.config().max_len;
  if (static_cast<int64_t>(prompt.size()) > max_len)
    throw ShapeError(
        message("continue_sequence: a prompt of ", prompt.size(), " tokens exceeds the model's max_len ", max_len));
  std::vector<int64_t> ids = prompt, generated;
  size_t start = 0;  // the window: ids[start:]
  for (int64_t left = o.max_tokens; left > 0;) {
    // A window reads at most max_len tokens and predicts one more past them: room for max_len + 1 - window.
    if (static_cast<int64_t>(ids.size() - start) > max_len)
      start = ids.size() - static_cast<size_t>(std::max<int64_t>(1, max_len / 2));
    const std::vector<int64_t> window(ids.begin() + static_cast<std::ptrdiff_t>(start), ids.end());
    SamplingOptions step = o;
    step.max_tokens = std::min(left, max_len + 1 - static_cast<int64_t>(window.size()));
    const std::vector<int64_t> got = generate(model, window, step, gen, on_token);
    ids.insert(ids.end(), got.begin(), got.end());
    generated.insert(generated.end(), got.begin(), got.end());
    if (got.back() == o.eos) break;  // generate gives at least one token
    left -= static_cast<int64_t>(got.size());
  }
  return generated;
}

}  // namespace gradformer
