#include "transformer/inspect/train_trace.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "autograd/all.h"
#include "nn/adam.h"
#include "nn/sgd.h"
#include "transformer/data/batch.h"
#include "transformer/data/data_error.h"
#include "transformer/model/feed_forward.h"
#include "transformer/model/masks.h"

namespace gradformer {
namespace {

// The activations of one part of the model, in the order the forward pass makes them, each keeping
// its gradient for the backward pass to fill in.
struct KeptStage {
  std::string name;
  std::vector<std::pair<std::string, Variable>> kept;
  Variable keep(std::string what, Variable v) {
    v.retain_grad();
    kept.emplace_back(std::move(what), v);
    return v;
  }
};

// One sub-layer with its residual connection and LayerNorm (section 3.1, eval mode: no dropout):
//   post-LN: y = LayerNorm(x + Sublayer(x))      pre-LN: y = x + Sublayer(LayerNorm(x))
template <class Sublayer>
Variable residual(KeptStage& s, const Variable& x, NormPlacement placement, const Norm& norm,
                  const std::string& norm_name, const std::string& what, Sublayer sublayer) {
  if (placement == NormPlacement::Post) {
    const Variable out = s.keep(what, sublayer(x));
    return s.keep("add & norm (" + norm_name + ")", norm.forward(x + out));
  }
  const Variable normed = s.keep(std::string(norm.kind()) + " (" + norm_name + ")", norm.forward(x));
  const Variable out = s.keep(what, sublayer(normed));
  return s.keep("add (residual)", x + out);
}

// The encoder-decoder's forward pass, teacher-forced, as EncoderDecoder::forward computes it, every
// sub-layer's output kept: logits [1, T, V].
Variable kept_forward(const EncoderDecoder& m, const Batch& b, std::vector<KeptStage>& stages) {
  const double scale = std::sqrt(static_cast<double>(m.config().d_model));
  const Tensor src_mask = padding_mask(b.src, Vocab::pad), tgt_mask = target_mask(b.tgt_in, Vocab::pad);
  KeptStage& source = stages.emplace_back(KeptStage{"source embedding", {}});
  const Variable src_embedded = source.keep("E[id]", m.src_embed->forward(b.src));
  Variable x = source.keep("x = E[id] * sqrt(d_model) + PE", m.positional_encoding->forward(src_embedded * scale));
  for (size_t l = 0; l < m.encoder->layers->size(); ++l) {
    const EncoderLayer& layer = (*m.encoder->layers)[l];
    KeptStage& s = stages.emplace_back(KeptStage{message("encoder layer ", l), {}});
    x = residual(s, x, layer.norm_placement, *layer.norm1, "norm1", "self-attention",
                 [&](const Variable& h) { return layer.self_attn->forward(h, h, h, src_mask).output; });
    x = residual(s, x, layer.norm_placement, *layer.norm2, "norm2", "feed-forward", [&](const Variable& h) {
      return feed_forward(h, *layer.linear1, *layer.linear2, *layer.dropout, layer.activation);
    });
  }
  KeptStage& encoded = stages.emplace_back(KeptStage{"encoder output", {}});
  const Variable memory =
      encoded.keep("memory (what cross-attention reads)", m.encoder->norm ? m.encoder->norm->forward(x) : x);
  KeptStage& target = stages.emplace_back(KeptStage{"target embedding", {}});
  const Variable tgt_embedded = target.keep("E[id]", m.tgt_embed->forward(b.tgt_in));
  Variable y = target.keep("y = E[id] * sqrt(d_model) + PE", m.positional_encoding->forward(tgt_embedded * scale));
  for (size_t l = 0; l < m.decoder->layers->size(); ++l) {
    const DecoderLayer& layer = (*m.decoder->layers)[l];
    KeptStage& s = stages.emplace_back(KeptStage{message("decoder layer ", l), {}});
    y = residual(s, y, layer.norm_placement, *layer.norm1, "norm1", "masked self-attention",
                 [&](const Variable& h) { return layer.self_attn->forward(h, h, h, tgt_mask).output; });
    y = residual(s, y, layer.norm_placement, *layer.norm2, "norm2", "cross-attention",
                 [&](const Variable& h) { return layer.multihead_attn->forward(h, memory, memory, src_mask).output; });
    y = residual(s, y, layer.norm_placement, *layer.norm3, "norm3", "feed-forward", [&](const Variable& h) {
      return feed_forward(h, *layer.linear1, *layer.linear2, *layer.dropout, layer.activation);
    });
  }
  KeptStage& output = stages.emplace_back(KeptStage{"output layer", {}});
  if (m.decoder->norm) y = output.keep("final LayerNorm (decoder.norm)", m.decoder->norm->forward(y));
  return output.keep("logits = y W^T + b", m.logits(y));
}

// sum of g^2, in double whatever g's dtype
double squared_norm(const Tensor& g) {
  const Tensor d = g.to(DType::Float64);
  return sum(d * d).item();
}

// The parameter groups a learner thinks in: a layer, an embedding, the output layer.
std::string parameter_group(const std::string& name) {
  const auto dot = [&](size_t from) { return name.find('.', from); };
  if (name.rfind("encoder.layers.", 0) == 0 || name.rfind("decoder.layers.", 0) == 0) return name.substr(0, dot(15));
  if (name.rfind("encoder.", 0) == 0 || name.rfind("decoder.", 0) == 0) return name.substr(0, dot(8));
  return name.substr(0, dot(0));
}

// The order the backward pass reaches the groups: output, decoder (top first), target embedding,
// encoder (top first), source embedding.
int64_t backward_rank(const std::string& group, int64_t layers) {
  const auto layer_of = [&] { return std::stoll(group.substr(15)); };
  if (group == "generator") return 0;
  if (group == "decoder.norm") return 1;
  if (group.rfind("decoder.layers.", 0) == 0) return 2 + (layers - 1 - layer_of());
  if (group == "tgt_embed") return 2 + layers;
  if (group == "encoder.norm") return 3 + layers;
  if (group.rfind("encoder.layers.", 0) == 0) return 4 + layers + (layers - 1 - layer_of());
  return 4 + 2 * layers;  // src_embed, and anything else
}

std::vector<ParameterGradient> parameter_gradients(const EncoderDecoder& model) {
  std::vector<ParameterGradient> groups;
  for (const auto& [name, p] : model.named_parameters()) {
    const std::string group = parameter_group(name);
    auto at = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.name == group; });
    if (at == groups.end()) at = groups.insert(groups.end(), ParameterGradient{group, 0, 0});
    at->parameters += p.numel();
    if (p.grad().defined()) at->norm += squared_norm(p.grad());
  }
  for (ParameterGradient& g : groups) g.norm = std::sqrt(g.norm);
  const int64_t layers = model.config().layers;
  std::stable_sort(groups.begin(), groups.end(), [&](const auto& a, const auto& b) {
    return backward_rank(a.name, layers) < backward_rank(b.name, layers);
  });
  return groups;
}

// Each position's probability of the right word and its losses, from logits [1, T, V].
void fill_positions(TrainStepTrace& t, const Tensor& logits, const Tensor& tgt_out, bool after) {
  const Tensor lp = log_softmax(Variable(logits), -1).value().select(0, 0).to(DType::Float64).contiguous();  // [T, V]
  const double eps = t.label_smoothing, V = static_cast<double>(lp.size(1));
  double nll = 0;
  for (int64_t i = 0; i < lp.size(0); ++i) {
    const int64_t right = static_cast<int64_t>(tgt_out.at({0, i}));
    PositionLoss& p = t.positions[static_cast<size_t>(i)];
    const double log_p = lp.at({i, right});
    nll -= log_p;
    if (after) {
      p.probability_after = std::exp(log_p);
      continue;
    }
    p.probability = std::exp(log_p), p.loss = -log_p;
    p.smoothed_loss = -(1 - eps) * log_p - eps / V * sum(lp.select(0, i)).item();
  }
  (after ? t.nll_after : t.nll) = nll / static_cast<double>(lp.size(0));
}

// dL/dlogits at one position, by the formula and from the backward pass. Cross-entropy's loss at a
// position is -sum_c q_c log P_c with P = softmax(z), and its derivative with respect to z_c is
// P_c - q_c (section 5.4's q: 1 - eps + eps/V for the right word, eps/V for every other); the loss
// is the mean over the n target tokens, so each position's gradient is (P - q)/n.
LogitGradient logit_gradient(const Variable& logits, const Tensor& tgt_out, const Vocab& vocab, const TrainStepTrace& t,
                             const TrainTraceOptions& o) {
  LogitGradient g;
  const int64_t T = logits.size(1), V = logits.size(2);
  g.tokens = T;  // one pair, no padding: every position is scored
  g.position = o.position;
  if (g.position < 0) {
    const auto worst = std::max_element(t.positions.begin(), t.positions.end(),
                                        [](const PositionLoss& a, const PositionLoss& b) { return a.loss < b.loss; });
    g.position = worst - t.positions.begin();
  }
  const Tensor p = softmax(Variable(logits.value()), -1).value().select(0, 0).select(0, g.position);  // [V]
  const Tensor P = p.to(DType::Float64).contiguous();
  const Tensor back = logits.grad().select(0, 0).select(0, g.position).to(DType::Float64).contiguous();
  const auto right = static_cast<int64_t>(tgt_out.at({0, g.position}));
  const double eps = t.label_smoothing, n = static_cast<double>(T);
  const auto row = [&](int64_t c) {
    const double q = (c == right ? 1 - eps : 0) + eps / static_cast<double>(V);
    return LogitGradientRow{vocab.token(c), c, P.at({c}), q, (P.at({c}) - q) / n, back.at({c})};
  };
  for (int64_t c = 0; c < V; ++c)
    g.largest_difference = std::max(g.largest_difference, std::abs(row(c).backward - row(c).formula));
  std::vector<int64_t> others;
  for (int64_t c = 0; c < V; ++c)
    if (c != right) others.push_back(c);
  const auto shown = std::min<int64_t>(o.top - 1, static_cast<int64_t>(others.size()));
  std::partial_sort(others.begin(), others.begin() + shown, others.end(),
                    [&](int64_t a, int64_t b) { return P.at({a}) > P.at({b}) || (P.at({a}) == P.at({b}) && a < b); });
  g.rows.push_back(row(right));
  for (int64_t i = 0; i < shown; ++i) g.rows.push_back(row(others[static_cast<size_t>(i)]));
  return g;
}

// "generator.weight[12, 3]": an element of a parameter by its flat index.
std::string element_name(const std::string& name, const Shape& shape, int64_t flat) {
  std::string index;
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    index = std::to_string(flat % shape[d]) + (index.empty() ? "" : ", ") + index;
    flat /= shape[d];
  }
  return name + "[" + index + "]";
}

// The library's Adam, fresh (training's first step), on the weight of the largest |dL/dw| alone, then
// undone: its moments and its update beside SGD's.
AdamStepAt adam_step_at(const EncoderDecoder& model, double lr) {
  AdamStepAt a;
  Variable chosen;
  int64_t at = -1;
  double largest = -1;
  for (const auto& [name, param] : model.named_parameters()) {
    if (!param.grad().defined()) continue;
    const Tensor g = param.grad().to(DType::Float64).contiguous();
    const double* data = g.data<double>();
    for (int64_t i = 0; i < g.numel(); ++i)
      if (std::abs(data[i]) > largest) largest = std::abs(data[i]), chosen = param, at = i, a.parameter = name;
  }
  if (at < 0) return a;
  a.parameter = element_name(a.parameter, chosen.shape(), at);
  const auto element = [&](const Tensor& x) { return x.to(DType::Float64).contiguous().data<double>()[at]; };
  const Tensor before = chosen.value().clone();
  Adam adam({chosen}, {.lr = lr});
  a.lr = lr, a.beta1 = adam.options().beta1, a.beta2 = adam.options().beta2;
  adam.step();
  a.g = element(chosen.grad()), a.m = element(adam.first_moment(0)), a.v = element(adam.second_moment(0));
  a.adam_update = element(chosen.value()) - element(before);
  a.sgd_update = -lr * a.g;
  Tensor weights = chosen.value();
  weights.copy_(before);  // undone: the trace's own step is SGD's
  return a;
}

void check_request(const TransformerConfig& c, const std::vector<std::string>& source,
                   const std::vector<std::string>& target, const TrainTraceOptions& o) {
  if (source.empty() || target.empty())
    throw ValueError(message("trace_train_step: the ", source.empty() ? "source" : "target", " sentence is empty"));
  if (!(o.label_smoothing >= 0 && o.label_smoothing < 1))
    throw ValueError(message("trace_train_step: label_smoothing must be in [0, 1), got ", o.label_smoothing));
  if (!(o.lr >= 0 && std::isfinite(o.lr)))
    throw ValueError(message("trace_train_step: lr must be a finite number at least 0, got ", o.lr));
  const int64_t source_end = o.source_eos ? 1 : 0;
  if (static_cast<int64_t>(source.size()) + source_end > c.max_len)
    throw DataError(message("trace_train_step: the source has ", source.size(), " tokens; this model takes at most ",
                            c.max_len - source_end));
  if (static_cast<int64_t>(target.size()) + 1 > c.max_len)
    throw DataError(message("trace_train_step: the target has ", target.size(), " tokens; this model takes at most ",
                            c.max_len - 1));
  const auto positions = static_cast<int64_t>(target.size()) + 1;  // the target's words, then </s>
  if (o.position < -1 || o.position >= positions)
    throw ValueError(message("trace_train_step: position ", o.position, " is not one of the target's ", positions,
                             " positions (0 to ", positions - 1, "; -1: the one of the largest loss)"));
  if (o.top < 1 || o.top > 1000) throw ValueError(message("trace_train_step: top must be from 1 to 1000, got ", o.top));
}

}  // namespace

TrainStepTrace trace_train_step(EncoderDecoder& model, const Vocab& source_vocab, const Vocab& target_vocab,
                                const std::vector<std::string>& source, const std::vector<std::string>& target,
                                const TrainTraceOptions& options) {
  check_request(model.config(), source, target, options);
  TrainStepTrace t;
  t.config = model.config(), t.label_smoothing = options.label_smoothing, t.lr = options.lr;
  // The pair as training batches it (collate): the source then </s>; <s> then the target in, the target then </s> out.
  const EncodedPair pair{source_vocab.encode(source), target_vocab.encode(target)};
  const Batch batch = collate({pair}, {0}, options.source_eos);
  t.source_tokens = source;
  if (options.source_eos) t.source_tokens.push_back("</s>");
  t.source_ids = batch.src.select(0, 0).to_vector<int64_t>();
  for (size_t i = 0; i < source.size(); ++i) t.unknown.push_back(pair.source[i] == Vocab::unk);
  for (size_t i = 0; i < target.size(); ++i) t.unknown_target.push_back(pair.target[i] == Vocab::unk);
  const std::vector<std::string> in = target_vocab.decode(batch.tgt_in.select(0, 0).to_vector<int64_t>()),
                                 out = target_vocab.decode(batch.tgt_out.select(0, 0).to_vector<int64_t>());
  for (size_t i = 0; i < in.size(); ++i) t.positions.push_back({in[i], out[i]});

  const EvalModeGuard eval(model);
  SGD sgd(model.parameters(), {.lr = options.lr});
  sgd.zero_grad();
  std::vector<KeptStage> stages;
  const Variable logits = kept_forward(model, batch, stages);
  // L = mean over the target tokens of -sum_c q_c log softmax(logits)_c (section 5.4)
  const Variable loss =
      cross_entropy(logits, batch.tgt_out, {.ignore_index = Vocab::pad, .label_smoothing = options.label_smoothing});
  t.loss = loss.item();
  fill_positions(t, logits.value(), batch.tgt_out, false);
  loss.backward();  // dL/dx for every kept x, and dL/dw for every parameter
  t.logit_gradient = logit_gradient(logits, batch.tgt_out, target_vocab, t, options);
  for (auto stage = stages.rbegin(); stage != stages.rend(); ++stage) {
    BackwardStage& b = t.backward.emplace_back(BackwardStage{stage->name, {}});
    for (auto kept = stage->kept.rbegin(); kept != stage->kept.rend(); ++kept)
      b.gradients.push_back({kept->first, kept->second.shape(), std::sqrt(squared_norm(kept->second.grad()))});
  }
  t.parameter_gradients = parameter_gradients(model);
  for (const ParameterGradient& g : t.parameter_gradients) t.gradient_norm += g.norm * g.norm;
  t.gradient_norm = std::sqrt(t.gradient_norm);

  t.adam = adam_step_at(model, options.lr);
  sgd.step();  // w <- w - lr dL/dw
  const NoGradGuard no_graph;
  const Tensor after =
      model.forward(batch.src, batch.tgt_in, padding_mask(batch.src, Vocab::pad), target_mask(batch.tgt_in, Vocab::pad))
          .value();
  t.loss_after =
      cross_entropy(Variable(after), batch.tgt_out, {.ignore_index = Vocab::pad, .label_smoothing = t.label_smoothing})
          .item();
  fill_positions(t, after, batch.tgt_out, true);
  return t;
}

// ---- text ---------------------------------------------------------------------------------------------

namespace {

std::string number(const char* format, double v) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, v);
  return buffer;
}

std::string padded(const std::string& text, size_t width) {
  return text.size() >= width ? text + " " : text + std::string(width - text.size(), ' ');
}

void print_pair(std::ostream& out, const TrainStepTrace& t) {
  out << "1. The pair\n   source:";
  for (size_t i = 0; i < t.source_tokens.size(); ++i) out << " " << t.source_tokens[i] << "=" << t.source_ids[i];
  out << "\n   teacher forcing: the decoder reads tgt_in and must predict tgt_out, the same words one place on\n"
      << "   tgt_in:  ";
  for (const PositionLoss& p : t.positions) out << " " << p.input;
  out << "\n   tgt_out: ";
  for (const PositionLoss& p : t.positions) out << " " << p.target;
  const auto unknown = std::count(t.unknown.begin(), t.unknown.end(), true) +
                       std::count(t.unknown_target.begin(), t.unknown_target.end(), true);
  out << "\n";
  if (unknown) out << "   (" << counted(unknown, "word") << " not in the vocabularies became <unk>)\n";
}

void print_losses(std::ostream& out, const TrainStepTrace& t) {
  const bool smoothing = t.label_smoothing > 0;
  out << "\n2. Forward: each position's probability of the right word, and its loss\n   " << padded("reads", 10)
      << padded("-> predicts", 14) << padded("P(right)", 10)
      << (smoothing ? padded("-log P", 9) + "smoothed" : "-log P") << "\n";
  for (const PositionLoss& p : t.positions)
    out << "   " << padded(p.input, 10) << padded("-> " + p.target, 14) << padded(number("%.3f", p.probability), 10)
        << (smoothing ? padded(number("%.4f", p.loss), 9) + number("%.4f", p.smoothed_loss) : number("%.4f", p.loss))
        << "\n";
  out << "   mean -log P over the " << counted(static_cast<long long>(t.positions.size()), "target token") << ": "
      << number("%.4f", t.nll) << "\n";
  if (smoothing)
    out << "   the loss the step minimises: label-smoothed cross-entropy, eps " << number("%g", t.label_smoothing)
        << " as the model was trained (the mean of the smoothed column): " << number("%.4f", t.loss)
        << "\n   (its target gives the right word 1 - eps + eps/V = "
        << number("%.3f", 1 - t.label_smoothing + t.label_smoothing / static_cast<double>(t.config.tgt_vocab))
        << " and every other word eps/V)\n";
  else
    out << "   the loss the step minimises: cross-entropy, without label smoothing: " << number("%.4f", t.loss) << "\n";
}

void print_logit_gradient(std::ostream& out, const TrainStepTrace& t) {
  const LogitGradient& g = t.logit_gradient;
  const PositionLoss& at = t.positions[static_cast<size_t>(g.position)];
  out << "\n3. Where the backward pass starts: dL/dlogits at position " << g.position << " (reads " << at.input
      << ", predicts " << at.target << "),\n   softmax's P minus the target q, over the n = " << g.tokens
      << " target tokens the loss averages\n   " << padded("token", 12) << padded("P", 10) << padded("q", 10)
      << padded("(P - q)/n", 13) << "backward\n";
  for (const LogitGradientRow& r : g.rows)
    out << "   " << padded(r.token, 12) << padded(number("%.4f", r.p), 10) << padded(number("%.4f", r.q), 10)
        << padded(number("%+.5f", r.formula), 13) << number("%+.5f", r.backward) << "\n";
  out << "   a row is negative where P is below q (that logit goes up), positive where above (it goes down);\n"
      << "   largest |backward - (P - q)/n| over all " << t.config.tgt_vocab
      << " tokens: " << number("%.1e", g.largest_difference) << "\n";
}

void print_backward(std::ostream& out, const TrainStepTrace& t) {
  out << "\n4. Backward: the gradient's norm ||dL/dx|| at each sub-layer's output, from the loss down\n";
  for (const BackwardStage& stage : t.backward) {
    out << "   " << stage.name << "\n";
    for (const GradientAt& g : stage.gradients)
      out << "     " << padded(g.name, 36) << padded(message(g.shape), 14) << number("%.4g", g.norm) << "\n";
  }
  out << "\n5. Parameter gradients ||dL/dw||, per layer (in the order the backward pass reaches them)\n";
  for (const ParameterGradient& g : t.parameter_gradients)
    out << "     " << padded(g.name, 20) << padded(counted(g.parameters, "parameter"), 20) << number("%.4g", g.norm)
        << "\n";
  out << "     " << padded("all", 40) << number("%.4g", t.gradient_norm) << "\n";
}

void print_step(std::ostream& out, const TrainStepTrace& t) {
  out << "\n6. One gradient-descent step (SGD: w <- w - lr dL/dw, lr " << number("%g", t.lr)
      << "; training takes Adam's steps)\n   loss on this pair: " << number("%.4f", t.loss) << " -> "
      << number("%.4f", t.loss_after) << "  (to first order: loss - lr ||dL/dw||^2 = "
      << number("%.4f", t.loss - t.lr * t.gradient_norm * t.gradient_norm) << ")\n   P(right word):";
  for (const PositionLoss& p : t.positions)
    out << "  " << p.target << " " << number("%.3f", p.probability) << " -> " << number("%.3f", p.probability_after);
  out << "\n";
}

void print_adam(std::ostream& out, const TrainStepTrace& t) {
  const AdamStepAt& a = t.adam;
  if (a.parameter.empty()) return;
  out << "\n7. What training's optimizer, Adam, would do instead, to the weight of the largest |dL/dw|, " << a.parameter
      << "\n   from fresh moments (a run's first step), lr " << number("%g", a.lr) << ", beta1 "
      << number("%g", a.beta1) << ", beta2 " << number("%g", a.beta2) << ":\n   g = " << number("%.5g", a.g)
      << "   m = (1 - beta1) g = " << number("%.5g", a.m) << "   v = (1 - beta2) g^2 = " << number("%.5g", a.v)
      << "\n   update = -lr (m / (1 - beta1)) / (sqrt(v / (1 - beta2)) + eps) = " << number("%.5g", a.adam_update)
      << "   (SGD's: -lr g = " << number("%.5g", a.sgd_update)
      << ")\n   the bias-corrected moments are g and g^2 again: Adam's first step moves every weight by -lr * "
         "sign(g),\n   whatever |g| (why training starts from a tiny lr and warms it up)\n";
}

}  // namespace

std::string train_trace_text(const TrainStepTrace& t) {
  std::ostringstream out;
  const TransformerConfig& c = t.config;
  out << "One training step of an encoder-decoder Transformer: d_model " << c.d_model << ", "
      << counted(c.layers, "layer") << " each side, " << counted(c.heads, "head") << ", d_ff " << c.d_ff << ", "
      << (c.norm == NormPlacement::Post ? "post-LN" : "pre-LN")
      << "\n(eval mode: no dropout; the loss is the model's training loss on this pair without dropout)\n\n";
  print_pair(out, t);
  print_losses(out, t);
  print_logit_gradient(out, t);
  print_backward(out, t);
  print_step(out, t);
  print_adam(out, t);
  return out.str();
}

}  // namespace gradformer
