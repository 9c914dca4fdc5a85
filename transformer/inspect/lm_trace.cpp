#include "transformer/inspect/lm_trace.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <sstream>

#include "autograd/anomaly.h"
#include "nn/module.h"
#include "transformer/model/masks.h"

namespace gradformer {

namespace {

// For as long as it lives, every layer of the model keeps its last attention weights; on the way
// out, even by an exception, they stop keeping them and the weights are dropped.
class KeepLmAttention {
 public:
  explicit KeepLmAttention(DecoderOnly& model) : model_(model) { keep(true); }
  ~KeepLmAttention() { keep(false); }
  KeepLmAttention(const KeepLmAttention&) = delete;
  KeepLmAttention& operator=(const KeepLmAttention&) = delete;

 private:
  void keep(bool on) {
    for (size_t l = 0; l < model_.decoder->layers->size(); ++l) {
      DecoderOnlyBlock& block = (*model_.decoder->layers)[l];
      block.keep_attention = on;
      block.attention = Tensor();
    }
  }
  DecoderOnly& model_;
};

// The prompt's ids as the model was trained to read it: <s> then the words, or the raw text's tokens.
std::vector<int64_t> prompt_ids(const Tokenizer& tokenizer, const std::string& prompt) {
  std::vector<int64_t> ids;
  if (tokenizer.kind() == Tokenizer::Kind::Words) ids.push_back(Vocab::bos);
  try {
    for (int64_t id : tokenizer.encode(prompt)) ids.push_back(id);
  } catch (const ValueError& e) {
    throw DataError(
        message("trace: the prompt cannot be read by the model's ", tokenizer.kind_name(), " tokenizer: ", e.what()));
  }
  return ids;
}

// p = softmax(logits) in double; the `top` most likely (ties: the smaller id first).
std::vector<NextToken> next_tokens(const Tensor& logits, const Tokenizer& tokenizer, int64_t top) {
  const std::vector<double> z = logits.to(DType::Float64).contiguous().to_vector<double>();
  const double most = *std::max_element(z.begin(), z.end());
  std::vector<double> p(z.size());
  double total = 0;
  for (size_t i = 0; i < z.size(); ++i) total += p[i] = std::exp(z[i] - most);
  std::vector<int64_t> order(z.size());
  std::iota(order.begin(), order.end(), 0);
  const auto kept = std::min<int64_t>(top, static_cast<int64_t>(order.size()));
  std::partial_sort(order.begin(), order.begin() + kept, order.end(), [&](int64_t a, int64_t b) {
    return p[static_cast<size_t>(a)] > p[static_cast<size_t>(b)] ||
           (p[static_cast<size_t>(a)] == p[static_cast<size_t>(b)] && a < b);
  });
  std::vector<NextToken> next;
  for (int64_t r = 0; r < kept; ++r) {
    const int64_t id = order[static_cast<size_t>(r)];
    next.push_back({id, tokenizer.piece(id), tokenizer.decode({id}), p[static_cast<size_t>(id)] / total});
  }
  return next;
}

// The number of characters (UTF-8 code points) of s, for columns that line up.
size_t characters(const std::string& s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

// s cut to `width` characters (the last one "~" when cut), or padded with spaces to `width`.
std::string column(const std::string& s, size_t width) {
  if (characters(s) <= width) return s + std::string(width - characters(s), ' ');
  std::string out;
  size_t n = 0;
  for (char c : s) {
    if ((c & 0xC0) != 0x80 && n++ == width - 1) break;
    out += c;
  }
  return out + "~";
}

// A token's text in quotes, its line ends and tabs as \n \t, other control bytes as \xNN.
std::string quoted(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c == '"' || c == '\\')
      out += std::string("\\") + c;
    else if (byte < 0x20 || byte == 0x7F)
      out += message("\\x", "0123456789abcdef"[byte >> 4], "0123456789abcdef"[byte & 15]);
    else
      out += c;
  }
  return out + "\"";
}

// s padded on the left to `width` characters.
std::string right(const std::string& s, size_t width) {
  return std::string(width - std::min(width, characters(s)), ' ') + s;
}

std::string percent(double p) { return std::to_string(static_cast<int64_t>(std::lround(100 * p))); }

std::string tokens_text(const LmTrace& t) {
  std::ostringstream out;
  out << "Prompt: " << quoted(t.prompt) << ": " << counted(static_cast<long long>(t.ids.size()), "token") << " of "
      << t.tokenizer << " tokenizer (the model reads at most " << t.config.max_len << ")\n"
      << right(std::string("#"), 4) << "  " << column("id", 7) << " " << column("piece", 13) << " text\n";
  for (size_t i = 0; i < t.ids.size(); ++i)
    out << right(std::to_string(i), 4) << "  " << column(std::to_string(t.ids[i]), 7) << " " << column(t.pieces[i], 13)
        << " " << quoted(t.texts[i]) << "\n";
  return out.str();
}

// One head's weights [T, T] as a matrix of percentages, "." where the causal mask hides the key.
std::string matrix_text(const LmTrace& t, const double* w) {
  const size_t T = t.ids.size();
  std::ostringstream out;
  out << std::string(19, ' ');
  for (size_t k = 0; k < T; ++k) out << right(std::to_string(k), 4);
  out << "\n";
  for (size_t q = 0; q < T; ++q) {
    out << right(std::to_string(q), 5) << " " << column(t.pieces[q], 12) << " ";
    for (size_t k = 0; k < T; ++k) {
      out << right(k > q ? "." : percent(w[q * T + k]), 4);
    }
    out << "\n";
  }
  return out.str();
}

// One head's weights [T, T] as each query token's `top` strongest keys.
std::string top_keys_text(const LmTrace& t, const double* w, int64_t top) {
  const size_t T = t.ids.size();
  std::ostringstream out;
  for (size_t q = 0; q < T; ++q) {
    std::vector<size_t> keys(q + 1);
    std::iota(keys.begin(), keys.end(), 0);
    const size_t shown = std::min(keys.size(), static_cast<size_t>(top));
    std::partial_sort(keys.begin(), keys.begin() + static_cast<std::ptrdiff_t>(shown), keys.end(),
                      [&](size_t a, size_t b) { return w[q * T + a] > w[q * T + b]; });
    out << right(std::to_string(q), 5) << " " << column(t.pieces[q], 12) << " ->";
    for (size_t r = 0; r < shown; ++r)
      out << "  " << t.pieces[keys[r]] << " (" << keys[r] << ") " << percent(w[q * T + keys[r]]) << "%";
    out << "\n";
  }
  return out.str();
}

}  // namespace

// The cells the page would draw: every head shown, T x T each.
void check_lm_page_size(int64_t tokens, int64_t layers, int64_t heads, const LmTraceView& view) {
  const int64_t shown = (view.layer == -1 ? layers : 1) * (view.head == -1 ? heads : 1);
  if (shown * tokens * tokens > kMaxPageCells)
    throw PageSizeError(message("trace: the page would draw ", shown, " heads of ", tokens, " x ", tokens,
                                " tokens, more than ", kMaxPageCells, " cells: choose fewer with --layer and --head"));
}

LmTrace trace_prompt(DecoderOnly& model, const Tokenizer& tokenizer, const std::string& prompt,
                     const LmTraceOptions& options) {
  if (options.top < 1) throw ValueError(message("trace: top must be at least 1, got ", options.top));
  LmTrace t;
  t.config = model.config(), t.prompt = prompt;
  t.tokenizer = tokenizer.has_vocab() ? tokenizer.kind_name() : "GPT-2's";
  t.ids = prompt_ids(tokenizer, prompt);
  const auto T = static_cast<int64_t>(t.ids.size());
  if (T == 0 || (tokenizer.kind() == Tokenizer::Kind::Words && T == 1))
    throw ValueError("trace: the prompt is empty: give the text whose next token the model predicts");
  if (T > t.config.max_len)
    throw DataError(message("trace: the prompt's ", T, " tokens do not fit the model's context of ", t.config.max_len,
                            " tokens (max_len)"));
  if (options.page) check_lm_page_size(T, t.config.layers, t.config.heads, *options.page);
  for (int64_t id : t.ids) {
    t.pieces.push_back(tokenizer.piece(id));
    t.texts.push_back(tokenizer.kind() == Tokenizer::Kind::Words ? tokenizer.piece(id) : tokenizer.decode({id}));
  }
  InferenceGuard inference(model);
  KeepLmAttention keep(model);
  // logits [1, T, V]: position t's scores for token t + 1; the last row predicts what follows the prompt.
  const Variable logits = model.forward(from_vector(t.ids, {1, T}), causal_mask(T).unsqueeze(0));
  for (size_t l = 0; l < model.decoder->layers->size(); ++l)  // [1, H, T, T] -> [H, T, T]
    t.attention.push_back((*model.decoder->layers)[l].attention.select(0, 0).to(DType::Float64).contiguous());
  const Tensor last = logits.value().select(0, 0).select(0, T - 1);  // [V]
  if (double bad = 0; first_non_finite(last, &bad))                  // finite weights whose arithmetic overflows
    throw ValueError(message("trace: the model's scores for the token at position ", T, " hold ", bad,
                             ": its arithmetic overflows there (weights finite but too large?)"));
  t.next = next_tokens(last, tokenizer, options.top);
  return t;
}

void check_lm_trace_view(const LmTrace& t, const LmTraceView& v) {
  const auto layers = static_cast<int64_t>(t.attention.size()), heads = t.config.heads;
  if (v.layer < -1 || v.layer >= layers)
    throw ValueError(
        message("trace: layer must be from 0 to ", layers - 1, " (the model has ", layers, "), got ", v.layer));
  if (v.head < -1 || v.head >= heads)
    throw ValueError(
        message("trace: head must be from 0 to ", heads - 1, " (the model has ", heads, "), got ", v.head));
}

HeadHabits head_habits(const LmTrace& t, int64_t layer, int64_t head) {
  check_lm_trace_view(t, {.layer = layer, .head = head});
  const auto T = static_cast<int64_t>(t.ids.size());
  const double* w = t.attention[static_cast<size_t>(layer)].data<double>() + head * T * T;
  HeadHabits habits;
  for (int64_t q = 1; q < T; ++q) {
    habits.first += w[q * T] / static_cast<double>(T - 1);
    habits.previous += w[q * T + q - 1] / static_cast<double>(T - 1);
    habits.self += w[q * T + q] / static_cast<double>(T - 1);
  }
  return habits;
}

namespace {

// Every head's strongest habit as a grid, layers down, heads across: "P 87" looks 87% at the token before.
std::string habits_text(const LmTrace& t) {
  std::ostringstream out;
  out << "\nAttention at a glance: each head's strongest habit, its mean weight in percent over tokens 1\nto "
      << t.ids.size() - 1 << ": F on the first token, P on the token before, S on itself.\n"
      << std::string(8, ' ');
  for (int64_t h = 0; h < t.config.heads; ++h) out << right(message("h", h), 6);
  out << "\n";
  for (int64_t l = 0; l < static_cast<int64_t>(t.attention.size()); ++l) {
    out << column(message("layer ", l), 8);
    for (int64_t h = 0; h < t.config.heads; ++h) {
      const HeadHabits x = head_habits(t, l, h);
      const double best = std::max({x.first, x.previous, x.self});
      const char kind = best == x.first ? 'F' : best == x.previous ? 'P' : 'S';
      out << right(message(kind, " ", percent(best)), 6);
    }
    out << "\n";
  }
  return out.str();
}

}  // namespace

std::string lm_trace_text(const LmTrace& t, const LmTraceView& v) {
  check_lm_trace_view(t, v);
  std::ostringstream out;
  out << tokens_text(t);
  if (t.ids.size() > 1) out << habits_text(t);
  const int64_t T = static_cast<int64_t>(t.ids.size()), layers = static_cast<int64_t>(t.attention.size());
  const bool matrix = T <= v.matrix_tokens;
  out << "\nAttention, head by head (--layer L and --head H show fewer): " << counted(layers, "layer") << " x "
      << counted(t.config.heads, "head") << ".\nA row is a token (the query), "
      << (matrix ? "its columns the tokens it attends to (the keys), in percent: each row sums to 100.\n"
                 : message("then its ", v.top_keys, " strongest keys (the tokens it attends to), in percent.\n"))
      << "The mask is causal: a token sees itself and the tokens before it"
      << (matrix ? " (\".\" above the diagonal).\n" : ".\n");
  for (int64_t l = 0; l < layers; ++l) {
    if (v.layer != -1 && l != v.layer) continue;
    for (int64_t h = 0; h < t.config.heads; ++h) {
      if (v.head != -1 && h != v.head) continue;
      const double* w = t.attention[static_cast<size_t>(l)].data<double>() + h * T * T;
      out << "\nlayer " << l << " head " << h << "\n" << (matrix ? matrix_text(t, w) : top_keys_text(t, w, v.top_keys));
    }
  }
  out << "\nNext token: the " << t.next.size() << " most likely of " << t.config.tgt_vocab << "\n";
  for (size_t r = 0; r < t.next.size(); ++r) {
    const NextToken& n = t.next[r];
    char p[32];
    std::snprintf(p, sizeof p, "%6.2f%%", 100 * n.probability);
    out << right(std::to_string(r + 1) + ".", 4) << " " << p << "  " << column(std::to_string(n.id), 7) << " "
        << column(n.piece, 13) << " " << quoted(n.text) << "\n";
  }
  return out.str();
}

}  // namespace gradformer
