#include "transformer/data/tsv.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "tensor/support/files.h"

namespace gradformer {

std::vector<std::string> split_words(std::string_view sentence) {
  std::vector<std::string> words;
  size_t at = 0;
  while (true) {
    at = sentence.find_first_not_of(" \t", at);
    if (at == std::string_view::npos) break;
    size_t end = sentence.find_first_of(" \t", at);
    if (end == std::string_view::npos) end = sentence.size();
    words.emplace_back(sentence.substr(at, end - at));
    at = end;
  }
  return words;
}

std::string join_words(const std::vector<std::string>& words) {
  std::string sentence;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) sentence += ' ';
    sentence += words[i];
  }
  return sentence;
}

namespace {

std::vector<std::string> read_side(std::string_view text, const char* side, int64_t max_tokens, const std::string& name,
                                   int64_t line) {
  std::vector<std::string> words = split_words(text);
  if (words.empty()) throw DataError(at_line(name, line, message("empty ", side, " sentence")));
  if (max_tokens > 0 && static_cast<int64_t>(words.size()) > max_tokens)
    throw DataError(at_line(
        name, line, message(side, " sentence has ", words.size(), " tokens, more than the maximum of ", max_tokens)));
  return words;
}

// `path` opened for reading, or a DataError naming it.
std::ifstream open_tsv(const std::string& path) {
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored)) throw DataError(message(path, ": is a directory, not a TSV file"));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(message(path, ": cannot open for reading: ", std::strerror(errno)));
  return in;
}

}  // namespace

std::vector<std::optional<SentencePair>> parse_tsv_lines(std::istream& in, const std::string& name,
                                                         int64_t max_tokens) {
  if (max_tokens < 0)
    throw ValueError(message("read_tsv: max_tokens must be 0 (no limit) or positive, got ", max_tokens));
  std::vector<std::optional<SentencePair>> lines_read;
  bool any_pair = false;
  std::string text;
  LineReader lines(in, name);
  while (lines.next(text)) {
    const int64_t line = lines.line_number();
    if (text.find_first_not_of(" \t") == std::string::npos) {  // a blank line
      lines_read.emplace_back();
      continue;
    }
    const size_t tab = text.find('\t');
    if (tab == std::string::npos) throw DataError(at_line(name, line, "no tab: expected source<TAB>target"));
    if (text.find('\t', tab + 1) != std::string::npos)
      throw DataError(at_line(name, line, "more than one tab: expected source<TAB>target"));
    const std::string_view view(text);
    SentencePair pair;
    pair.source = read_side(view.substr(0, tab), "source", max_tokens, name, line);
    pair.target = read_side(view.substr(tab + 1), "target", max_tokens, name, line);
    lines_read.emplace_back(std::move(pair));
    any_pair = true;
  }
  if (!any_pair) throw DataError(message(name, ": no sentence pairs"));
  return lines_read;
}

std::vector<SentencePair> parse_tsv(std::istream& in, const std::string& name, int64_t max_tokens) {
  std::vector<SentencePair> pairs;
  for (std::optional<SentencePair>& line : parse_tsv_lines(in, name, max_tokens))
    if (line) pairs.push_back(std::move(*line));
  return pairs;
}

std::vector<std::optional<SentencePair>> read_tsv_lines(const std::string& path, int64_t max_tokens) {
  std::ifstream in = open_tsv(path);
  return parse_tsv_lines(in, path, max_tokens);
}

std::vector<SentencePair> read_tsv(const std::string& path, int64_t max_tokens) {
  std::ifstream in = open_tsv(path);
  return parse_tsv(in, path, max_tokens);
}

void write_tsv(const std::string& path, const std::vector<SentencePair>& pairs) {
  for (size_t i = 0; i < pairs.size(); ++i) {
    for (const auto* side : {&pairs[i].source, &pairs[i].target}) {
      if (side->empty()) throw DataError(message("write_tsv: pair ", i + 1, " has an empty side"));
      for (const std::string& word : *side)
        if (word.empty() || word.find_first_of(" \t\r\n") != std::string::npos)
          throw DataError(message("write_tsv: pair ", i + 1, " holds an empty token or one with whitespace"));
    }
  }
  // parse_tsv strips a byte-order mark from the start of the file, so a first token beginning
  // with one would come back without it.
  if (!pairs.empty() && pairs[0].source[0].rfind(kByteOrderMark, 0) == 0)
    throw DataError(
        "write_tsv: pair 1's first token starts with a UTF-8 byte-order mark (EF BB BF), which reading strips");
  std::string text;
  for (const SentencePair& pair : pairs) text += join_words(pair.source) + '\t' + join_words(pair.target) + '\n';
  write_file_whole(path, text);
}

}  // namespace gradformer
