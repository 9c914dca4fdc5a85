// A tokenizer kept with a model: as a checkpoint's entries (metadata, from_metadata) and as the file
// `gradformer learn-bpe` writes (to_json, from_json), or the hub's tokenizer.json (read_file).
#include <algorithm>

#include "tensor/support/json.h"
#include "transformer/data/hub_json.h"
#include "transformer/data/hub_tokenizer.h"
#include "transformer/data/line_reader.h"
#include "transformer/data/tokenizer.h"

namespace gradformer {

namespace {

constexpr std::string_view kFileFormat = "gradformer-tokenizer";

std::string merges_text(const BytePairEncoding& bpe) {
  std::string text;
  for (const auto& [left, right] : bpe.merges())
    text += gpt2_bytes_to_text(left) + " " + gpt2_bytes_to_text(right) + "\n";
  return text;
}

std::vector<BytePairEncoding::Merge> parse_merges(std::string_view text, const std::string& source) {
  std::vector<BytePairEncoding::Merge> merges;
  int64_t line_number = 0;
  for (size_t start = 0; start < text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const std::string line(text.substr(start, end - start));
    start = end + 1, ++line_number;
    const size_t space = line.find(' ');
    if (space == std::string::npos || space == 0 || space + 1 == line.size() ||
        line.find(' ', space + 1) != std::string::npos)
      throw DataError(message(source, ": merge ", line_number, " is \"", line, "\", not two tokens and one space"));
    const auto where = [&] { return message(source, ": merge ", line_number); };
    merges.emplace_back(gpt2_text_to_bytes(std::string_view(line).substr(0, space), where),
                        gpt2_text_to_bytes(std::string_view(line).substr(space + 1), where));
  }
  return merges;
}

/// The lines of a text, each without its line end.
std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> lines;
  for (size_t start = 0; start < text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::string joined_lines(const std::vector<std::string>& lines) {
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  return text;
}

}  // namespace

std::map<std::string, std::string> Tokenizer::metadata(const std::string& prefix) const {
  if (!added_.empty()) {  // the tokenizer it was, then the added tokens
    Tokenizer base = *this;
    base.added_.clear();
    if (has_vocab_) {
      std::vector<std::string> tokens;
      for (int64_t id = 0; id < base_size(); ++id) tokens.push_back(vocab_.token(id));
      base.vocab_ = Vocab::from_text(joined_lines(tokens), "the tokenizer's vocabulary");
    }
    std::map<std::string, std::string> entries = base.metadata(prefix);
    entries[prefix + ".added"] = joined_lines(added_);
    return entries;
  }
  if (kind_ == Kind::Words) return {};
  if (kind_ == Kind::Hub) return {{prefix + ".kind", "hub"}, {prefix + ".json", hub_->json()}};
  if (!has_vocab_) {  // GPT-2's: no vocab.* entry beside these, so its tokens by id are stored here
    std::string tokens;
    for (int64_t id = 0; id < bpe_->size(); ++id) tokens += gpt2_bytes_to_text(bpe_->token(id)) + "\n";
    return {{prefix + ".kind", "gpt2"}, {prefix + ".tokens", tokens}, {prefix + ".merges", merges_text(*bpe_)}};
  }
  return {{prefix + ".kind", kind_name()},
          {prefix + ".specials", std::to_string(specials_)},
          {prefix + ".merges", merges_text(*bpe_)}};
}

namespace {

// GPT-2's tokenizer from prefix.tokens (one token a line in byte characters, by id) and prefix.merges.
Tokenizer gpt2_from_metadata(const std::map<std::string, std::string>& metadata, const std::string& prefix,
                             const std::string& source) {
  const auto tokens_entry = metadata.find(prefix + ".tokens");
  if (tokens_entry == metadata.end())
    throw DataError(message(source, ": ", prefix, ".kind is gpt2 but there is no ", prefix, ".tokens"));
  std::vector<std::string> tokens;
  const std::string& text = tokens_entry->second;
  for (size_t start = 0; start < text.size();) {
    const size_t end = std::min(text.find('\n', start), text.size());
    tokens.push_back(gpt2_text_to_bytes(std::string_view(text).substr(start, end - start), [&] {
      return message(source, ": ", prefix, ".tokens line ", tokens.size() + 1);
    }));
    start = end + 1;
  }
  const auto merges = metadata.find(prefix + ".merges");
  auto parsed = parse_merges(merges == metadata.end() ? "" : merges->second, message(source, ": ", prefix, ".merges"));
  try {
    return Tokenizer::gpt2(BytePairEncoding(std::move(tokens), std::move(parsed)));
  } catch (const ValueError& e) {
    throw DataError(message(source, ": ", prefix, ": ", e.what()));
  }
}

// The tokenizer of entries with prefix.added: the tokenizer the other entries make (its vocabulary
// without the added tokens, which are its last), then with_added.
Tokenizer with_added_from_metadata(const Vocab& vocab, const std::map<std::string, std::string>& metadata,
                                   const std::string& prefix, const std::string& source) {
  const std::vector<std::string> names = lines_of(metadata.at(prefix + ".added"));
  std::map<std::string, std::string> rest = metadata;
  rest.erase(prefix + ".added");
  const auto kind = metadata.find(prefix + ".kind");
  const bool in_vocab = kind != metadata.end() && (kind->second == "bytes" || kind->second == "bpe");
  std::vector<std::string> tokens;
  for (int64_t id = 0; in_vocab && id < vocab.size(); ++id) tokens.push_back(vocab.token(id));
  const auto k = static_cast<std::ptrdiff_t>(names.size());
  if (in_vocab && (tokens.size() < names.size() || !std::equal(names.begin(), names.end(), tokens.end() - k)))
    throw DataError(message(source, ": ", prefix, ".added names ", names.size(),
                            " tokens that are not the vocabulary's last ones"));
  if (in_vocab) tokens.resize(tokens.size() - names.size());
  const Tokenizer base =
      Tokenizer::from_metadata(in_vocab ? Vocab::from_text(joined_lines(tokens), source) : vocab, rest, prefix, source);
  try {
    Tokenizer out = base.with_added(names);
    if (out.added() != names) throw ValueError("a token it adds is one the tokenizer already has, or is given twice");
    return out;
  } catch (const ValueError& e) {
    throw DataError(message(source, ": ", prefix, ".added: ", e.what()));
  }
}

}  // namespace

Tokenizer Tokenizer::from_metadata(const Vocab& vocab, const std::map<std::string, std::string>& metadata,
                                   const std::string& prefix, const std::string& source) {
  if (const auto added = metadata.find(prefix + ".added"); added != metadata.end() && !added->second.empty())
    return with_added_from_metadata(vocab, metadata, prefix, source);
  const auto kind = metadata.find(prefix + ".kind");
  if (kind == metadata.end() || kind->second == "words") return Tokenizer(vocab);
  if (kind->second == "gpt2") return gpt2_from_metadata(metadata, prefix, source);
  if (kind->second == "hub") {
    const auto json = metadata.find(prefix + ".json");
    if (json == metadata.end())
      throw DataError(message(source, ": ", prefix, ".kind is hub but there is no ", prefix, ".json"));
    return hub(HubTokenizer::parse(json->second, message(source, ": ", prefix, ".json")));
  }
  if (kind->second != "bytes" && kind->second != "bpe")
    throw DataError(
        message(source, ": ", prefix, ".kind is \"", kind->second, "\"; expected words, bytes, bpe, gpt2 or hub"));
  const auto count = metadata.find(prefix + ".specials");
  int64_t specials = -1;
  if (count != metadata.end() && !count->second.empty() && count->second.size() < 6 &&
      std::all_of(count->second.begin(), count->second.end(), [](char c) { return c >= '0' && c <= '9'; }))
    specials = std::stoll(count->second);
  if (specials < static_cast<int64_t>(Vocab::specials.size()) || specials + 256 > vocab.size())
    throw DataError(message(source, ": ", prefix, ".specials must count at least the ", Vocab::specials.size(),
                            " specials and leave the 256 bytes of a vocabulary of ", vocab.size(), " tokens"));
  std::vector<std::string> extra, tokens;
  for (int64_t id = static_cast<int64_t>(Vocab::specials.size()); id < specials; ++id) extra.push_back(vocab.token(id));
  for (int64_t id = specials; id < vocab.size(); ++id)
    tokens.push_back(gpt2_text_to_bytes(vocab.token(id), [&] { return message(source, ": vocabulary token ", id); }));
  const auto merges = metadata.find(prefix + ".merges");
  auto parsed = parse_merges(merges == metadata.end() ? "" : merges->second, message(source, ": ", prefix, ".merges"));
  // A bytes tokenizer's id is the byte's value after the specials: its tokens must be the 256
  // bytes in byte order, and nothing joins them.
  if (kind->second == "bytes" && (tokens != single_byte_tokens() || !parsed.empty())) {
    const bool shuffled = tokens.size() == 256 && tokens != single_byte_tokens();
    throw DataError(message(source, ": ", prefix, ": a bytes tokenizer has its specials, then the 256 bytes in ",
                            "byte order and no merges; found ", tokens.size(), " tokens",
                            shuffled ? " not in byte order" : "", " and ", parsed.size(), " merges"));
  }
  try {
    return Tokenizer(kind->second == "bytes" ? Kind::Bytes : Kind::Bpe,
                     BytePairEncoding(std::move(tokens), std::move(parsed)), extra, true);
  } catch (const ValueError& e) {
    throw DataError(message(source, ": ", prefix, ": ", e.what()));
  }
}

std::string Tokenizer::to_json() const {
  vocab();  // GPT-2's is read from its own files, not this one
  std::vector<Json> specials, tokens, merges;
  const int64_t first = kind_ == Kind::Words ? 0 : specials_;
  for (int64_t id = 0; id < first; ++id) specials.push_back(Json::string(vocab_.token(id)));
  for (int64_t id = first; id < base_size(); ++id) tokens.push_back(Json::string(piece(id)));
  std::vector<Json> added;
  for (const std::string& name : added_) added.push_back(Json::string(name));
  if (bpe_)
    for (const auto& [l, r] : bpe_->merges())
      merges.push_back(Json::string(gpt2_bytes_to_text(l) + " " + gpt2_bytes_to_text(r)));
  Json::Members members = {{"format", Json::string(std::string(kFileFormat))},
                           {"kind", Json::string(kind_name())},
                           {"specials", Json::array(std::move(specials))},
                           {"tokens", Json::array(std::move(tokens))},
                           {"merges", Json::array(std::move(merges))}};
  if (!added.empty()) members.emplace_back("added", Json::array(std::move(added)));
  return Json::object(std::move(members)).dump();
}

Tokenizer Tokenizer::from_json(std::string_view json, const std::string& source) {
  Json root;
  try {
    root = Json::parse(json);
  } catch (const JsonError& e) {
    throw DataError(message(source, ": not a tokenizer file: ", e.what()));
  }
  std::map<std::string, const Json*> fields;
  if (root.is_object())
    for (const auto& [name, value] : root.members()) fields[name] = &value;
  const auto strings = [&](const std::string& name) {
    const auto it = fields.find(name);
    if (it == fields.end() || !it->second->is_array())
      throw DataError(message(source, ": a tokenizer file needs \"", name, "\", an array of strings"));
    std::vector<std::string> out;
    for (const Json& item : it->second->items()) {
      if (!item.is_string()) throw DataError(message(source, ": \"", name, "\" holds something that is not a string"));
      // They are joined one a line below: a line end inside one would make it two.
      if (item.text().find('\n') != std::string::npos)
        throw DataError(message(source, ": \"", name, "\" item ", out.size(), " holds a line end"));
      out.push_back(item.text());
    }
    return out;
  };
  const auto format = fields.find("format");
  if (format == fields.end() || !format->second->is_string() || format->second->text() != kFileFormat)
    throw DataError(message(source, ": not a tokenizer file (its \"format\" is not \"", kFileFormat,
                            "\"; learn one with gradformer learn-bpe)"));
  const auto kind = fields.find("kind");
  if (kind == fields.end() || !kind->second->is_string())
    throw DataError(message(source, ": a tokenizer file needs \"kind\", the string words, bytes or bpe"));
  const std::string kind_name = kind->second->text();
  const std::vector<std::string> specials = strings("specials"), tokens = strings("tokens"), merges = strings("merges");
  std::string lines;
  // "added" (with_added's tokens), absent from the files of older versions.
  const std::vector<std::string> added = fields.count("added") ? strings("added") : std::vector<std::string>{};
  for (const auto* list : {&specials, &tokens, &added})
    for (const std::string& token : *list) lines += token + "\n";
  // Its messages count lines: say which.
  const Vocab vocab = Vocab::from_text(lines, message(source, " (\"specials\" then \"tokens\", one a line)"));
  if (kind_name == "words") {
    if (!merges.empty() || !added.empty())
      throw DataError(message(source, ": a tokenizer of words has no merges and no added tokens"));
    return Tokenizer(vocab);
  }
  if (kind_name != "bytes" && kind_name != "bpe")
    throw DataError(message(source, ": \"kind\" is \"", kind_name, "\"; expected words, bytes or bpe"));
  std::string merge_lines;
  for (const std::string& merge : merges) merge_lines += merge + "\n";
  return from_metadata(vocab,
                       {{"tokenizer.kind", kind_name},
                        {"tokenizer.specials", std::to_string(specials.size())},
                        {"tokenizer.merges", merge_lines},
                        {"tokenizer.added", joined_lines(added)}},
                       "tokenizer", source);
}

Tokenizer Tokenizer::read_file(const std::string& path) {
  const std::string text = read_whole_file(path, kMaxTokenizerFileBytes, "a tokenizer's file");
  // The hub's tokenizer.json has "model" and "version" (and true, false, null, which from_json's
  // strict reader refuses); gradformer's has "format": "gradformer-tokenizer".
  std::optional<Json> root;
  try {
    root = Json::parse_config(text);
  } catch (const JsonError&) {  // from_json says what is wrong
  }
  if (root && HubTokenizer::is_hub_json(*root) && !json_member(*root, "format"))
    return hub(HubTokenizer::from_json(*root, path));
  return from_json(text, path);
}

}  // namespace gradformer
