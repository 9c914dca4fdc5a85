// trace_html: the walk of trace.h as one page a learner opens offline: every stage as a card, the
// attention weights as inline SVG heatmaps, the next-token probabilities as bars. No scripts, no
// fonts or styles fetched from anywhere.
#include <cstdio>
#include <sstream>

#include "transformer/inspect/svg.h"
#include "transformer/inspect/trace.h"
#include "transformer/inspect/trace_page.h"

namespace gradformer {

namespace trace_page {
namespace {

constexpr const char* kStyle = R"(
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 0; background: #f6f7f9; color: #1d232b; }
header { background: #1d3557; color: #fff; padding: 28px 40px; }
header h1 { margin: 0 0 6px 0; font-size: 26px; }
header p { margin: 0; opacity: 0.85; }
main { max-width: 1100px; margin: 0 auto; padding: 24px 40px 60px; }
section { background: #fff; border-radius: 10px; box-shadow: 0 1px 3px rgba(0,0,0,0.08); margin: 22px 0; padding: 18px 24px; }
h2 { font-size: 19px; margin: 0 0 4px 0; }
h2 .n { display: inline-block; width: 28px; height: 28px; line-height: 28px; text-align: center; border-radius: 14px; background: #e63946; color: #fff; margin-right: 10px; font-size: 15px; }
.why { color: #5a6472; margin: 4px 0 14px 0; }
.tokens { display: flex; flex-wrap: wrap; gap: 8px; }
.token { border: 1px solid #c9d3df; border-radius: 6px; padding: 6px 10px; text-align: center; background: #f9fbfd; }
.token b { display: block; font-size: 16px; }
.token span { color: #5a6472; font-size: 12px; }
.token.unk { border-color: #e63946; background: #fdecee; }
.stage { border-left: 4px solid #457b9d; padding: 6px 12px; margin: 10px 0; background: #f9fbfd; }
.stage .eq { font-family: ui-monospace, Menlo, Consolas, monospace; color: #1d3557; }
.stage .stats { color: #5a6472; font-size: 13px; margin-top: 3px; }
.heads { display: flex; flex-wrap: wrap; gap: 10px; }
.heads svg { max-width: 340px; height: auto; }
table.steps { border-collapse: collapse; width: 100%; }
table.steps td, table.steps th { border-bottom: 1px solid #e3e8ee; padding: 6px 8px; vertical-align: top; text-align: left; }
.bar { display: flex; align-items: center; gap: 6px; font-size: 13px; }
.bar i { display: inline-block; height: 10px; background: #457b9d; border-radius: 3px; }
.chosen { font-weight: bold; color: #e63946; }
.translation { font-size: 22px; }
.bar i.grad { background: #e63946; }
td.num { font-family: ui-monospace, Menlo, Consolas, monospace; text-align: right; }
)";

}  // namespace

std::string begin(const std::string& title, const std::string& heading_html, const std::string& subtitle_html) {
  return "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>" + escape_xml(title) +
         "</title><style>" + kStyle + "</style></head><body>\n<header><h1>" + heading_html + "</h1><p>" +
         subtitle_html + "</p></header>\n<main>\n";
}

std::string section(int number, const std::string& title, const std::string& why_html, const std::string& body_html) {
  std::ostringstream out;
  out << "<section><h2><span class='n'>" << number << "</span>" << escape_xml(title) << "</h2><p class='why'>"
      << why_html << "</p>\n"
      << body_html << "</section>\n";
  return out.str();
}

std::string end() { return "</main></body></html>\n"; }

std::string fixed(double v, int digits) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", digits, v);
  return buffer;
}

}  // namespace trace_page

namespace {

using trace_page::fixed, trace_page::section;

std::string stage_html(const TraceStage& s) {
  std::ostringstream out;
  out << "<div class='stage'><b>" << escape_xml(s.name) << "</b> &nbsp; <span class='eq'>" << escape_xml(s.equation)
      << "</span><div class='stats'>shape " << s.stats.shape << " &middot; mean " << fixed(s.stats.mean)
      << " &middot; std " << fixed(s.stats.std) << " &middot; max |x| " << fixed(s.stats.max_abs)
      << " &middot; first values [";
  for (size_t i = 0; i < s.stats.first.size(); ++i) out << (i ? ", " : "") << fixed(s.stats.first[i]);
  out << ", &hellip;]</div></div>\n";
  return out.str();
}

}  // namespace

std::string trace_html(const SentenceTrace& t) {
  const TransformerConfig& c = t.config;
  std::ostringstream page;
  std::string sentence;
  for (size_t i = 0; i < t.unknown.size(); ++i) sentence += (i ? " " : "") + t.source_tokens[i];
  std::string translation;
  for (size_t i = 0; i < t.translation.size(); ++i) translation += (i ? " " : "") + t.translation[i];
  page << trace_page::begin(
      "gradformer trace: " + sentence,
      "&ldquo;" + escape_xml(sentence) + "&rdquo; &rarr; &ldquo;" + escape_xml(translation) + "&rdquo;",
      message("One sentence through an encoder-decoder Transformer: d_model ", c.d_model, ", ",
              counted(c.layers, "layer"), " each side, ", counted(c.heads, "head"), ", d_ff ", c.d_ff, ", ",
              c.norm == NormPlacement::Post ? "post-LN" : "pre-LN",
              ". Each section is one box of the paper's figure 1."));
  int number = 1;

  std::ostringstream tokens;
  tokens << "<div class='tokens'>";
  for (size_t i = 0; i < t.source_tokens.size(); ++i) {
    const bool unk = i < t.unknown.size() && t.unknown[i];
    tokens << "<div class='token" << (unk ? " unk" : "") << "'><b>" << escape_xml(t.source_tokens[i]) << "</b><span>id "
           << t.source_ids[i] << (unk ? " (&lt;unk&gt;)" : "") << "</span></div>";
  }
  tokens << "</div>\n";
  page << section(
      number++, "Tokens to ids",
      "The source vocabulary maps each word to a row of the embedding table; every source ends in &lt;/s&gt;.",
      tokens.str());
  page << section(
      number++, "Embedding, scaled, plus positions",
      "Each id picks a learned vector, scaled by &radic;d_model so it is not drowned by the positional encoding, "
      "which tells the model where each token stands (sections 3.4 and 3.5).",
      stage_html(t.embedding) + stage_html(t.scaled) + stage_html(t.positions) + stage_html(t.encoder_input));

  for (size_t l = 0; l < t.encoder.size(); ++l) {
    const EncoderLayerTrace& layer = t.encoder[l];
    std::ostringstream body;
    body << "<div class='heads'>";
    for (int64_t h = 0; h < layer.attention.size(0); ++h) {
      Heatmap map = heatmap_of(layer.attention.select(0, h), t.source_tokens, t.source_tokens, message("head ", h));
      map.range = std::make_pair(0.0, 1.0);
      body << heatmap_svg(map);
    }
    body << "</div>\n";
    for (const TraceStage& s : layer.stages) body << stage_html(s);
    page << section(
        number++, message("Encoder layer ", l),
        "Self-attention: every token builds its new vector from all the others, weighted by how well its query "
        "matches their keys (one heatmap per head; a row is a token, its cells where it looks). Then a "
        "feed-forward network on each position alone, each sub-layer with a residual connection and a LayerNorm.",
        body.str());
  }
  page << section(number++, "The encoder's output", "What the decoder's cross-attention reads at every step.",
                  stage_html(t.memory));

  std::ostringstream steps;
  std::vector<std::string> chosen;
  std::vector<double> cross_last;  // the last layer's cross-attention, one row per step
  for (const DecodeStepTrace& s : t.steps) {
    chosen.push_back(s.chosen);
    const auto& last = s.cross_attention.back();
    cross_last.insert(cross_last.end(), last.begin(), last.end());
  }
  if (!t.steps.empty()) {
    Heatmap cross{"cross-attention, last layer", chosen, t.source_tokens, cross_last, "generated token", "source token",
                  std::make_pair(0.0, 1.0)};
    steps << "<div class='heads'>" << heatmap_svg(cross) << "</div>\n";
  }
  steps << "<table class='steps'><tr><th>step</th><th>prefix the decoder sees</th><th>next-token "
           "probabilities</th></tr>\n";
  for (size_t i = 0; i < t.steps.size(); ++i) {
    const DecodeStepTrace& s = t.steps[i];
    steps << "<tr><td>" << i + 1 << "</td><td>";
    for (const std::string& w : s.prefix) steps << escape_xml(w) << " ";
    steps << "</td><td>";
    for (const TokenProbability& p : s.top)
      steps << "<div class='bar'><i style='width:" << fixed(200 * p.probability, 1) << "px'></i><span"
            << (p.token == s.chosen ? " class='chosen'" : "") << ">" << escape_xml(p.token) << " "
            << fixed(p.probability) << "</span></div>";
    steps << "</td></tr>\n";
  }
  steps << "</table>\n";
  if (!t.beam_steps.empty()) {
    steps << "<h3>Beam search, " << t.beam
          << " beams</h3><table class='steps'><tr><th>step</th><th>live hypotheses (log P)</th></tr>\n";
    for (size_t i = 0; i < t.beam_steps.size(); ++i) {
      steps << "<tr><td>" << i + 1 << "</td><td>";
      for (const auto& b : t.beam_steps[i].beams) {
        steps << "<div>";
        for (const std::string& w : b.tokens) steps << escape_xml(w) << " ";
        steps << "<span class='why'>(" << fixed(b.log_prob, 2) << ")</span></div>";
      }
      steps << "</td></tr>\n";
    }
    steps << "</table>\n";
  }
  page << section(
      number++, "Decoding, one token at a time",
      "The decoder starts from &lt;s&gt;, and at every step reads the prefix so far (masked self-attention: no "
      "peeking ahead) and the source (cross-attention), and scores every word of the target vocabulary; greedy "
      "decoding takes the most likely.",
      steps.str());
  page << section(
      number++, "Translation", t.beam > 1 ? message("beam search's best of ", t.beam, " beams") : "greedy decoding's",
      "<p class='translation'>" +
          (translation.empty() ? "(nothing: the model ended the sentence at once)" : escape_xml(translation)) + "</p>");
  page << trace_page::end();
  return page.str();
}

}  // namespace gradformer
