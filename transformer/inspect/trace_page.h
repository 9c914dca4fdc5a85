// The look the two trace pages share (trace_html for a translation, train_trace_html for a training
// step): one style sheet, a header, numbered sections. Self-contained: no scripts, nothing fetched.
#pragma once

#include <string>

namespace gradformer::trace_page {

/// "<!DOCTYPE html>" up to the opening of <main>: the title (text, escaped here), the header's
/// heading and its line below (HTML, escaped by the caller).
std::string begin(const std::string& title, const std::string& heading_html, const std::string& subtitle_html);
/// One numbered card: its title (text), why it matters (HTML), its body (HTML).
std::string section(int number, const std::string& title, const std::string& why_html, const std::string& body_html);
/// Closes what begin() opened.
std::string end();
/// v with `digits` decimals ("%.*f").
std::string fixed(double v, int digits = 3);

}  // namespace gradformer::trace_page
