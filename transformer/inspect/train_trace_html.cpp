// train_trace_html: one training step (train_trace.h) as a page in the translation trace's style:
// the pair as tokens, the positions' probabilities and losses as a table with bars, the backward
// pass's gradient norms as bars layer by layer, the parameters' gradients, the step's effect.
#include <algorithm>
#include <sstream>

#include "transformer/inspect/svg.h"
#include "transformer/inspect/trace_page.h"
#include "transformer/inspect/train_trace.h"

namespace gradformer {
namespace {

using trace_page::fixed, trace_page::section;

std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (size_t i = 0; i < words.size(); ++i) text += (i ? " " : "") + words[i];
  return text;
}

std::string token_row(const std::vector<std::string>& tokens, const std::vector<std::string>& notes,
                      const std::vector<bool>& unknown) {
  std::ostringstream out;
  out << "<div class='tokens'>";
  for (size_t i = 0; i < tokens.size(); ++i) {
    const bool unk = i < unknown.size() && unknown[i];
    out << "<div class='token" << (unk ? " unk" : "") << "'><b>" << escape_xml(tokens[i]) << "</b><span>"
        << escape_xml(notes[i]) << (unk ? " (&lt;unk&gt;)" : "") << "</span></div>";
  }
  out << "</div>\n";
  return out.str();
}

std::string pair_html(const TrainStepTrace& t) {
  std::vector<std::string> ids, in, out, positions;
  for (int64_t id : t.source_ids) ids.push_back(message("id ", id));
  for (size_t i = 0; i < t.positions.size(); ++i) {
    in.push_back(t.positions[i].input), out.push_back(t.positions[i].target);
    positions.push_back(message("position ", i));
  }
  std::vector<bool> unknown_in{false};  // <s>, then the target's words
  unknown_in.insert(unknown_in.end(), t.unknown_target.begin(), t.unknown_target.end());
  return "<p>source</p>" + token_row(t.source_tokens, ids, t.unknown) + "<p>tgt_in: what the decoder reads</p>" +
         token_row(in, positions, unknown_in) + "<p>tgt_out: what it must predict</p>" +
         token_row(out, positions, t.unknown_target);
}

std::string losses_html(const TrainStepTrace& t) {
  const bool smoothing = t.label_smoothing > 0;
  std::ostringstream out;
  out << "<table class='steps'><tr><th>reads</th><th>predicts</th><th>P(right word)</th><th>-log P</th>"
      << (smoothing ? "<th>smoothed loss</th>" : "") << "</tr>\n";
  for (const PositionLoss& p : t.positions) {
    out << "<tr><td>" << escape_xml(p.input) << "</td><td>" << escape_xml(p.target)
        << "</td><td><div class='bar'><i style='width:" << fixed(200 * p.probability, 1) << "px'></i><span>"
        << fixed(p.probability) << "</span></div></td><td class='num'>" << fixed(p.loss, 4) << "</td>";
    if (smoothing) out << "<td class='num'>" << fixed(p.smoothed_loss, 4) << "</td>";
    out << "</tr>\n";
  }
  out << "</table>\n<p>mean -log P: <b>" << fixed(t.nll, 4) << "</b>. The loss the step minimises: <b>"
      << fixed(t.loss, 4) << "</b>, "
      << (smoothing ? message("label-smoothed cross-entropy, &epsilon; = ", t.label_smoothing,
                              ", as the model was trained (the mean of the smoothed column)")
                    : std::string("cross-entropy without label smoothing"))
      << ".</p>\n";
  return out.str();
}

std::string gradient_bar(double norm, double largest) {
  const double width = largest > 0 ? 300 * norm / largest : 0;
  return "<div class='bar'><i class='grad' style='width:" + fixed(width, 1) + "px'></i><span>" + fixed(norm, 5) +
         "</span></div>";
}

std::string backward_html(const TrainStepTrace& t) {
  double largest = 0;
  for (const BackwardStage& s : t.backward)
    for (const GradientAt& g : s.gradients) largest = std::max(largest, g.norm);
  std::ostringstream out;
  out << "<table class='steps'><tr><th>where</th><th>activation</th><th>shape</th><th>||dL/dx||</th></tr>\n";
  for (const BackwardStage& s : t.backward)
    for (size_t i = 0; i < s.gradients.size(); ++i) {
      const GradientAt& g = s.gradients[i];
      out << "<tr><td>" << (i ? "" : "<b>" + escape_xml(s.name) + "</b>") << "</td><td>" << escape_xml(g.name)
          << "</td><td>" << g.shape << "</td><td>" << gradient_bar(g.norm, largest) << "</td></tr>\n";
    }
  out << "</table>\n";
  return out.str();
}

std::string parameters_html(const TrainStepTrace& t) {
  double largest = 0;
  for (const ParameterGradient& g : t.parameter_gradients) largest = std::max(largest, g.norm);
  std::ostringstream out;
  out << "<table class='steps'><tr><th>parameters</th><th>how many</th><th>||dL/dw||</th></tr>\n";
  for (const ParameterGradient& g : t.parameter_gradients)
    out << "<tr><td>" << escape_xml(g.name) << "</td><td class='num'>" << g.parameters << "</td><td>"
        << gradient_bar(g.norm, largest) << "</td></tr>\n";
  out << "<tr><td><b>all</b></td><td></td><td>" << fixed(t.gradient_norm, 5) << "</td></tr></table>\n";
  return out.str();
}

std::string step_html(const TrainStepTrace& t) {
  std::ostringstream out;
  out << "<p class='translation'>" << fixed(t.loss, 4) << " &rarr; " << fixed(t.loss_after, 4)
      << "</p><p class='why'>to first order, loss &minus; lr &middot; ||dL/dw||&sup2; = "
      << fixed(t.loss - t.lr * t.gradient_norm * t.gradient_norm, 4)
      << "</p>\n<table class='steps'><tr><th>predicts</th><th>P(right word) before</th><th>after</th></tr>\n";
  for (const PositionLoss& p : t.positions)
    out << "<tr><td>" << escape_xml(p.target) << "</td><td class='num'>" << fixed(p.probability)
        << "</td><td class='num'>" << fixed(p.probability_after) << "</td></tr>\n";
  out << "</table>\n";
  return out.str();
}

std::string logit_gradient_html(const TrainStepTrace& t) {
  const LogitGradient& g = t.logit_gradient;
  std::ostringstream out;
  out << "<table class='steps'><tr><th>token</th><th>P</th><th>q</th><th>(P &minus; q)/n</th><th>backward</th></tr>\n";
  for (const LogitGradientRow& r : g.rows)
    out << "<tr><td>" << escape_xml(r.token) << "</td><td class='num'>" << fixed(r.p, 4) << "</td><td class='num'>"
        << fixed(r.q, 4) << "</td><td class='num'>" << fixed(r.formula, 5) << "</td><td class='num'>"
        << fixed(r.backward, 5) << "</td></tr>\n";
  out << "</table>\n<p class='why'>largest |backward &minus; (P &minus; q)/n| over all " << t.config.tgt_vocab
      << " tokens: " << message(g.largest_difference) << "</p>\n";
  return out.str();
}

std::string adam_html(const TrainStepTrace& t) {
  const AdamStepAt& a = t.adam;
  std::ostringstream out;
  out << "<table class='steps'><tr><th>g</th><th>m = (1 &minus; &beta;1) g</th><th>v = (1 &minus; &beta;2) g&sup2;</th>"
      << "<th>Adam's update</th><th>SGD's, &minus;lr g</th></tr>\n<tr><td class='num'>" << message(a.g)
      << "</td><td class='num'>" << message(a.m) << "</td><td class='num'>" << message(a.v) << "</td><td class='num'>"
      << message(a.adam_update) << "</td><td class='num'>" << message(a.sgd_update) << "</td></tr></table>\n";
  return out.str();
}

}  // namespace

std::string train_trace_html(const TrainStepTrace& t) {
  const TransformerConfig& c = t.config;
  std::vector<std::string> source(t.source_tokens.begin(), t.source_tokens.begin() + std::ssize(t.unknown)), target;
  for (size_t i = 0; i + 1 < t.positions.size(); ++i) target.push_back(t.positions[i].target);
  std::ostringstream page;
  page << trace_page::begin(
      "gradformer trace --train: " + joined(source),
      "One training step: &ldquo;" + escape_xml(joined(source)) + "&rdquo; &rarr; &ldquo;" +
          escape_xml(joined(target)) + "&rdquo;",
      message("An encoder-decoder Transformer: d_model ", c.d_model, ", ", counted(c.layers, "layer"), " each side, ",
              counted(c.heads, "head"), ", d_ff ", c.d_ff, ", ", c.norm == NormPlacement::Post ? "post-LN" : "pre-LN",
              ". Forward in eval mode (no dropout), backward, one gradient step."));
  page << section(1, "The pair, teacher-forced",
                  "The decoder reads &lt;s&gt; and the target, and at every position must predict the next word: "
                  "tgt_out is tgt_in moved one place on, ending in &lt;/s&gt;.",
                  pair_html(t));
  page << section(2, "Forward: the loss",
                  "Each position's probability of the right word; its loss is &minus;log P. The step "
                  "minimises the mean over the target tokens.",
                  losses_html(t));
  const PositionLoss& opened = t.positions[static_cast<size_t>(t.logit_gradient.position)];
  page << section(
      3, "Where the backward pass starts",
      message("dL/dlogits at position ", t.logit_gradient.position, " (reads ", escape_xml(opened.input), ", predicts ",
              escape_xml(opened.target), "): softmax's P minus the target distribution q, divided by the n = ",
              t.logit_gradient.tokens, " target tokens the loss averages, beside what the backward pass computed."),
      logit_gradient_html(t));
  page << section(4, "Backward, from the loss down",
                  "The norm of the loss's gradient with respect to each sub-layer's output, in the order the "
                  "backward pass computes them: the decoder's layers top to bottom, then the encoder's, which the "
                  "loss reaches only through every decoder layer's cross-attention.",
                  backward_html(t));
  page << section(5, "The parameters' gradients", "||dL/dw|| over each layer's parameters.", parameters_html(t));
  page << section(6, "One gradient-descent step",
                  message("SGD: w &larr; w &minus; lr &middot; dL/dw with lr = ", t.lr,
                          " (training takes Adam's steps). The loss on the same pair before and after:"),
                  step_html(t));
  if (!t.adam.parameter.empty())
    page << section(7, "What Adam would do instead",
                    message("To the weight of the largest |dL/dw|, ", escape_xml(t.adam.parameter),
                            ", from fresh moments (a run's first step), lr ", t.adam.lr,
                            ": the bias-corrected moments are g and g&sup2; again, so the update is lr &middot; "
                            "sign(g) whatever |g|."),
                    adam_html(t));
  page << trace_page::end();
  return page.str();
}

}  // namespace gradformer
