// The three architectures' names and the shared configuration's presets and checks (config.h).
#include "transformer/model/config.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "tensor/support/error.h"

namespace gradformer {

const char* architecture_name(Architecture arch) {
  switch (arch) {
    case Architecture::EncoderDecoder:
      return "encoder-decoder";
    case Architecture::DecoderOnly:
      return "decoder-only";
    case Architecture::EncoderOnly:
      return "encoder-only";
  }
  return "?";
}

std::string a_architecture(Architecture arch) {
  const std::string name = architecture_name(arch);
  return (name.front() == 'e' ? "an " : "a ") + name;
}

Architecture parse_architecture(const std::string& name) {
  for (Architecture a : {Architecture::EncoderDecoder, Architecture::DecoderOnly, Architecture::EncoderOnly})
    if (name == architecture_name(a)) return a;
  throw ValueError(message("architecture: expected encoder-decoder, decoder-only or encoder-only, got '", name, "'"));
}

const char* bias_name(Bias b) {
  switch (b) {
    case Bias::All:
      return "true";
    case Bias::None:
      return "false";
    case Bias::Attention:
      return "attention";
    case Bias::QKV:
      return "qkv";
  }
  return "?";
}

const char* positions_name(Positions p) {
  return p == Positions::Learned ? "learned" : p == Positions::Rotary ? "rope" : "sinusoidal";
}

std::string lora_targets_name(const LoraOptions& lora) {
  std::string names;
  for (const auto& [on, name] :
       {std::pair{lora.q, "q"}, {lora.k, "k"}, {lora.v, "v"}, {lora.o, "o"}, {lora.ffn, "ffn"}, {lora.embed, "embed"}})
    if (on) names += (names.empty() ? "" : ",") + std::string(name);
  return names;
}

LoraOptions parse_lora_targets(const std::string& list, LoraOptions lora) {
  lora.q = lora.k = lora.v = lora.o = lora.ffn = lora.embed = false;
  std::pair<bool*, const char*> targets[] = {{&lora.q, "q"}, {&lora.k, "k"},     {&lora.v, "v"},
                                             {&lora.o, "o"}, {&lora.ffn, "ffn"}, {&lora.embed, "embed"}};
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string piece = list.substr(start, comma - start);
    bool* target = nullptr;
    for (auto& [on, name] : targets)
      if (piece == name) target = on;
    if (!target || *target)
      throw ValueError(message("LoRA targets: '", piece, "' in '", list, "' is ",
                               target ? "named twice" : "not one of q, k, v, o, ffn, embed (comma-separated)"));
    *target = true;
    start = comma + 1;
  }
  return lora;
}

namespace {

// The (in, out) of each projection the adapters sit beside in one attention (q: d -> H d_k, k and v:
// d -> N d_k, o: H d_k -> d), and in the feed-forward network (d -> d_ff, d_ff -> d, SwiGLU's third).
std::vector<std::pair<int64_t, int64_t>> lora_projections(const LayerConfig& c, bool attention) {
  const LoraOptions& l = c.block.lora;
  const int64_t d = c.d_model, q = c.heads * c.head_dim(), kv = c.kv_heads() * c.head_dim();
  std::vector<std::pair<int64_t, int64_t>> sides;
  if (attention) {
    if (l.q) sides.emplace_back(d, q);
    if (l.k) sides.emplace_back(d, kv);
    if (l.v) sides.emplace_back(d, kv);
    if (l.o) sides.emplace_back(q, d);
  } else if (l.ffn) {
    sides.emplace_back(d, c.d_ff), sides.emplace_back(c.d_ff, d);
    if (c.activation == Activation::SwiGLU) sides.emplace_back(d, c.d_ff);
  }
  return sides;
}

void validate_lora(const char* who, const LayerConfig& c) {
  const LoraOptions& l = c.block.lora;
  if (l.rank == 0) return;
  if (l.rank < 0) throw ValueError(message(who, ": lora rank must be 0 (none) or positive, got ", l.rank));
  if (!(l.alpha > 0 && l.alpha <= 1e6))
    throw ValueError(message(who, ": lora alpha must be in (0, 1e6], got ", l.alpha));
  if (!l.q && !l.k && !l.v && !l.o && !l.ffn)
    throw ValueError(message(who, ": lora rank ", l.rank, " with no projection to sit beside (q, k, v, o, ffn)"));
  for (bool attention : {true, false})
    for (const auto& [in, out] : lora_projections(c, attention))
      if (l.rank > std::min(in, out))
        throw ValueError(message(who, ": lora rank ", l.rank, " is more than the narrower side of a ", in, " -> ", out,
                                 " projection it would sit beside (targets ", lora_targets_name(l), ")"));
}

}  // namespace

void validate_block(const char* who, const LayerConfig& c) {
  const BlockOptions& b = c.block;
  if (b.kv_heads < 0 || (b.kv_heads > 0 && c.heads % b.kv_heads != 0))
    throw ValueError(message(who, ": kv_heads ", b.kv_heads, " must divide heads ", c.heads,
                             " (each key/value head serves heads / kv_heads query heads)"));
  if (b.head_dim < 0 || b.head_dim > TransformerConfig::max_d_model)
    throw ValueError(message(who, ": head_dim must be in [0, ", TransformerConfig::max_d_model, "], got ", b.head_dim));
  if (b.head_dim == 0 && c.d_model % c.heads != 0)
    throw ValueError(message(who, ": d_model ", c.d_model, " is not divisible by heads ", c.heads));
  if (c.rotary && c.head_dim() % 2 != 0)
    throw ValueError(message(who,
                             ": rotary positions turn pairs of a head's numbers, so the head width (d_model / heads "
                             "or head_dim) must be even, got ",
                             c.head_dim()));
  if (!(b.rope_theta > 1 && b.rope_theta <= 1e12))
    throw ValueError(message(who, ": rope_theta must be in (1, 1e12], got ", b.rope_theta));
  const RopeScaling& r = b.rope_scaling;
  if (r.factor != 0 && !(r.factor >= 1 && r.low_freq_factor > 0 && r.high_freq_factor > r.low_freq_factor &&
                         r.original_max_len > 0 && r.factor <= 1e6 && r.high_freq_factor <= 1e6))
    throw ValueError(message(who,
                             ": rope scaling needs factor >= 1, 0 < low_freq_factor < high_freq_factor and a "
                             "positive original length, got factor ",
                             r.factor, ", low_freq_factor ", r.low_freq_factor, ", high_freq_factor ",
                             r.high_freq_factor, ", original_max_len ", r.original_max_len));
  validate_lora(who, c);
}

int64_t norm_parameter_count(const LayerConfig& c) {
  return c.block.normalization == Normalization::RMSNorm ? c.d_model : 2 * c.d_model;
}

// attention  W^Q [H d_k, d], W^K and W^V [N d_k, d], W^O [d, H d_k], and the biases the setting keeps
// feed-forward  2 d d_ff + d_ff + d, or SwiGLU's three matrices 3 d d_ff (+ 2 d_ff + d with biases)
LayerCount layer_parameter_count(const LayerConfig& c, bool with_cross_attention) {
  const int64_t d = c.d_model, dk = c.head_dim(), H = c.heads, N = c.kv_heads(), qkv = (H + 2 * N) * dk;
  const Bias bias = c.block.bias;
  const int64_t attention_bias = bias == Bias::None ? 0 : bias == Bias::QKV ? qkv : qkv + d;
  const bool swiglu = c.activation == Activation::SwiGLU;
  LayerCount n;
  n.attention = qkv * d + H * dk * d + attention_bias;
  n.cross_attention = with_cross_attention ? n.attention : 0;
  n.feed_forward = (swiglu ? 3 : 2) * d * c.d_ff + (bias == Bias::All ? (swiglu ? 2 : 1) * c.d_ff + d : 0);
  n.norms = (with_cross_attention ? 3 : 2) * norm_parameter_count(c);
  // each adapter beside an in -> out projection: A [r, in] and B [out, r]
  auto adapters = [&](bool attention) {
    int64_t sum = 0;
    for (const auto& [in, out] : lora_projections(c, attention)) sum += c.block.lora.rank * (in + out);
    return sum;
  };
  n.lora = (with_cross_attention ? 2 : 1) * adapters(true) + adapters(false);
  return n;
}

TransformerConfig TransformerConfig::tutorial(int64_t src_vocab, int64_t tgt_vocab) {
  TransformerConfig c;
  c.src_vocab = src_vocab, c.tgt_vocab = tgt_vocab;
  c.d_model = 128, c.d_ff = 512, c.heads = 8, c.layers = 2, c.dropout = 0.1;
  return c;
}

TransformerConfig TransformerConfig::base(int64_t src_vocab, int64_t tgt_vocab) {
  TransformerConfig c;
  c.src_vocab = src_vocab, c.tgt_vocab = tgt_vocab;
  c.d_model = 512, c.d_ff = 2048, c.heads = 8, c.layers = 6, c.dropout = 0.1;
  c.tie_embeddings = src_vocab == tgt_vocab;
  return c;
}

TransformerConfig TransformerConfig::big(int64_t src_vocab, int64_t tgt_vocab) {
  TransformerConfig c = base(src_vocab, tgt_vocab);
  c.d_model = 1024, c.d_ff = 4096, c.heads = 16, c.dropout = 0.3;
  return c;
}

void TransformerConfig::validate() const {
  auto positive = [](const char* name, int64_t v) {
    if (v <= 0) throw ValueError(message("TransformerConfig: ", name, " must be positive, got ", v));
  };
  positive("src_vocab", src_vocab), positive("tgt_vocab", tgt_vocab), positive("d_model", d_model);
  positive("d_ff", d_ff), positive("heads", heads), positive("layers", layers), positive("max_len", max_len);
  // Upper bounds, far beyond any model this library trains on a CPU (the paper's big model is
  // d_model 1024, d_ff 4096, 16 heads, 6 layers), so that a typo on the command line or a hostile
  // checkpoint fails here, by name, rather than in an allocation of terabytes. They also keep the
  // products below (and parameter_count's) far from overflowing int64.
  auto at_most = [](const char* name, int64_t v, int64_t bound) {
    if (v > bound) throw ValueError(message("TransformerConfig: ", name, " must be at most ", bound, ", got ", v));
  };
  at_most("src_vocab", src_vocab, max_vocab), at_most("tgt_vocab", tgt_vocab, max_vocab);
  at_most("d_model", d_model, max_d_model), at_most("d_ff", d_ff, max_d_ff), at_most("heads", heads, max_heads);
  at_most("layers", layers, max_layers), at_most("max_len", max_len, max_max_len);
  // Each size can be sane and the model still too big: bound what the constructor would allocate,
  // the parameters and the max_len x d_model positional-encoding table (training needs about four
  // times that, with the gradients and Adam's two moments).
  // parameter_count's formula (it calls validate(), so it cannot be called here).
  validate_block("TransformerConfig", layer());
  const int64_t d = d_model;
  const bool tied = tie_embeddings, encoder_decoder = arch == Architecture::EncoderDecoder;
  const int64_t layer_parameters = layer_parameter_count(layer(), false).total() +
                                   (encoder_decoder ? layer_parameter_count(layer(), true).total() : 0);
  const int64_t parameters =
      (tied ? src_vocab * d + tgt_vocab : (src_vocab + tgt_vocab) * d + d * tgt_vocab + tgt_vocab) +
      layers * layer_parameters + (norm == NormPlacement::Pre ? 4 * d : 0);
  if (parameters + max_len * d > max_numbers)
    throw ValueError(message("TransformerConfig: the model would hold ", parameters, " parameters and a ", max_len,
                             " x ", d, " positional table, more than the ", max_numbers, " numbers allowed (d_model ",
                             d, ", d_ff ", d_ff, ", layers ", layers, ", vocabularies ", src_vocab, " and ", tgt_vocab,
                             ", max_len ", max_len, ")"));
  if (d_model % 2 != 0 && positions == Positions::Sinusoidal)
    throw ValueError(message("TransformerConfig: d_model must be even (sine and cosine pairs), got ", d_model));
  if (!(dropout >= 0 && dropout < 1))
    throw ValueError(message("TransformerConfig: dropout must be in [0, 1), got ", dropout));
  if (arch != Architecture::EncoderDecoder && src_vocab != tgt_vocab)
    throw ValueError(message("TransformerConfig: ", a_architecture(arch),
                             " model has one vocabulary, so src_vocab must equal tgt_vocab, got ", src_vocab, " and ",
                             tgt_vocab));
  if (tie_embeddings && src_vocab != tgt_vocab)
    throw ValueError(message("TransformerConfig: tie_embeddings needs one shared vocabulary, got src_vocab ", src_vocab,
                             " and tgt_vocab ", tgt_vocab));
  if (!(norm_eps > 0 && norm_eps <= 1))
    throw ValueError(message("TransformerConfig: norm_eps must be in (0, 1], got ", norm_eps));
  if (dtype != DType::Float32 && dtype != DType::Float64)
    throw DTypeError(message("TransformerConfig: dtype must be float32 or float64, got ", dtype));
}

}  // namespace gradformer
