// check_listings' order check: a chapter may use what an earlier chapter built, never what a later one
// will. Every mention of a later chapter ("chapter 16", "chapters 14 and 17") must sit in a sentence
// that says it is later ("... which chapter 16 later explains") or opens the next chapter ("Next,
// chapter 12: ..."), so that a reader going in order is never sent ahead to understand the page.
#include <cctype>
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include "check_listings.h"

namespace {

// The chapter's own number, from its title "# 12. Running training".
int chapter_number(const Lines& md) {
  static const std::regex title("^# ([0-9]+)\\. ");
  std::smatch m;
  for (const std::string& line : md)
    if (std::regex_search(line, m, title)) return std::stoi(m[1]);
  return -1;
}

// A sentence of the prose and the chapter line each of its characters came from.
struct Sentence {
  std::string text;
  std::vector<size_t> line_of;  // 1-based, per character
};

// The prose as sentences: code blocks and HTML comments left out, a paragraph's lines joined, cut
// after '.', '!' or '?' followed by a space, and at every blank line, heading and table row.
std::vector<Sentence> sentences(const Lines& md) {
  std::vector<Sentence> out(1);
  bool in_block = false, in_comment = false;
  auto cut = [&] {
    if (!out.back().text.empty()) out.emplace_back();
  };
  for (size_t i = 0; i < md.size(); ++i) {
    const std::string t = trim(md[i]);
    if (t.starts_with("```")) in_block = !in_block, cut();
    if (in_block || t.starts_with("```")) continue;
    if (t.empty() || t.starts_with("#") || t.starts_with("|")) cut();
    std::string line = md[i];
    for (size_t at = 0; at < line.size();) {  // blank the comments, which may span lines
      const size_t open = in_comment ? at : line.find("<!--", at);
      if (open == std::string::npos) break;
      const size_t close = line.find("-->", open);
      in_comment = close == std::string::npos;
      const size_t end = in_comment ? line.size() : close + 3;
      line.replace(open, end - open, end - open, ' ');
      at = end;
    }
    for (size_t c = 0; c < line.size(); ++c) {
      out.back().text += line[c], out.back().line_of.push_back(i + 1);
      const bool stop =
          (line[c] == '.' || line[c] == '!' || line[c] == '?') && (c + 1 == line.size() || line[c + 1] == ' ');
      if (stop) cut();
    }
    out.back().text += ' ', out.back().line_of.push_back(i + 1);
    if (t.starts_with("#") || t.starts_with("|")) cut();
  }
  return out;
}

bool says_later(const std::string& sentence) {
  static const std::regex later("\\blater\\b|^\\s*Next\\b", std::regex::icase);
  return std::regex_search(sentence, later);
}

}  // namespace

int check_forward_references(const std::string& chapter_path, const Lines& md) {
  const int here = chapter_number(md);
  if (here <= 0) return 0;  // the map (chapter 0) names every chapter; a page without a title is no chapter
  const std::regex& mention = chapter_mention();
  static const std::regex number("[0-9]+");
  int failures = 0;
  for (const Sentence& s : sentences(md)) {
    if (says_later(s.text)) continue;
    for (auto m = std::sregex_iterator(s.text.begin(), s.text.end(), mention); m != std::sregex_iterator(); ++m) {
      const std::string words = m->str();
      for (auto n = std::sregex_iterator(words.begin(), words.end(), number); n != std::sregex_iterator(); ++n)
        if (std::stoi(n->str()) > here) {
          ++failures;
          std::cerr << chapter_path << ":" << s.line_of[static_cast<size_t>(m->position())] << ": chapter " << n->str()
                    << " comes later than this chapter (" << here
                    << "), and the sentence does not say so: a reader in order cannot have read it yet (say "
                       "'later', or use only what came before)\n";
        }
    }
  }
  return failures;
}
