#include "transformer/inspect/trace.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "autograd/all.h"
#include "transformer/data/batch.h"
#include "transformer/data/data_error.h"
#include "transformer/data/tsv.h"
#include "transformer/inspect/attention_maps.h"
#include "transformer/model/decoding.h"
#include "transformer/model/feed_forward.h"
#include "transformer/model/masks.h"

namespace gradformer {
namespace {

constexpr int64_t kShown = 4;  // values of a vector shown

ActivationStats stats_of(const Tensor& t) {
  const Tensor x = t.to(DType::Float64).contiguous();
  ActivationStats s;
  s.shape = t.shape();
  const std::vector<double> v = x.to_vector<double>();
  double total = 0, largest = 0;
  for (double e : v) total += e, largest = std::max(largest, std::abs(e));
  s.mean = v.empty() ? 0 : total / static_cast<double>(v.size());
  double squares = 0;
  for (double e : v) squares += (e - s.mean) * (e - s.mean);
  s.std = v.empty() ? 0 : std::sqrt(squares / static_cast<double>(v.size()));
  s.max_abs = largest;
  const int64_t width = t.dim() ? t.size(-1) : 1;
  for (int64_t i = 0; i < std::min(kShown, width) && i < static_cast<int64_t>(v.size()); ++i)
    s.first.push_back(v[static_cast<size_t>(i)]);
  return s;
}

TraceStage stage(std::string name, std::string equation, const Tensor& value) {
  return {std::move(name), std::move(equation), stats_of(value)};
}

// ---- the encoder, spelled out -----------------------------------------------------------------------
// The same computation as EncoderLayer::forward, one named stage at a time (eval mode: dropout is
// the identity). post-LN: h = norm1(x + attn(x)); out = norm2(h + ffn(h)).
// pre-LN: h = x + attn(norm1(x)); out = h + ffn(norm2(h)).
Variable trace_encoder_layer(const EncoderLayer& layer, const Variable& x, const Tensor& mask, EncoderLayerTrace& out) {
  const bool post = layer.norm_placement == NormPlacement::Post;
  const Variable attn_in = post ? x : layer.norm1->forward(x);
  if (!post) out.stages.push_back(stage("LayerNorm (norm1)", "norm1(x)", attn_in.value()));
  const Attention a = layer.self_attn->forward(attn_in, attn_in, attn_in, mask);
  out.attention = a.weights.select(0, 0).contiguous();  // [H, S, S]
  out.stages.push_back(stage("self-attention", "MultiHead(x, x, x) = Concat(head_1..head_h) W^O", a.output.value()));
  const Variable h = post ? layer.norm1->forward(x + a.output) : x + a.output;
  out.stages.push_back(post ? stage("add & norm (norm1)", "h = LayerNorm(x + attention)", h.value())
                            : stage("add (residual)", "h = x + attention", h.value()));
  const Variable ffn_in = post ? h : layer.norm2->forward(h);
  if (!post) out.stages.push_back(stage("LayerNorm (norm2)", "norm2(h)", ffn_in.value()));
  const Variable f = feed_forward(ffn_in, *layer.linear1, *layer.linear2, *layer.dropout, layer.activation);
  out.stages.push_back(stage(
      "feed-forward",
      layer.activation == Activation::ReLU ? "FFN(h) = max(0, h W1 + b1) W2 + b2" : "FFN(h) = GELU(h W1 + b1) W2 + b2",
      f.value()));
  const Variable y = post ? layer.norm2->forward(h + f) : h + f;
  out.stages.push_back(post ? stage("add & norm (norm2)", "out = LayerNorm(h + FFN(h))", y.value())
                            : stage("add (residual)", "out = h + FFN(norm2(h))", y.value()));
  return y;
}

// Each id's token as a person reads it: the word, or the piece of bytes or BPE ("Ġchat").
std::vector<std::string> pieces(const std::vector<int64_t>& ids, const Tokenizer& tokenizer) {
  std::vector<std::string> out;
  for (const int64_t id : ids) out.push_back(tokenizer.piece(id));
  return out;
}

std::vector<TokenProbability> top_tokens(const Tensor& log_probs, const Tokenizer& tokenizer,
                                         int64_t k) {  // log_probs: [V]
  const std::vector<double> lp = log_probs.to(DType::Float64).to_vector<double>();
  std::vector<int64_t> order(lp.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  const auto shown = std::min<int64_t>(k, static_cast<int64_t>(order.size()));
  std::partial_sort(order.begin(), order.begin() + shown, order.end(),
                    [&](int64_t a, int64_t b) { return lp[static_cast<size_t>(a)] > lp[static_cast<size_t>(b)]; });
  std::vector<TokenProbability> top;
  for (int64_t i = 0; i < shown; ++i)
    top.push_back({tokenizer.piece(order[static_cast<size_t>(i)]),
                   std::exp(lp[static_cast<size_t>(order[static_cast<size_t>(i)])])});
  return top;
}

}  // namespace

SentenceTrace trace_sentence(EncoderDecoder& model, const Tokenizer& source_tokenizer,
                             const Tokenizer& target_tokenizer, const std::vector<std::string>& sentence,
                             const TraceOptions& options) {
  if (sentence.empty()) throw ValueError("trace_sentence: the sentence is empty");
  if (options.beam < 1) throw ValueError(message("trace_sentence: beam must be at least 1, got ", options.beam));
  if (options.top < 1) throw ValueError(message("trace_sentence: top must be at least 1, got ", options.top));
  if (options.max_len < 0)
    throw ValueError(message("trace_sentence: max_len must not be negative, got ", options.max_len));
  const TransformerConfig& c = model.config();
  const int64_t source_end = options.source_eos ? 1 : 0;  // the </s> after the tokens, or nothing
  SentenceTrace t;
  // 1. tokens -> ids: every source sentence ends in </s> (unless the model was trained without it)
  try {
    t.source_ids = encode_source(source_tokenizer, sentence, options.source_eos);
  } catch (const ValueError& e) {  // text a byte-level tokenizer cannot read
    throw DataError(message("trace_sentence: ", e.what()));
  }
  const auto tokens = static_cast<int64_t>(t.source_ids.size()) - source_end;
  if (tokens + source_end > c.max_len)
    throw DataError(message("trace_sentence: the sentence has ", tokens, " tokens; this model takes at most ",
                            c.max_len - source_end));
  InferenceGuard inference(model);
  t.config = c;
  t.beam = options.beam;
  t.source_eos = options.source_eos;
  t.source_tokens = source_tokenizer.kind() == Tokenizer::Kind::Words
                        ? sentence
                        : pieces({t.source_ids.begin(), t.source_ids.begin() + tokens}, source_tokenizer);
  if (options.source_eos) t.source_tokens.push_back("</s>");
  for (int64_t i = 0; i < tokens; ++i) t.unknown.push_back(t.source_ids[static_cast<size_t>(i)] == Vocab::unk);
  const auto S = static_cast<int64_t>(t.source_ids.size());
  const Tensor src = from_vector(t.source_ids, {1, S});
  const Tensor src_mask = padding_mask(src, Vocab::pad);

  // 2. embedding, scaled by sqrt(d_model) (section 3.4), plus the positional encoding (3.5)
  const Variable embedded = model.src_embed->forward(src);  // [1, S, d]
  t.embedding = stage("embedding", "E[id]: one learned row of d numbers per token", embedded.value());
  const Variable scaled = embedded * std::sqrt(static_cast<double>(c.d_model));
  t.scaled = stage("scaled", message("E[id] * sqrt(d_model) = E[id] * ", std::sqrt(static_cast<double>(c.d_model))),
                   scaled.value());
  const Tensor pe = model.positional_encoding->table().narrow(0, 0, S).unsqueeze(0).to(c.dtype);  // [1, S, d]
  t.positions = stage("positional encoding", "PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(...)", pe);
  Variable x = model.embed_source(src);  // the model's own sum: the walk continues from it
  t.encoder_input = stage("encoder input", "x = E[id] * sqrt(d) + PE(pos)", x.value());

  // 3. the encoder, layer by layer
  for (const auto& layer : *model.encoder->layers) {
    t.encoder.emplace_back();
    x = trace_encoder_layer(*layer, x, src_mask, t.encoder.back());
  }
  const Variable memory = model.encoder->norm ? model.encoder->norm->forward(x) : x;
  t.memory = stage(model.encoder->norm ? "final LayerNorm (encoder.norm)" : "encoder output",
                   "memory: what every decoder layer's cross-attention reads", memory.value());

  // 4. greedy decoding, one token at a time, showing each step
  const int64_t max_len =
      options.max_len ? options.max_len : std::min<int64_t>(c.max_len - 1, 2 * tokens + 10);  // as translate's
  std::vector<int64_t> prefix{Vocab::bos};
  {
    const KeepAttention keeping(model);
    for (int64_t step = 0; step < max_len; ++step) {
      const auto T = static_cast<int64_t>(prefix.size());
      const Tensor tgt = from_vector(prefix, {1, T});
      const Variable decoded = model.decode(memory, src_mask, tgt, target_mask(tgt, Vocab::pad));  // [1, T, d]
      const Tensor log_probs = model.log_probs(Variable(decoded.value().select(1, T - 1))).value().select(0, 0);  // [V]
      DecodeStepTrace s;
      s.prefix = pieces(prefix, target_tokenizer);
      for (const auto& layer : *model.decoder->layers)  // [1, H, T, S] -> the last query, mean over heads: [S]
        s.cross_attention.push_back(
            mean(layer->cross_attention.select(0, 0).select(1, T - 1), {0}).to(DType::Float64).to_vector<double>());
      s.top = top_tokens(log_probs, target_tokenizer, options.top);
      const auto chosen = static_cast<int64_t>(argmax(log_probs, 0).item());
      s.chosen = target_tokenizer.piece(chosen);
      t.steps.push_back(std::move(s));
      prefix.push_back(chosen);
      if (chosen == Vocab::eos) break;
    }
  }
  t.translation = split_words(target_tokenizer.decode(strip_specials({prefix.begin() + 1, prefix.end()})));

  // 5. beam search, when asked: the live hypotheses after every step
  if (options.beam > 1) {
    DecodeOptions decode{.max_len = max_len};
    decode.on_step = [&](int64_t, const std::vector<Hypothesis>& alive) {
      BeamStepTrace step;
      for (const Hypothesis& h : alive) step.beams.push_back({pieces(h.tokens, target_tokenizer), h.log_prob, h.score});
      t.beam_steps.push_back(std::move(step));
    };
    const Hypothesis best = beam_search(model, src, src_mask, options.beam, 0.6, decode);
    t.translation = split_words(target_tokenizer.decode(strip_specials(best.tokens)));
  }
  return t;
}

// ---- text ---------------------------------------------------------------------------------------------

namespace {

std::string fixed(double v, int digits = 3) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, v);
  return buffer;
}

std::string stats_line(const ActivationStats& s) {
  std::ostringstream out;
  out << s.shape << "  mean " << fixed(s.mean) << "  std " << fixed(s.std) << "  max |x| " << fixed(s.max_abs)
      << "  first [";
  for (size_t i = 0; i < s.first.size(); ++i) out << (i ? ", " : "") << fixed(s.first[i]);
  out << ", ...]";
  return out.str();
}

void print_stage(std::ostream& out, const TraceStage& s, const char* indent = "   ") {
  out << indent << s.name << ": " << s.equation << "\n" << indent << "  " << stats_line(s.stats) << "\n";
}

// Per head, for each query token, the key token it attends to most: "je -> suis (0.61)".
std::string strongest(const Tensor& head, const std::vector<std::string>& queries,
                      const std::vector<std::string>& keys) {
  std::ostringstream out;
  const Tensor w = head.to(DType::Float64).contiguous();  // [Tq, Tk]
  for (int64_t i = 0; i < w.size(0); ++i) {
    int64_t best = 0;
    for (int64_t j = 1; j < w.size(1); ++j)
      if (w.at({i, j}) > w.at({i, best})) best = j;
    out << (i ? "  " : "") << queries[static_cast<size_t>(i)] << "->" << keys[static_cast<size_t>(best)] << " ("
        << fixed(w.at({i, best}), 2) << ")";
  }
  return out.str();
}

}  // namespace

std::string trace_text(const SentenceTrace& t) {
  std::ostringstream out;
  const TransformerConfig& c = t.config;
  out << "An encoder-decoder Transformer: d_model " << c.d_model << ", " << counted(c.layers, "layer") << " each side, "
      << counted(c.heads, "head") << ", d_ff " << c.d_ff << ", "
      << (c.norm == NormPlacement::Post ? "post-LN" : "pre-LN") << "\n\n";
  out << "1. Tokens -> ids (the source vocabulary; "
      << (t.source_eos ? "every source ends in </s>" : "no </s> after the source: the model was trained without it")
      << ")\n  ";
  for (size_t i = 0; i < t.source_tokens.size(); ++i) out << " " << t.source_tokens[i] << "=" << t.source_ids[i];
  out << "\n";
  const auto unknown = std::count(t.unknown.begin(), t.unknown.end(), true);
  if (unknown)
    out << "   (" << unknown << " word" << (unknown == 1 ? "" : "s") << " not in the vocabulary became <unk>)\n";
  out << "\n2. Embedding, scaled, plus positions\n";
  print_stage(out, t.embedding);
  print_stage(out, t.scaled);
  print_stage(out, t.positions);
  print_stage(out, t.encoder_input);
  for (size_t l = 0; l < t.encoder.size(); ++l) {
    out << "\n" << 3 + l << ". Encoder layer " << l << "\n";
    const EncoderLayerTrace& layer = t.encoder[l];
    out << "   self-attention, per head, where each token looks most:\n";
    for (int64_t h = 0; h < layer.attention.size(0); ++h)
      out << "     head " << h << ": " << strongest(layer.attention.select(0, h), t.source_tokens, t.source_tokens)
          << "\n";
    for (const TraceStage& s : layer.stages) print_stage(out, s);
  }
  out << "\n";
  print_stage(out, t.memory, "");
  out << "\n"
      << 3 + t.encoder.size() << ". Decoding, greedy: one token at a time, each step reading the prefix so far\n";
  for (size_t i = 0; i < t.steps.size(); ++i) {
    const DecodeStepTrace& s = t.steps[i];
    out << "   step " << i + 1 << "  prefix:";
    for (const std::string& w : s.prefix) out << " " << w;
    out << "\n     cross-attention (mean over heads), the source token most looked at:";
    for (size_t l = 0; l < s.cross_attention.size(); ++l) {
      const auto& w = s.cross_attention[l];
      const auto best = static_cast<size_t>(std::max_element(w.begin(), w.end()) - w.begin());
      out << "  layer " << l << ": " << t.source_tokens[best] << " (" << fixed(w[best], 2) << ")";
    }
    out << "\n     next token:";
    for (const TokenProbability& p : s.top) out << "  " << p.token << " " << fixed(p.probability);
    out << "\n     chosen: " << s.chosen << "\n";
  }
  if (!t.beam_steps.empty()) {
    out << "\n   Beam search, " << t.beam << " beams (score = log P / ((5 + length) / 6)^0.6):\n";
    for (size_t i = 0; i < t.beam_steps.size(); ++i) {
      out << "   step " << i + 1 << ":";
      for (const auto& b : t.beam_steps[i].beams) {
        out << "  [";
        for (size_t k = 0; k < b.tokens.size(); ++k) out << (k ? " " : "") << b.tokens[k];
        out << "] " << fixed(b.log_prob, 2);
      }
      out << "\n";
    }
  }
  out << "\nTranslation (" << (t.beam > 1 ? message("beam search, ", t.beam, " beams") : std::string("greedy")) << "):";
  for (const std::string& w : t.translation) out << " " << w;
  if (t.translation.empty()) out << " (nothing: the model ended the sentence at once)";
  out << "\n";
  return out.str();
}

}  // namespace gradformer
