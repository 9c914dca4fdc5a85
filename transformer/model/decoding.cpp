#include "transformer/model/decoding.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "autograd/all.h"
#include "tensor/all.h"

namespace gradformer {
namespace {

void check_options(const DecodeOptions& options) {
  if (options.max_len < 1) throw ValueError(message("decode: max_len must be at least 1, got ", options.max_len));
}

// The decoder's output for the last position of `prefix` [B, T], either from the cache (feeding
// only the newest tokens) or by decoding the whole prefix again.  -> log-probs [B, V]
Tensor next_log_probs(EncoderDecoder& model, const Variable& memory, const Tensor& src_mask, const Tensor& prefix,
                      DecoderCache& cache, bool use_cache) {
  const int64_t t = prefix.size(1);
  Variable decoded = use_cache ? model.decode_step(prefix.narrow(1, cache.length, t - cache.length), src_mask, cache)
                               : model.decode(memory, src_mask, prefix, target_mask(prefix, -1));
  const Tensor last = decoded.value().select(1, decoded.size(1) - 1);  // [B, d]
  Tensor logp = model.log_probs(Variable(last)).value().to(DType::Float64);
  // Finite weights can still overflow (a LayerNorm gain of 3e38): greedy would take token 0 forever
  // and beam search compare NaNs. Say so, and where.
  if (double bad = 0; first_non_finite(logp, &bad))
    throw ValueError(message("decode: the model's scores for the target token at position ", t, " hold ", bad,
                             ": its arithmetic overflows there (weights finite but too large?)"));
  return logp;
}

// Every layer's cached self-attention keys and values, rows picked by `origin` [beam] int64:
// after a beam step, hypothesis i continues hypothesis origin[i].
void reorder(DecoderCache& cache, const Tensor& origin) {
  for (LayerCache& layer : cache.layers) {
    layer.self.k = Variable(index_select(layer.self.k.value(), 0, origin));
    layer.self.v = Variable(index_select(layer.self.v.value(), 0, origin));
  }
}

}  // namespace

std::vector<Hypothesis> greedy_decode(EncoderDecoder& model, const Tensor& src, const Tensor& src_mask,
                                      const DecodeOptions& options) {
  check_options(options);
  InferenceGuard inference(model);
  const int64_t batch = src.size(0);
  const Variable memory = model.encode(src, src_mask);
  DecoderCache cache = model.start_decoding(memory);
  Tensor prefix = full({batch, 1}, static_cast<double>(options.bos), DType::Int64);  // [B, 1]
  std::vector<Hypothesis> out(static_cast<size_t>(batch));
  std::vector<bool> done(static_cast<size_t>(batch), false);
  for (int64_t step = 0; step < options.max_len; ++step) {
    const Tensor logp = next_log_probs(model, memory, src_mask, prefix, cache, options.use_cache);  // [B, V]
    const Tensor best = argmax(logp, -1);                                                           // [B]
    const int64_t* ids = best.data<int64_t>();
    bool all_done = true;
    for (int64_t b = 0; b < batch; ++b) {
      if (done[static_cast<size_t>(b)]) continue;
      Hypothesis& h = out[static_cast<size_t>(b)];
      h.tokens.push_back(ids[b]);
      h.log_prob += logp.at({b, ids[b]});
      done[static_cast<size_t>(b)] = ids[b] == options.eos;
      all_done = all_done && done[static_cast<size_t>(b)];
    }
    if (all_done) break;
    prefix = concat(std::vector<Tensor>{prefix, best.unsqueeze(1)}, 1);  // finished rows carry on, ignored
  }
  for (Hypothesis& h : out) h.score = h.log_prob;
  return out;
}

std::vector<BeamCandidate> best_extensions(const std::vector<double>& alive_log_probs, const Tensor& log_probs,
                                           int64_t count) {
  const int64_t rows = static_cast<int64_t>(alive_log_probs.size());
  if (log_probs.dim() != 2 || log_probs.size(0) != rows || log_probs.dtype() != DType::Float64)
    throw ShapeError(message("best_extensions: log_probs must be float64 [", rows, ", V] for ", rows,
                             " live hypotheses, got ", name(log_probs.dtype()), " ", log_probs.shape()));
  const Tensor lp = log_probs.contiguous();
  const int64_t vocab = lp.size(1);
  const double* logp = lp.data<double>();
  auto total = [&](int64_t c) { return alive_log_probs[static_cast<size_t>(c / vocab)] + logp[c]; };
  // Every extension c = row * V + token, the best `count` first.
  std::vector<int64_t> order(static_cast<size_t>(rows * vocab));
  std::iota(order.begin(), order.end(), 0);
  const auto take = std::min<int64_t>(static_cast<int64_t>(order.size()), std::max<int64_t>(count, 0));
  std::partial_sort(order.begin(), order.begin() + take, order.end(), [&](int64_t a, int64_t b) {
    const double ta = total(a), tb = total(b);
    return ta > tb || (ta == tb && a < b);
  });
  std::vector<BeamCandidate> best;
  for (int64_t k = 0; k < take; ++k) {
    const int64_t c = order[static_cast<size_t>(k)];
    if (!std::isfinite(total(c))) break;
    best.push_back({c / vocab, c % vocab, total(c)});
  }
  return best;
}

Hypothesis beam_search(EncoderDecoder& model, const Tensor& src, const Tensor& src_mask, int64_t beam, double alpha,
                       const DecodeOptions& options) {
  check_options(options);
  if (beam < 1) throw ValueError(message("beam_search: beam size must be at least 1, got ", beam));
  if (!(alpha >= 0)) throw ValueError(message("beam_search: length penalty alpha must be >= 0, got ", alpha));
  if (src.dim() != 2 || src.size(0) != 1)
    throw ShapeError(message("beam_search: decodes one sentence, src must be [1, S], got ", src.shape()));
  InferenceGuard inference(model);
  auto length_penalty = [alpha](size_t length) { return std::pow((5.0 + static_cast<double>(length)) / 6.0, alpha); };

  // The beam is the batch: every row sees the same source.
  const Tensor rows = zeros({beam}, DType::Int64);
  const Tensor beam_src = index_select(src, 0, rows), beam_mask = index_select(src_mask, 0, rows);
  const Variable memory = model.encode(beam_src, beam_mask);
  DecoderCache cache = model.start_decoding(memory);
  Tensor prefix = full({beam, 1}, static_cast<double>(options.bos), DType::Int64);
  // Only row 0 is alive at first; the other copies start at -inf so the first step doesn't pick
  // the same token `beam` times.
  std::vector<double> alive_logp(static_cast<size_t>(beam), -std::numeric_limits<double>::infinity());
  alive_logp[0] = 0;
  std::vector<std::vector<int64_t>> alive_tokens(static_cast<size_t>(beam));
  std::vector<Hypothesis> finished;

  for (int64_t step = 0; step < options.max_len; ++step) {
    const Tensor logp = next_log_probs(model, memory, beam_mask, prefix, cache, options.use_cache);  // [beam, V]
    std::vector<int64_t> origin, next_token;
    std::vector<double> next_logp;
    std::vector<std::vector<int64_t>> next_tokens;
    // The 2 x beam best extensions: enough that `beam` stay alive even if `beam` of them end in </s>.
    std::vector<WeighedExtension> weighed;
    for (const auto& [row, token, total] : best_extensions(alive_logp, logp, 2 * beam)) {
      if (static_cast<int64_t>(origin.size()) >= beam && !options.on_weigh) break;
      std::vector<int64_t> tokens = alive_tokens[static_cast<size_t>(row)];
      tokens.push_back(token);
      const Hypothesis extended{tokens, total, total / length_penalty(tokens.size())};
      if (static_cast<int64_t>(origin.size()) >= beam) {  // the beam is full: pruned
        weighed.push_back({extended, BeamFate::Pruned});
        continue;
      }
      if (token == options.eos || step + 1 == options.max_len) {
        const bool finishes = static_cast<int64_t>(finished.size()) < beam || token == options.eos;
        if (finishes) finished.push_back(extended);
        weighed.push_back({extended, finishes ? BeamFate::Finished : BeamFate::Alive});
        if (token == options.eos) continue;
      } else {
        weighed.push_back({extended, BeamFate::Alive});
      }
      origin.push_back(row);
      next_token.push_back(token);
      next_logp.push_back(total);
      next_tokens.push_back(std::move(tokens));
    }
    // Stop when `beam` hypotheses have finished and none alive can still beat the best of them
    // (its log-probability only falls, and its length penalty is at most that of max_len tokens).
    double best_finished = -std::numeric_limits<double>::infinity();
    for (const Hypothesis& h : finished) best_finished = std::max(best_finished, h.score);
    const double best_alive = next_logp.empty()
                                  ? -std::numeric_limits<double>::infinity()
                                  : next_logp.front() / length_penalty(static_cast<size_t>(options.max_len));
    if (options.on_step) {
      std::vector<Hypothesis> alive;
      for (size_t i = 0; i < next_tokens.size(); ++i)
        alive.push_back({next_tokens[i], next_logp[i], next_logp[i] / length_penalty(next_tokens[i].size())});
      options.on_step(step, alive);
    }
    if (options.on_weigh) options.on_weigh(step, weighed);
    if (next_logp.empty() || (static_cast<int64_t>(finished.size()) >= beam && best_finished >= best_alive)) break;
    while (static_cast<int64_t>(origin.size()) < beam) {  // fewer live candidates than rows: pad with dead copies
      origin.push_back(origin.front());
      next_token.push_back(next_token.front());
      next_logp.push_back(-std::numeric_limits<double>::infinity());
      next_tokens.push_back(next_tokens.front());
    }
    const Tensor origin_t = from_vector(origin, {beam});
    if (options.use_cache) reorder(cache, origin_t);
    prefix = concat(std::vector<Tensor>{index_select(prefix, 0, origin_t), from_vector(next_token, {beam, 1})}, 1);
    alive_logp = next_logp;
    alive_tokens = next_tokens;
  }
  if (finished.empty()) return {alive_tokens.front(), alive_logp.front(), alive_logp.front()};
  return *std::max_element(finished.begin(), finished.end(),
                           [](const Hypothesis& a, const Hypothesis& b) { return a.score < b.score; });
}

}  // namespace gradformer
