// lm_trace_html: the prompt's walk of lm_trace.h as one page a learner opens offline: the tokens,
// every layer's heads as inline SVG heatmaps, the next tokens as bars. The look of trace_page.h;
// no scripts, nothing fetched.
#include <algorithm>
#include <sstream>

#include "transformer/inspect/lm_trace.h"
#include "transformer/inspect/svg.h"
#include "transformer/inspect/trace_page.h"

namespace gradformer {

namespace {

using trace_page::fixed, trace_page::section;

std::string tokens_html(const LmTrace& t) {
  std::ostringstream out;
  out << "<div class='tokens'>";
  for (size_t i = 0; i < t.ids.size(); ++i)
    out << "<div class='token'><b>" << escape_xml(t.pieces[i]) << "</b><span>" << i << " &middot; id " << t.ids[i]
        << "</span></div>";
  out << "</div>\n";
  return out.str();
}

// One heatmap per head of layer l (or only `head`), rows the query tokens, columns the keys.
std::string layer_html(const LmTrace& t, int64_t l, int64_t head) {
  std::vector<std::string> labels;
  for (size_t i = 0; i < t.pieces.size(); ++i) labels.push_back(message(t.pieces[i], " ", i));
  std::ostringstream out;
  out << "<div class='heads'>";
  for (int64_t h = 0; h < t.config.heads; ++h) {
    if (head != -1 && h != head) continue;
    Heatmap map = heatmap_of(t.attention[static_cast<size_t>(l)].select(0, h), labels, labels, message("head ", h));
    map.range = std::make_pair(0.0, 1.0);
    out << heatmap_svg(map);
  }
  out << "</div>\n";
  return out.str();
}

// Every head's strongest habit as a table, layers down, heads across (as lm_trace_text's grid).
std::string habits_html(const LmTrace& t) {
  std::ostringstream out;
  out << "<table class='steps'><tr><th></th>";
  for (int64_t h = 0; h < t.config.heads; ++h) out << "<th>h" << h << "</th>";
  out << "</tr>\n";
  for (int64_t l = 0; l < static_cast<int64_t>(t.attention.size()); ++l) {
    out << "<tr><th>layer " << l << "</th>";
    for (int64_t h = 0; h < t.config.heads; ++h) {
      const HeadHabits x = head_habits(t, l, h);
      const double best = std::max({x.first, x.previous, x.self});
      out << "<td class='num'>"
          << (best == x.first      ? "first"
              : best == x.previous ? "before"
                                   : "itself")
          << " " << fixed(100 * best, 0) << "%</td>";
    }
    out << "</tr>\n";
  }
  out << "</table>\n";
  return out.str();
}

std::string next_html(const LmTrace& t) {
  std::ostringstream out;
  out << "<table class='steps'><tr><th>rank</th><th>token</th><th>id</th><th>probability</th></tr>\n";
  for (size_t r = 0; r < t.next.size(); ++r) {
    const NextToken& n = t.next[r];
    out << "<tr><td>" << r + 1 << "</td><td>" << escape_xml(n.piece) << "</td><td class='num'>" << n.id
        << "</td><td><div class='bar'><i style='width:" << fixed(300 * n.probability, 1) << "px'></i><span>"
        << fixed(100 * n.probability, 2) << "%</span></div></td></tr>\n";
  }
  out << "</table>\n";
  return out.str();
}

}  // namespace

std::string lm_trace_html(const LmTrace& t, const LmTraceView& v) {
  check_lm_trace_view(t, v);
  check_lm_page_size(static_cast<int64_t>(t.ids.size()), static_cast<int64_t>(t.attention.size()), t.config.heads, v);
  std::ostringstream page;
  page << trace_page::begin("gradformer trace: " + t.prompt, "What the model reads, and what it expects next",
                            escape_xml(message(t.config.layers, " layers, ", t.config.heads, " heads, d_model ",
                                               t.config.d_model, ", ", t.tokenizer, " tokenizer")));
  int number = 1;
  page << section(number++, "Tokens",
                  "The prompt cut into tokens, each with its id: the rows of the embedding the model starts from. "
                  "A leading space shows as &#288;, a line end as &#266;.",
                  "<p>" + escape_xml(t.prompt) + "</p>" + tokens_html(t));
  if (t.ids.size() > 1)
    page << section(number++, "The heads at a glance",
                    "Each head's strongest habit, in percent: the mean weight a token gives the first token (F), "
                    "the token just before it (P), or itself (S), over the tokens after the first. Trained models "
                    "have heads of each kind.",
                    habits_html(t));
  for (int64_t l = 0; l < static_cast<int64_t>(t.attention.size()); ++l) {
    if (v.layer != -1 && l != v.layer) continue;
    const bool first = number == (t.ids.size() > 1 ? 3 : 2);
    page << section(
        number++, message("Layer ", l),
        first ? "Masked self-attention, one heatmap per head: a row is a token (the query), its cells the "
                "tokens it attends to (the keys) and how much; each row sums to 1. The mask is causal, so "
                "everything above the diagonal is 0: a token sees only itself and the tokens before it."
              : message("The same, one layer up: the heads of layer ", l, " read the vectors layer ", l - 1, " wrote."),
        layer_html(t, l, v.head));
  }
  page << section(number++, "Next token",
                  message("The last position's output, through the output projection and a softmax: the ",
                          t.next.size(), " most likely of the ", t.config.tgt_vocab, " tokens to follow the prompt."),
                  next_html(t));
  page << trace_page::end();
  return page.str();
}

}  // namespace gradformer
