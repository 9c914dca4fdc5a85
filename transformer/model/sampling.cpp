#include "transformer/model/sampling.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
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

namespace {

// logits [V] -> p_i = exp((z_i - max z) / T) / sum_j exp((z_j - max z) / T); one-hot on the argmax
// (the first, on a tie) when T is 0.
std::vector<double> softmax_at_temperature(const Tensor& logits, const SamplingOptions& o) {
  o.validate();
  if (logits.dim() != 1) throw ShapeError(message("next_token_distribution: logits must be [V], got ", logits.shape()));
  std::vector<double> z = logits.to(DType::Float64).contiguous().to_vector<double>();
  const size_t V = z.size();
  for (const int64_t id : o.never) {
    if (id < 0 || static_cast<size_t>(id) >= V)
      throw ValueError(message("generate: never names id ", id, ", which is not one of the ", V, " ids"));
    z[static_cast<size_t>(id)] = -std::numeric_limits<double>::infinity();  // exp(-inf) = 0
  }
  const auto masked = [](double v) { return std::isinf(v) && v < 0; };
  if (!o.never.empty() && std::all_of(z.begin(), z.end(), masked))
    throw ValueError(message("generate: never names every one of the ", V, " ids: none is left to draw"));
  std::vector<double> p(V, 0.0);
  const size_t best = static_cast<size_t>(std::max_element(z.begin(), z.end()) - z.begin());
  if (o.temperature == 0) {
    p[best] = 1;
    return p;
  }
  double total = 0;
  for (size_t i = 0; i < V; ++i) total += p[i] = std::exp((z[i] - z[best]) / o.temperature);
  for (double& v : p) v /= total;
  return p;
}

// Whether top-k or top-p removes any token: if not, the distribution is the softmax renormalised
// by its own sum, and no token needs to be ranked.
bool cuts_tokens(const SamplingOptions& o, size_t V) {
  return o.temperature > 0 && ((o.top_k > 0 && static_cast<size_t>(o.top_k) < V) || o.top_p < 1);
}

// The `count` most likely tokens, most likely first, ties by id: the first `count` of a stable sort
// by falling probability, selected without ordering the rest (partial_sort, O(V log count)).
std::vector<size_t> most_likely(const std::vector<double>& p, size_t count) {
  std::vector<size_t> order(p.size());
  std::iota(order.begin(), order.end(), 0);
  auto before = [&](size_t a, size_t b) { return p[a] > p[b] || (p[a] == p[b] && a < b); };
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(count), order.end(), before);
  order.resize(count);
  return order;
}

// p's sum added most likely first, as the kept mass of the ranked tokens always was: equal values
// add the same in any order, so sorting the values alone gives the same bits as ranking the tokens.
double sum_most_likely_first(const std::vector<double>& p) {
  std::vector<double> values = p;
  std::sort(values.begin(), values.end(), std::greater<>());
  double sum = 0;
  for (const double v : values) sum += v;
  return sum;
}

// The index sample_index draws with the uniform number u: the first whose cumulative mass exceeds u,
// each probability p_i / scale (scale 1: p itself); -1 when u is past the total (the caller decides).
int64_t first_past(const std::vector<double>& p, double scale, double u) {
  double cumulative = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const double q = scale == 1 ? p[i] : p[i] / scale;
    if (q <= 0) continue;
    cumulative += q;
    if (u < cumulative) return static_cast<int64_t>(i);
  }
  return -1;
}

int64_t index_at(const std::vector<double>& p, double u) {
  if (const int64_t i = first_past(p, 1, u); i >= 0) return i;
  for (size_t i = p.size(); i-- > 0;)
    if (p[i] > 0) return static_cast<int64_t>(i);  // u within rounding of 1: the last possible index
  return -1;
}

}  // namespace

std::vector<double> next_token_distribution(const Tensor& logits, const SamplingOptions& o) {
  std::vector<double> p = softmax_at_temperature(logits, o);
  const size_t V = p.size();
  if (o.temperature == 0) return p;
  if (!cuts_tokens(o, V)) {
    const double kept = sum_most_likely_first(p);
    for (double& v : p) v /= kept;
    return p;
  }
  // top-k: the k most likely; top-p: of those, the fewest most likely whose mass reaches p. Without
  // top-k, top-p's prefix can be any length: rank every token.
  const size_t keep_k = o.top_k > 0 ? std::min(V, static_cast<size_t>(o.top_k)) : V;
  const std::vector<size_t> order = most_likely(p, keep_k);
  size_t keep = keep_k;
  if (o.top_p < 1) {
    double mass = 0;
    size_t n = 0;
    while (n < keep && mass < o.top_p) mass += p[order[n++]];
    keep = n;
  }
  double kept = 0;
  std::vector<double> cut(V, 0.0);
  for (size_t r = 0; r < keep; ++r) kept += cut[order[r]] = p[order[r]];
  for (double& v : cut) v /= kept;
  return cut;
}

int64_t sample_index(const std::vector<double>& p, Generator& gen) { return index_at(p, gen.uniform()); }

// Without top-k and top-p the drawn token is index_at(p / K, u), K being p's sum added most likely
// first. K needs a sort, but it is known to lie within rounding of S, p's sum in index order: two
// sums of the same V non-negative numbers each differ from the exact one by at most (V - 1) eps/2 of
// it. p_i / K falls as K grows and so does every cumulative sum (rounding is monotone), so the drawn
// index can only rise with K: when K's lowest and highest possible values draw the same index,
// K draws it too, and no sort is needed. Otherwise (u within a few roundings of a boundary: about
// once in 10^12 draws), K is computed as next_token_distribution does.
int64_t sample_next_token(const Tensor& logits, const SamplingOptions& o, Generator& gen) {
  if (o.temperature == 0 || (logits.dim() == 1 && cuts_tokens(o, static_cast<size_t>(logits.size(0)))))
    return sample_index(next_token_distribution(logits, o), gen);
  const std::vector<double> p = softmax_at_temperature(logits, o);
  const double u = gen.uniform();
  double index_order_sum = 0;
  for (const double v : p) index_order_sum += v;
  const double margin = 8 * static_cast<double>(p.size()) * std::numeric_limits<double>::epsilon();
  const int64_t low = first_past(p, index_order_sum * (1 - margin), u);
  const int64_t high = first_past(p, index_order_sum * (1 + margin), u);
  if (low >= 0 && low == high) return low;
  return index_at(next_token_distribution(logits, o), u);
}

namespace {

Tensor row_of_ids(const std::vector<int64_t>& v) { return from_vector(v, {1, static_cast<int64_t>(v.size())}); }

// The token drawn from the last position's scores (logits [1, Tn, V]), the next one at `position`.
// Finite weights can still overflow (a LayerNorm gain of 3e38): greedy would take token 0 forever
// and sampling would stop at once. Say so, and where.
int64_t draw_next(const Variable& logits, int64_t position, const SamplingOptions& o, Generator& gen) {
  const Tensor last = logits.value().select(0, 0).select(0, logits.size(1) - 1);  // [V]: scores for the next token
  if (double bad = 0; first_non_finite(last, &bad))
    throw ValueError(message("generate: the model's scores for the token at position ", position, " hold ", bad,
                             ": its arithmetic overflows there (weights finite but too large?)"));
  return sample_next_token(last, o, gen);
}

}  // namespace

std::vector<int64_t> generate_after(DecoderOnly& model, DecoderOnlyCache& cache, const std::vector<int64_t>& fresh,
                                    const SamplingOptions& o, Generator& gen,
                                    const std::function<void(int64_t)>& on_token) {
  o.validate();
  if (fresh.empty()) throw ValueError("generate: the prompt must hold at least one token (usually <s>)");
  const int64_t max_len = model.config().max_len, read = cache.length + static_cast<int64_t>(fresh.size());
  if (read + o.max_tokens > max_len + 1)
    throw ShapeError(message("generate: ", cache.length, " cached tokens, a prompt of ", fresh.size(), " and ",
                             o.max_tokens, " new ones exceed the model's max_len ", max_len));
  InferenceGuard guard(model);
  std::vector<int64_t> generated;
  // The first step reads all of `fresh` (its positions see each other causally), later ones one token.
  Tensor next = row_of_ids(fresh);
  for (int64_t step = 0; step < o.max_tokens; ++step) {
    if (step > 0) next = row_of_ids({generated.back()});
    const Variable logits = model.forward_step(next, cache);  // [1, Tn, V]; the cache now one position longer
    const int64_t token = draw_next(logits, cache.length, o, gen);
    generated.push_back(token);
    if (on_token) on_token(token);
    if (o.stops(token)) break;
  }
  return generated;
}

std::vector<int64_t> generate(DecoderOnly& model, const std::vector<int64_t>& prompt, const SamplingOptions& o,
                              Generator& gen, const std::function<void(int64_t)>& on_token) {
  if (o.use_cache) {
    DecoderOnlyCache cache = model.start_cache();
    return generate_after(model, cache, prompt, o, gen, on_token);
  }
  o.validate();
  if (prompt.empty()) throw ValueError("generate: the prompt must hold at least one token (usually <s>)");
  const int64_t max_len = model.config().max_len;
  if (static_cast<int64_t>(prompt.size()) + o.max_tokens > max_len + 1)
    throw ShapeError(message("generate: a prompt of ", prompt.size(), " tokens and ", o.max_tokens,
                             " new ones exceed the model's max_len ", max_len));
  InferenceGuard guard(model);
  std::vector<int64_t> sequence = prompt, generated;
  for (int64_t step = 0; step < o.max_tokens; ++step) {  // the whole sequence recomputed at every step
    const Tensor all = row_of_ids(sequence);
    const int64_t token = draw_next(model.forward(all, causal_mask(all.size(1)).unsqueeze(0)),
                                    static_cast<int64_t>(sequence.size()), o, gen);
    generated.push_back(token), sequence.push_back(token);
    if (on_token) on_token(token);
    if (o.stops(token)) break;
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
  // Only the window is kept (and, without on_token, what was generated): a stream of any length
  // holds one window's ids.
  std::vector<int64_t> window = prompt, generated;
  for (int64_t left = o.max_tokens; left > 0;) {
    // A window reads at most max_len tokens and predicts one more past them: room for max_len + 1 - window.
    if (static_cast<int64_t>(window.size()) > max_len)
      window.erase(window.begin(), window.end() - std::max<int64_t>(1, max_len / 2));
    SamplingOptions step = o;
    step.max_tokens = std::min(left, max_len + 1 - static_cast<int64_t>(window.size()));
    const std::vector<int64_t> got = generate(model, window, step, gen, on_token);
    window.insert(window.end(), got.begin(), got.end());
    if (!on_token) generated.insert(generated.end(), got.begin(), got.end());
    if (o.stops(got.back())) break;  // generate gives at least one token
    left -= static_cast<int64_t>(got.size());
  }
  return generated;
}

}  // namespace gradformer
