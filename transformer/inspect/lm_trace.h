// One prompt through a decoder-only model (GPT, GPT-2, the toy language model): its tokens, where
// every head of every layer looks (the causal self-attention weights, rows the query tokens, columns
// the key tokens: a token sees itself and the tokens before it), and the most likely next tokens:
//
//   P(next | prompt) = softmax(h_n W_e^T)[last position]       (Radford et al., 2018, section 3.1)
//
// What `gradformer trace` prints for a decoder-only checkpoint, and draws as one HTML page.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tensor/tensor.h"
#include "transformer/data/tokenizer.h"
#include "transformer/model/decoder_only.h"

namespace gradformer {

/// A candidate next token: its id, its piece ("Ġthe"), its text (" the") and its probability.
struct NextToken {
  int64_t id = 0;
  std::string piece, text;
  double probability = 0;
};

struct LmTrace {
  TransformerConfig config;
  std::string prompt;               // as given
  std::string tokenizer;            // "GPT-2's", or the kind: "bytes", "bpe", "words"
  std::vector<int64_t> ids;         // a model of words reads <s> first
  std::vector<std::string> pieces;  // Tokenizer::piece of each id
  std::vector<std::string> texts;   // the text each id stands for (words: the word)
  std::vector<Tensor> attention;    // per layer [H, T, T] float64: row i is query token i's weights
  std::vector<NextToken> next;      // the most likely next tokens, best first
};

/// Which heads to show: layer and head -1 for all of them.
struct LmTraceView {
  int64_t layer = -1, head = -1;
  int64_t matrix_tokens = 16;  // prompts of up to this many tokens as a matrix, longer ones as top keys
  int64_t top_keys = 3;        // keys shown per query token past matrix_tokens
};

struct LmTraceOptions {
  int64_t top = 10;  // next tokens kept
  /// The view of the HTML page the caller will draw from the trace, if any: a prompt too long for
  /// it is refused (check_lm_page_size) before the forward pass computes every head's attention.
  std::optional<LmTraceView> page = std::nullopt;
};

/// Reads `prompt` as the model was trained to (bytes, bpe, GPT-2's tokenizer: the raw text; words:
/// <s>, then the words, unknown ones as <unk>), runs one forward pass in eval mode without a graph,
/// keeping each layer's attention weights. ValueError for an empty prompt or top < 1; DataError for
/// a prompt of more tokens than the model's max_len or one the tokenizer cannot encode.
LmTrace trace_prompt(DecoderOnly& model, const Tokenizer& tokenizer, const std::string& prompt,
                     const LmTraceOptions& options = {});

/// Three habits of a head (trained heads often have one: GPT-2 has heads that look at the token
/// before, and heads that park their weight on the first token), each the mean weight over the query
/// tokens after the first: on the first token, on the token just before, on itself. A prompt of one
/// token: all 0.
struct HeadHabits {
  double first = 0, previous = 0, self = 0;
};
HeadHabits head_habits(const LmTrace& trace, int64_t layer, int64_t head);

/// ValueError unless view.layer and view.head are -1 or a layer and a head of the trace.
void check_lm_trace_view(const LmTrace& trace, const LmTraceView& view);

/// The trace as text: the tokens, a grid of every head's strongest habit (prompts of 2 tokens or more),
/// each head's weights in percent (a matrix for short prompts, each
/// query's top keys for long ones), the next tokens. ValueError for a layer or head out of range.
std::string lm_trace_text(const LmTrace& trace, const LmTraceView& view = {});

/// The most attention cells (heads shown x T x T) one page draws: about 110 bytes each, some 30 MB.
inline constexpr int64_t kMaxPageCells = 250000;

/// A page that would draw more than kMaxPageCells cells (what to show is the caller's choice).
struct PageSizeError : ValueError {
  using ValueError::ValueError;
};

/// PageSizeError, naming --layer and --head, when a page of `view` for a prompt of `tokens` tokens on a
/// model of `layers` layers and `heads` heads would draw more than kMaxPageCells cells.
void check_lm_page_size(int64_t tokens, int64_t layers, int64_t heads, const LmTraceView& view);

/// The trace as one HTML page: the tokens, the heads' habits, one heatmap per layer and head, the
/// next tokens as bars; no scripts, nothing fetched. ValueError for a layer or head out of range, and
/// PageSizeError for more than kMaxPageCells cells to draw (naming --layer and --head, which draw fewer).
std::string lm_trace_html(const LmTrace& trace, const LmTraceView& view = {});

}  // namespace gradformer
