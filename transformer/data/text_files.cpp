#include "transformer/data/text_files.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string_view>

namespace gradformer {

namespace {

constexpr std::string_view kSpaces = " \t\r\v\f\n";  // ASCII whitespace: what a label may not hold

bool blank(std::string_view line) { return line.find_first_not_of(" \t") == std::string_view::npos; }

std::string_view trim(std::string_view text) {
  const size_t first = text.find_first_not_of(kSpaces);
  if (first == std::string_view::npos) return {};
  return text.substr(first, text.find_last_not_of(kSpaces) + 1 - first);
}

void check_max_tokens(int64_t max_tokens, const char* reader) {
  if (max_tokens < 0)
    throw ValueError(message(reader, ": max_tokens must be 0 (no limit) or positive, got ", max_tokens));
}

// The tokens of one line's sentence; DataError for an empty or over-long one.
std::vector<std::string> sentence_tokens(std::string_view text, int64_t max_tokens, const LineReader& lines) {
  std::vector<std::string> tokens = split_words(text);
  if (tokens.empty()) throw DataError(at_line(lines.name(), lines.line_number(), "empty sentence"));
  if (max_tokens > 0 && static_cast<int64_t>(tokens.size()) > max_tokens)
    throw DataError(at_line(lines.name(), lines.line_number(),
                            message("sentence has ", tokens.size(), " tokens, more than the maximum of ", max_tokens)));
  return tokens;
}

// `path` opened for reading; `what` names what it should be, for a directory given instead.
std::ifstream open_text(const std::string& path, const char* what) {
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) throw DataError(message(path, ": is a directory, not ", what));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(message(path, ": cannot open for reading: ", std::strerror(errno)));
  return in;
}

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) text += (i > 0 ? ", " : "") + names[i];
  return text;
}

}  // namespace

std::vector<std::vector<std::string>> parse_sentences(std::istream& in, const std::string& name, int64_t max_tokens) {
  check_max_tokens(max_tokens, "read_sentences");
  std::vector<std::vector<std::string>> sentences;
  std::string text;
  LineReader lines(in, name);
  while (lines.next(text)) {
    if (blank(text)) continue;
    if (const size_t tab = text.find('\t'); tab != std::string::npos)
      throw DataError(at_line(name, lines.line_number(),
                              message("holds a tab (column ", tab + 1,
                                      "): a file of sentences has one sentence a line, its tokens separated by "
                                      "spaces; this looks like a TSV file (source<TAB>target pairs, "
                                      "label<TAB>sentence examples): give it where a TSV file is asked for")));
    sentences.push_back(sentence_tokens(text, max_tokens, lines));
  }
  if (sentences.empty()) throw DataError(message(name, ": holds no sentence at all (it is empty or its lines blank)"));
  return sentences;
}

std::vector<std::vector<std::string>> read_sentences(const std::string& path, int64_t max_tokens) {
  std::ifstream in = open_text(path, "a file of sentences");
  return parse_sentences(in, path, max_tokens);
}

LabelledCorpus parse_labelled(std::istream& in, const std::string& name, int64_t max_tokens,
                              const std::vector<std::string>& known_labels) {
  check_max_tokens(max_tokens, "read_labelled");
  for (size_t i = 0; i < known_labels.size(); ++i) {
    const std::string& known = known_labels[i];
    if (known.empty() || known.find_first_of(kSpaces) != std::string::npos)
      throw ValueError(message("read_labelled: known label ", i + 1, " '", known, "' is empty or holds whitespace"));
    for (size_t j = 0; j < i; ++j)
      if (known_labels[j] == known)
        throw ValueError(message("read_labelled: known label '", known, "' is given twice"));
  }
  const bool training = known_labels.empty();
  LabelledCorpus corpus;
  corpus.labels = known_labels;
  std::string text;
  LineReader lines(in, name);
  while (lines.next(text)) {
    const int64_t line = lines.line_number();
    if (blank(text)) continue;
    const size_t tab = text.find('\t');
    if (tab == std::string::npos) throw DataError(at_line(name, line, "no tab: expected label<TAB>sentence"));
    if (text.find('\t', tab + 1) != std::string::npos)
      throw DataError(at_line(name, line,
                              "more than one tab: expected label<TAB>sentence, the sentence's tokens separated by "
                              "spaces"));
    const std::string_view view(text);
    const std::string label(trim(view.substr(0, tab)));
    if (label.empty()) throw DataError(at_line(name, line, "empty label: expected label<TAB>sentence"));
    if (label.find_first_of(kSpaces) != std::string::npos)
      throw DataError(at_line(name, line, message("label '", label, "' holds whitespace: a label is one word")));
    size_t index = 0;
    while (index < corpus.labels.size() && corpus.labels[index] != label) ++index;
    if (index == corpus.labels.size()) {
      if (!training)
        throw DataError(at_line(
            name, line, message("label '", label, "' is not one of the training labels (", joined(known_labels), ")")));
      corpus.labels.push_back(label);
    }
    LabelledSentence example;
    example.tokens = sentence_tokens(view.substr(tab + 1), max_tokens, lines);
    example.label = static_cast<int64_t>(index);
    corpus.examples.push_back(std::move(example));
  }
  if (corpus.examples.empty())
    throw DataError(message(name, ": holds no labelled sentence at all (it is empty or its lines blank)"));
  if (training && corpus.labels.size() < 2)
    throw DataError(message(name, ": every sentence has the label '", corpus.labels[0],
                            "': a classifier needs at least two classes"));
  return corpus;
}

LabelledCorpus read_labelled(const std::string& path, int64_t max_tokens,
                             const std::vector<std::string>& known_labels) {
  std::ifstream in = open_text(path, "a TSV file of labelled sentences");
  return parse_labelled(in, path, max_tokens, known_labels);
}

}  // namespace gradformer
