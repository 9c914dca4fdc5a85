#include "transformer/data/bpe.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "tensor/support/json.h"
#include "tensor/support/utf8.h"
#include "transformer/data/line_reader.h"
#include "transformer/data/utf8.h"

namespace gradformer {

namespace {

/// The byte GPT-2's table gives character cp, or -1 if it stands for none.
int byte_of_character(char32_t cp) {
  // Every byte character is below U+0144 (the last of the 68 moved bytes is U+0100 + 67).
  static const std::array<int, 0x144> table = [] {
    std::array<int, 0x144> t{};
    t.fill(-1);
    for (int b = 0; b < 256; ++b) t[gpt2_byte_characters()[static_cast<size_t>(b)]] = b;
    return t;
  }();
  return cp < table.size() ? table[cp] : -1;
}

/// A token for messages: its bytes as GPT-2 writes them, in quotes.
std::string quoted(std::string_view bytes) {
  std::string text = "\"";
  text += gpt2_bytes_to_text(bytes);
  text += '"';
  return text;
}

uint64_t pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

/// encoder.json: one object, token (in byte characters) -> id, the ids 0 .. n-1 each once.
std::vector<std::string> parse_encoder_json(std::string_view text, const std::string& name) {
  if (const auto bad = invalid_utf8_at(text)) {
    throw DataError(message(name, ": not UTF-8 at byte ", *bad));
  }
  Json json;
  try {
    json = Json::parse(text);
  } catch (const JsonError& e) {
    throw DataError(message(name, ": ", e.what()));
  }
  if (!json.is_object()) {
    throw DataError(message(name, ": expected an object of token -> id, found: ", kind_name(json.kind())));
  }
  const Json::Members& members = json.members();
  const auto count = static_cast<int64_t>(members.size());
  std::vector<std::string> tokens(members.size());
  std::vector<bool> seen(members.size(), false);
  for (const auto& [text_token, value] : members) {
    if (!value.is_integer()) {
      throw DataError(
          message(name, ": token \"", text_token, "\": its id must be an integer, found: ", kind_name(value.kind())));
    }
    const int64_t id = value.value();
    if (id < 0 || id >= count) {
      throw DataError(message(name, ": token \"", text_token, "\" has id ", id, ", outside 0 .. ", count - 1,
                              " (the ids of ", count, " tokens must be 0 .. ", count - 1, ")"));
    }
    const auto slot = static_cast<size_t>(id);
    if (seen[slot]) {
      throw DataError(
          message(name, ": id ", id, " is given to both ", quoted(tokens[slot]), " and \"", text_token, "\""));
    }
    seen[slot] = true;
    tokens[slot] = gpt2_text_to_bytes(text_token, [&] { return message(name, ": token \"", text_token, "\""); });
  }
  return tokens;
}

/// vocab.bpe: a version comment, then "left right" a line, every line ended by '\n' ("\r\n" too).
/// encoder.py reads it as bpe_data.split('\n')[1:-1]: the first line is skipped and so is
/// whatever follows the last line end, so a last merge without a line end would be lost silently;
/// here it is an error instead.
std::vector<BytePairEncoding::Merge> parse_vocab_bpe(std::string_view text, const std::string& name) {
  if (const auto bad = invalid_utf8_at(text)) {
    throw DataError(message(name, ": not UTF-8 at byte ", *bad));
  }
  if (!text.empty() && text.back() != '\n') {
    throw DataError(message(name, ": the last line has no line end (GPT-2's reader would drop it)"));
  }
  std::vector<BytePairEncoding::Merge> merges;
  std::unordered_map<std::string, int64_t> line_of_merge;  // "left right" -> its line
  int64_t line_number = 0;
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line_number == 1) {
      if (line.empty() || line.front() != '#') {
        throw DataError(at_line(
            name, 1,
            message("expected a version comment such as \"#version: 0.2\", found \"", std::string(line), "\"")));
      }
      continue;
    }
    // Python's merge_str.split(): fields separated by runs of whitespace.
    std::vector<std::string> fields;
    size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      const size_t field_start = i;
      while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
      if (i > field_start) fields.emplace_back(line.substr(field_start, i - field_start));
    }
    if (fields.size() != 2) {
      throw DataError(
          at_line(name, line_number,
                  message("expected a merge, two tokens separated by a space, found \"", std::string(line), "\"")));
    }
    const std::string where = at_line(name, line_number, "merge \"" + std::string(line) + "\"");
    // A merge given twice would take the later rank in encoder.py (a dict built in file order).
    const auto [first, added] = line_of_merge.emplace(fields[0] + " " + fields[1], line_number);
    if (!added) throw DataError(message(where, " appears twice, first on line ", first->second));
    merges.emplace_back(gpt2_text_to_bytes(fields[0], where), gpt2_text_to_bytes(fields[1], where));
  }
  return merges;
}

}  // namespace

std::vector<std::string> single_byte_tokens() {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.emplace_back(1, static_cast<char>(b));
  return tokens;
}

const std::array<char32_t, 256>& gpt2_byte_characters() {
  static const std::array<char32_t, 256> table = [] {
    std::array<char32_t, 256> t{};
    char32_t next_moved = 0x100;
    for (char32_t b = 0; b < 256; ++b) {
      const bool prints = (b >= U'!' && b <= U'~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      t[b] = prints ? b : next_moved++;
    }
    return t;
  }();
  return table;
}

std::string gpt2_bytes_to_text(std::string_view bytes) {
  std::string text;
  for (const char c : bytes) append_utf8(text, gpt2_byte_characters()[static_cast<unsigned char>(c)]);
  return text;
}

std::string gpt2_text_to_bytes(std::string_view text, const std::string& where) {
  return gpt2_text_to_bytes(text, [&] { return where; });
}

std::string gpt2_text_to_bytes(std::string_view text, const std::function<std::string()>& where) {
  if (const auto bad = invalid_utf8_at(text)) {
    throw DataError(message(where(), ": not UTF-8 at byte ", *bad));
  }
  std::string bytes;
  for (size_t pos = 0; pos < text.size();) {
    const Utf8Step step = read_utf8(text, pos);  // valid: checked above
    pos += step.length;
    const char32_t cp = step.code_point;
    const int byte = byte_of_character(cp);
    if (byte < 0) {
      char hex[16];
      std::snprintf(hex, sizeof hex, "U+%04X", static_cast<unsigned>(cp));
      throw DataError(message(where(), ": character ", hex, " stands for no byte in GPT-2's byte-to-unicode table"));
    }
    bytes += static_cast<char>(byte);
  }
  return bytes;
}

BytePairEncoding::BytePairEncoding(std::vector<std::string> tokens, std::vector<Merge> merges)
    : tokens_(std::move(tokens)), merges_(std::move(merges)) {
  for (size_t id = 0; id < tokens_.size(); ++id) {
    const std::string& token = tokens_[id];
    if (token.empty()) throw ValueError(message("BytePairEncoding: token ", id, " is empty"));
    const auto [it, added] = ids_.emplace(token, static_cast<int64_t>(id));
    if (!added) {
      throw ValueError(message("BytePairEncoding: token ", quoted(token), " has two ids, ", it->second, " and ", id));
    }
  }
  for (int b = 0; b < 256; ++b) {
    const std::string byte(1, static_cast<char>(b));
    const auto it = ids_.find(byte);
    if (it == ids_.end()) {
      throw ValueError(message("BytePairEncoding: byte ", b, " (", quoted(byte),
                               ") is not a token, so a text holding it could not be encoded"));
    }
    byte_symbols_[static_cast<size_t>(b)] = static_cast<Symbol>(it->second);
  }
  // The symbol of each string the merges name: its token id, or a new id after the tokens'.
  std::unordered_map<std::string, Symbol> extra_ids;
  const auto symbol_of = [&](const std::string& bytes) {
    if (const auto it = ids_.find(bytes); it != ids_.end()) return static_cast<Symbol>(it->second);
    const auto [it, added] = extra_ids.emplace(bytes, static_cast<Symbol>(tokens_.size() + extra_symbols_.size()));
    if (added) extra_symbols_.push_back(bytes);
    return it->second;
  };
  for (size_t r = 0; r < merges_.size(); ++r) {
    const auto& [left, right] = merges_[r];
    if (left.empty() || right.empty()) {
      throw ValueError(message("BytePairEncoding: merge ", r, " has an empty side"));
    }
    const auto [it, added] = ranks_.emplace(pair_key(symbol_of(left), symbol_of(right)), static_cast<int32_t>(r));
    if (!added) {
      throw ValueError(message("BytePairEncoding: merge ", quoted(left), " ", quoted(right), " appears twice, ranks ",
                               it->second, " and ", r));
    }
    joined_.push_back(symbol_of(left + right));
  }
}

BytePairEncoding BytePairEncoding::read_gpt2(const std::string& encoder_json_path, const std::string& vocab_bpe_path) {
  const std::string encoder_json = read_whole_file(encoder_json_path, kMaxTokenizerFileBytes, "a tokenizer's file");
  const std::string vocab_bpe = read_whole_file(vocab_bpe_path, kMaxTokenizerFileBytes, "a tokenizer's file");
  return parse_gpt2(encoder_json, encoder_json_path, vocab_bpe, vocab_bpe_path);
}

BytePairEncoding BytePairEncoding::parse_gpt2(std::string_view encoder_json, const std::string& encoder_name,
                                              std::string_view vocab_bpe, const std::string& vocab_name) {
  std::vector<std::string> tokens = parse_encoder_json(encoder_json, encoder_name);
  std::vector<Merge> merges = parse_vocab_bpe(vocab_bpe, vocab_name);
  try {
    return BytePairEncoding(std::move(tokens), std::move(merges));
  } catch (const ValueError& e) {
    throw DataError(message(encoder_name, " and ", vocab_name, ": ", e.what()));
  }
}

int32_t BytePairEncoding::rank(Symbol left, Symbol right) const {
  const auto it = ranks_.find(pair_key(left, right));
  return it == ranks_.end() ? kNoMerge : it->second;
}

const std::string& BytePairEncoding::symbol_bytes(Symbol symbol) const {
  const auto s = static_cast<size_t>(symbol);
  return s < tokens_.size() ? tokens_[s] : extra_symbols_[s - tokens_.size()];
}

void BytePairEncoding::merge_symbols(std::string_view pre_token, std::vector<Symbol>& symbols,
                                     std::vector<int32_t>& ranks) const {
  symbols.clear();
  for (const char c : pre_token) symbols.push_back(byte_symbols_[static_cast<unsigned char>(c)]);
  // ranks[i]: the rank of merging symbols i and i + 1 (kNoMerge if they are no merge), so that
  // only the pairs a merge changes are looked up again.
  ranks.clear();
  for (size_t i = 0; i + 1 < symbols.size(); ++i) ranks.push_back(rank(symbols[i], symbols[i + 1]));
  while (!ranks.empty()) {
    // The neighbouring pair of lowest rank (encoder.py: min(pairs, key=bpe_ranks.get)).
    const int32_t best = *std::min_element(ranks.begin(), ranks.end());
    if (best == kNoMerge) break;
    // Join every occurrence of that pair, scanning left to right, without overlap. A rank names
    // one pair, so ranks[i] == best says that symbols i and i + 1 are it. In place: out <= i.
    const Symbol joined = joined_[static_cast<size_t>(best)];
    const size_t length = symbols.size();
    size_t out = 0;
    for (size_t i = 0; i < length; ++out) {
      if (i + 1 < length && ranks[i] == best) {
        symbols[out] = joined;
        i += 2;
      } else {
        symbols[out] = symbols[i];
        if (i + 1 < length) ranks[out] = ranks[i];  // still right unless its right neighbour was joined
        i += 1;
      }
    }
    symbols.resize(out);
    ranks.resize(out - 1);
    // The pairs next to a joined symbol are new: look them up.
    for (size_t i = 0; i + 1 < out; ++i) {
      if (symbols[i] == joined || symbols[i + 1] == joined) ranks[i] = rank(symbols[i], symbols[i + 1]);
    }
  }
}

std::vector<std::string> BytePairEncoding::bpe(std::string_view pre_token) const {
  std::vector<Symbol> symbols;
  std::vector<int32_t> ranks;
  merge_symbols(pre_token, symbols, ranks);
  std::vector<std::string> pieces;
  for (const Symbol s : symbols) pieces.push_back(symbol_bytes(s));
  return pieces;
}

// No cache of pre-tokens met before (GPT-2's encoder.py keeps one): on bench_bpe's text, filling
// one costs more than it saves within a call, even for 1 MB of text in one call; only a cache kept
// across calls paid, and a BytePairEncoding shared by threads would need a lock for it.
std::vector<int64_t> BytePairEncoding::encode(const std::vector<std::string>& pre_tokens) const {
  std::vector<int64_t> ids;
  std::vector<Symbol> symbols;
  std::vector<int32_t> ranks;
  for (const std::string& pre_token : pre_tokens) {
    if (pre_token.size() == 1) {  // one byte: nothing to merge
      ids.push_back(byte_symbols_[static_cast<unsigned char>(pre_token[0])]);
      continue;
    }
    merge_symbols(pre_token, symbols, ranks);
    for (const Symbol s : symbols) {
      if (s >= size()) {
        throw DataError(message("BytePairEncoding encode: the merges make ", quoted(symbol_bytes(s)), " from ",
                                quoted(pre_token), ", which is not a token of the vocabulary"));
      }
      ids.push_back(s);
    }
  }
  return ids;
}

std::string BytePairEncoding::decode(const std::vector<int64_t>& ids) const {
  std::string bytes;
  for (const int64_t i : ids) bytes += token(i);
  return bytes;
}

const std::string& BytePairEncoding::token(int64_t id) const {
  if (id < 0 || id >= size()) {
    throw ValueError(message("BytePairEncoding: id ", id, " is outside the vocabulary of ", size(), " tokens"));
  }
  return tokens_[static_cast<size_t>(id)];
}

int64_t BytePairEncoding::id(std::string_view token) const {
  const auto it = ids_.find(std::string(token));
  return it == ids_.end() ? -1 : it->second;
}

}  // namespace gradformer
