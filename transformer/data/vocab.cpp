#include "transformer/data/vocab.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>

#include "transformer/data/line_reader.h"

namespace gradformer {
namespace {

bool has_whitespace(std::string_view token) { return token.find_first_of(" \t\n\r\v\f") != std::string_view::npos; }

}  // namespace

Vocab::Vocab() {
  for (std::string_view special : specials) add(std::string(special));
}

void Vocab::add(const std::string& token) {
  ids_.emplace(token, size());
  tokens_.push_back(token);
}

Vocab Vocab::build(const std::vector<std::vector<std::string>>& sentences, int64_t min_count, int64_t max_size) {
  if (min_count < 1) throw ValueError(message("Vocab::build: min_count must be at least 1, got ", min_count));
  if (max_size < 0 || (max_size > 0 && max_size < static_cast<int64_t>(specials.size())))
    throw ValueError(message("Vocab::build: max_size must be 0 (no cap) or at least the ", specials.size(),
                             " specials, got ", max_size));
  // std::map iterates in byte order, which is the tie-break a stable sort by count then keeps.
  std::map<std::string, int64_t> counts;
  for (size_t s = 0; s < sentences.size(); ++s) {
    for (const std::string& word : sentences[s]) {
      if (word.empty() || has_whitespace(word))
        throw DataError(message("Vocab::build: sentence ", s + 1, " holds an empty token or one with whitespace"));
      ++counts[word];
    }
  }
  std::vector<std::pair<std::string, int64_t>> by_count(counts.begin(), counts.end());
  std::stable_sort(by_count.begin(), by_count.end(), [](const auto& a, const auto& b) { return a.second > b.second; });

  Vocab vocab;
  for (const auto& [word, count] : by_count) {
    if (count < min_count) break;  // sorted by count: every later word is rarer
    if (max_size > 0 && vocab.size() >= max_size) break;
    if (!vocab.contains(word)) vocab.add(word);  // a corpus may spell a special, e.g. "<unk>"
  }
  return vocab;
}

bool Vocab::contains(std::string_view token) const { return ids_.count(std::string(token)) > 0; }

int64_t Vocab::id(std::string_view token) const {
  auto found = ids_.find(std::string(token));
  return found == ids_.end() ? unk : found->second;
}

const std::string& Vocab::token(int64_t id) const {
  if (id < 0 || id >= size()) throw IndexError(message("Vocab::token: id ", id, " is outside [0, ", size(), ")"));
  return tokens_[static_cast<size_t>(id)];
}

std::vector<int64_t> Vocab::encode(const std::vector<std::string>& words) const {
  std::vector<int64_t> ids;
  ids.reserve(words.size());
  for (const std::string& word : words) {
    const int64_t i = id(word);
    ids.push_back(i == pad || i == bos || i == eos ? unk : i);
  }
  return ids;
}

std::vector<std::string> Vocab::decode(const std::vector<int64_t>& ids) const {
  std::vector<std::string> words;
  words.reserve(ids.size());
  for (int64_t i : ids) words.push_back(token(i));
  return words;
}

std::string Vocab::to_text() const {
  std::string text;
  for (const std::string& token : tokens_) text += token + '\n';
  return text;
}

Vocab Vocab::from_text(std::string_view text, const std::string& source) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  if (lines.size() < specials.size())
    throw DataError(message(source, ": a vocabulary needs at least the ", specials.size(),
                            " specials <pad> <s> </s> <unk>, found ", lines.size(), " line(s)"));
  Vocab vocab;
  vocab.tokens_.clear();
  vocab.ids_.clear();
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& token = lines[i];
    const int64_t line = static_cast<int64_t>(i) + 1;
    if (token.empty()) throw DataError(at_line(source, line, "empty token"));
    if (has_whitespace(token)) throw DataError(at_line(source, line, "token '" + token + "' holds whitespace"));
    if (i < specials.size() && token != specials[i])
      throw DataError(at_line(source, line, message("expected the special ", specials[i], ", found '", token, "'")));
    if (vocab.contains(token))
      throw DataError(at_line(source, line,
                              message("duplicate token '", token, "' (first on line ", vocab.ids_.at(token) + 1, ")")));
    vocab.add(token);
  }
  return vocab;
}

Vocab Vocab::read_file(const std::string& path) {
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored))
    throw DataError(message(path, ": is a directory, not a vocabulary file"));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DataError(message(path, ": cannot open for reading: ", std::strerror(errno)));
  LineReader lines(in, path);
  std::string text;
  for (std::string line; lines.next(line);) text += line + '\n';
  return from_text(text, path);
}

std::vector<int64_t> strip_specials(const std::vector<int64_t>& ids) {
  std::vector<int64_t> kept;
  for (int64_t id : ids) {
    if (id == Vocab::eos) break;
    if (id != Vocab::bos && id != Vocab::pad) kept.push_back(id);
  }
  return kept;
}

}  // namespace gradformer
