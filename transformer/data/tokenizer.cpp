#include "transformer/data/tokenizer.h"

#include <algorithm>
#include <unordered_map>

#include "tensor/support/json.h"
#include "tensor/support/utf8.h"
#include "transformer/data/hub_json.h"
#include "transformer/data/hub_tokenizer.h"
#include "transformer/data/learn_bpe.h"
#include "transformer/data/line_reader.h"
#include "transformer/data/pre_tokenize.h"
#include "transformer/data/tsv.h"
#include "transformer/data/utf8.h"

namespace gradformer {

namespace {

constexpr std::string_view kFileFormat = "gradformer-tokenizer";

/// Vocab::specials then the extra ones, checked: each "<name>", none twice.
std::vector<std::string> all_specials(const std::vector<std::string>& extra) {
  std::vector<std::string> names(Vocab::specials.begin(), Vocab::specials.end());
  for (const std::string& name : extra) {
    if (name.size() < 3 || name.front() != '<' || name.back() != '>' ||
        name.find_first_of(" \t\r\n") != std::string::npos)
      throw ValueError(message("Tokenizer: a special token is written <name> without spaces, got \"", name, "\""));
    if (std::find(names.begin(), names.end(), name) != names.end())
      throw ValueError(message("Tokenizer: special token ", name, " given twice"));
    names.push_back(name);
  }
  return names;
}

/// The 256 single bytes, in byte order: the tokenizer of bytes, and where BPE starts.
std::vector<std::string> byte_tokens() {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.emplace_back(1, static_cast<char>(b));
  return tokens;
}

/// For each of `names`, the bytes of the token that GPT-2's byte characters would write as that
/// name: "<sep>" is written by the bytes "<sep>", but "<Â«>" by the bytes "<«>" (Â and « stand for
/// the bytes C2 and AB). A name holding a character that stands for no byte (日) is left out: no
/// token is written as it.
std::vector<std::string> bytes_spelling(const std::vector<std::string>& names) {
  std::vector<std::string> spelled;
  for (const std::string& name : names) {
    try {
      spelled.push_back(gpt2_text_to_bytes(name, name));
    } catch (const DataError&) {  // no token spells it
    }
  }
  return spelled;
}

std::string merges_text(const BytePairEncoding& bpe) {
  std::string text;
  for (const auto& [left, right] : bpe.merges())
    text += gpt2_bytes_to_text(left) + " " + gpt2_bytes_to_text(right) + "\n";
  return text;
}

// ValueError naming the first merge of `bpe` whose joined token is not one of its tokens.
void check_merges_make_tokens(const BytePairEncoding& bpe) {
  for (const auto& [left, right] : bpe.merges())
    if (bpe.id(left + right) < 0)
      throw ValueError(message("the merge ", gpt2_bytes_to_text(left), " ", gpt2_bytes_to_text(right),
                               " makes a token the vocabulary lacks"));
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

}  // namespace

Tokenizer::Tokenizer(Vocab vocab) : vocab_(std::move(vocab)) {}

Tokenizer::Tokenizer(Kind kind, BytePairEncoding bpe, const std::vector<std::string>& extra_specials, bool has_vocab)
    : kind_(kind), has_vocab_(has_vocab), bpe_(std::move(bpe)) {
  // Every tokenizer, however it was made (learned, read from a checkpoint, imported from GPT-2's
  // files), holds this: what an import accepts, every reader accepts.
  check_merges_make_tokens(*bpe_);
  if (!has_vocab_) return;
  const std::vector<std::string> specials = all_specials(extra_specials);
  specials_ = static_cast<int64_t>(specials.size());
  std::string lines;
  for (const std::string& name : specials) lines += name + "\n";
  for (int64_t id = 0; id < bpe_->size(); ++id) {
    const std::string text = gpt2_bytes_to_text(bpe_->token(id));
    if (std::find(specials.begin(), specials.end(), text) != specials.end())
      throw ValueError(message("Tokenizer: token ", id, " of the byte-pair encoding spells the special ", text,
                               ", so its text would be read back as the special"));
    lines += text + "\n";
  }
  vocab_ = Vocab::from_text(lines, "the tokenizer's vocabulary");
}

Tokenizer Tokenizer::bytes(const std::vector<std::string>& extra_specials) {
  return Tokenizer(Kind::Bytes, BytePairEncoding(byte_tokens(), {}), extra_specials, true);
}

Tokenizer Tokenizer::byte_pairs(BytePairEncoding bpe, const std::vector<std::string>& extra_specials) {
  return Tokenizer(Kind::Bpe, std::move(bpe), extra_specials, true);
}

Tokenizer Tokenizer::gpt2(BytePairEncoding bpe) { return Tokenizer(Kind::Bpe, std::move(bpe), {}, false); }

Tokenizer Tokenizer::hub(HubTokenizer hub) {
  Tokenizer tokenizer;
  tokenizer.kind_ = Kind::Hub;
  tokenizer.has_vocab_ = false;
  tokenizer.hub_ = std::make_shared<const HubTokenizer>(std::move(hub));
  return tokenizer;
}

Tokenizer Tokenizer::read_hub_file(const std::string& path) {
  return hub(HubTokenizer::parse(read_whole_file(path, kMaxTokenizerFileBytes, "a tokenizer's file"), path));
}

Tokenizer Tokenizer::learn_bpe(const std::vector<std::string_view>& texts, int64_t vocab_size,
                               const std::vector<std::string>& extra_specials) {
  PreTokenCounts counts;
  for (const std::string_view text : texts) count_pre_tokens(counts, text);
  return learn_bpe_from_counts(counts, vocab_size, extra_specials);
}

Tokenizer Tokenizer::learn_bpe_from_counts(const PreTokenCounts& counts, int64_t vocab_size,
                                           const std::vector<std::string>& extra_specials) {
  const std::vector<std::string> specials = all_specials(extra_specials);
  const auto count = static_cast<int64_t>(specials.size());
  if (vocab_size < count + 256)
    throw ValueError(message("Tokenizer::learn_bpe: a vocabulary of ", vocab_size, " is smaller than its ", count,
                             " specials and the 256 bytes (", count + 256, ")"));
  // No learned token may spell a special: its text would be read back as the special.
  return byte_pairs(gradformer::learn_bpe_from_counts(counts, vocab_size - count, bytes_spelling(specials)),
                    extra_specials);
}

void Tokenizer::count_pre_tokens(PreTokenCounts& counts, std::string_view text) {
  add_pre_token_counts(counts, gpt2_pre_tokens(text));
}

std::string Tokenizer::kind_name() const {
  switch (kind_) {
    case Kind::Words:
      return "words";
    case Kind::Bytes:
      return "bytes";
    case Kind::Bpe:
      return "bpe";
    case Kind::Hub:
      return "hub";
  }
  return "?";
}

int64_t Tokenizer::size() const {
  if (kind_ == Kind::Hub) return hub_->size();
  return kind_ == Kind::Words ? vocab_.size() : specials_ + bpe_->size();
}

std::optional<int64_t> Tokenizer::special(std::string_view name) const {
  if (kind_ == Kind::Hub) return hub_->added_token(name);
  if (!has_vocab_) {
    const int64_t id = bpe_->id(name);
    return id < 0 ? std::nullopt : std::optional(id);
  }
  if (!vocab_.contains(name)) return std::nullopt;
  const int64_t id = vocab_.id(name);
  return kind_ == Kind::Words || id < specials_ ? std::optional(id) : std::nullopt;
}

std::optional<int64_t> Tokenizer::bos() const { return kind_ == Kind::Hub ? hub_->bos() : std::nullopt; }

std::vector<int64_t> Tokenizer::encode_prompt(std::string_view text) const {
  std::vector<int64_t> ids = encode(text);
  if (const std::optional<int64_t> first = bos(); first && !ids.empty()) ids.insert(ids.begin(), *first);
  return ids;
}

std::vector<int64_t> Tokenizer::encode(std::string_view text) const {
  if (kind_ == Kind::Words) return vocab_.encode(split_words(text));
  if (kind_ == Kind::Hub) {
    if (const auto offset = invalid_utf8_at(text))
      throw ValueError(message("Tokenizer encode: a hub tokenizer needs UTF-8 text; byte ", *offset, " is not"));
    return hub_->encode(text);
  }
  std::vector<int64_t> ids;
  if (kind_ == Kind::Bytes) {
    for (const char c : text) ids.push_back(specials_ + static_cast<unsigned char>(c));
    return ids;
  }
  if (const auto offset = invalid_utf8_at(text))
    throw ValueError(message("Tokenizer encode: byte-pair encoding needs UTF-8 text; byte ", *offset,
                             " is not (use the bytes tokenizer for arbitrary bytes)"));
  ids = bpe_->encode(gpt2_pre_tokens(text));
  for (int64_t& id : ids) id += specials_;
  return ids;
}

std::string Tokenizer::decode_bytes(const std::vector<int64_t>& ids) const {
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t id = ids[i];
    if (id < 0 || id >= size())
      throw ValueError(message("Tokenizer decode: id ", id, " is outside the vocabulary of ", size(), " tokens"));
    if (kind_ == Kind::Hub) continue;  // checked; decoded below, all at once
    if (kind_ == Kind::Words) {
      if (i > 0) out += ' ';
      out += vocab_.token(id);
    } else {
      out += id < specials_ ? vocab_.token(id) : bpe_->token(id - specials_);
    }
  }
  return kind_ == Kind::Hub ? hub_->decode(ids) : out;
}

std::string Tokenizer::decode(const std::vector<int64_t>& ids) const {
  return kind_ == Kind::Words ? decode_bytes(ids) : utf8_replace_invalid(decode_bytes(ids));
}

std::string Tokenizer::piece(int64_t id) const {
  if (id < 0 || id >= size())
    throw ValueError(message("Tokenizer piece: id ", id, " is outside the vocabulary of ", size(), " tokens"));
  if (kind_ == Kind::Hub) return hub_->token(id);
  if (kind_ == Kind::Words || id < specials_) return vocab_.token(id);
  return gpt2_bytes_to_text(bpe_->token(id - specials_));
}

int64_t Tokenizer::byte_length(int64_t id) const {
  if (id < 0 || id >= size())
    throw ValueError(message("Tokenizer byte_length: id ", id, " is outside the vocabulary of ", size(), " tokens"));
  if (kind_ == Kind::Hub) return hub_->byte_length(id);
  if (kind_ == Kind::Words) return id < Vocab::unk + 1 ? 0 : static_cast<int64_t>(vocab_.token(id).size());
  return id < specials_ ? 0 : static_cast<int64_t>(bpe_->token(id - specials_).size());
}

const Vocab& Tokenizer::vocab() const {
  if (!has_vocab_)
    throw ValueError(message("Tokenizer: ", kind_ == Kind::Hub ? "a hub tokenizer" : "GPT-2's tokenizer",
                             " has no specials in front of its tokens, so no model vocabulary of this library ",
                             "(<pad> <s> </s> <unk> first)"));
  return vocab_;
}

const BytePairEncoding& Tokenizer::byte_pair_encoding() const {
  if (kind_ == Kind::Words || kind_ == Kind::Hub)
    throw ValueError(kind_ == Kind::Words ? "Tokenizer: a tokenizer of words has no byte-pair encoding"
                                          : "Tokenizer: a hub tokenizer has no byte-level byte-pair encoding (its "
                                            "BPE model is its tokenizer.json's)");
  return *bpe_;
}

std::map<std::string, std::string> Tokenizer::metadata(const std::string& prefix) const {
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

}  // namespace

Tokenizer Tokenizer::from_metadata(const Vocab& vocab, const std::map<std::string, std::string>& metadata,
                                   const std::string& prefix, const std::string& source) {
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
  if (kind->second == "bytes" && (tokens != byte_tokens() || !parsed.empty())) {
    const bool shuffled = tokens.size() == 256 && tokens != byte_tokens();
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
  for (int64_t id = first; id < size(); ++id) tokens.push_back(Json::string(piece(id)));
  if (bpe_)
    for (const auto& [l, r] : bpe_->merges())
      merges.push_back(Json::string(gpt2_bytes_to_text(l) + " " + gpt2_bytes_to_text(r)));
  return Json::object({{"format", Json::string(std::string(kFileFormat))},
                       {"kind", Json::string(kind_name())},
                       {"specials", Json::array(std::move(specials))},
                       {"tokens", Json::array(std::move(tokens))},
                       {"merges", Json::array(std::move(merges))}})
      .dump();
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
  for (const auto* list : {&specials, &tokens})
    for (const std::string& token : *list) lines += token + "\n";
  // Its messages count lines: say which.
  const Vocab vocab = Vocab::from_text(lines, message(source, " (\"specials\" then \"tokens\", one a line)"));
  if (kind_name == "words") {
    if (!merges.empty()) throw DataError(message(source, ": a tokenizer of words has no merges"));
    return Tokenizer(vocab);
  }
  if (kind_name != "bytes" && kind_name != "bpe")
    throw DataError(message(source, ": \"kind\" is \"", kind_name, "\"; expected words, bytes or bpe"));
  std::string merge_lines;
  for (const std::string& merge : merges) merge_lines += merge + "\n";
  return from_metadata(vocab,
                       {{"tokenizer.kind", kind_name},
                        {"tokenizer.specials", std::to_string(specials.size())},
                        {"tokenizer.merges", merge_lines}},
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

bool operator==(const Tokenizer& a, const Tokenizer& b) {
  if (a.kind_ != b.kind_ || a.has_vocab_ != b.has_vocab_ || a.specials_ != b.specials_ || !(a.vocab_ == b.vocab_))
    return false;
  if (a.kind_ == Tokenizer::Kind::Words) return true;
  if (a.kind_ == Tokenizer::Kind::Hub) return a.hub_->json() == b.hub_->json();
  // GPT-2's has no vocabulary above (it is empty for both): its tokens by id are compared here.
  if (a.bpe_->size() != b.bpe_->size() || a.bpe_->merges() != b.bpe_->merges()) return false;
  for (int64_t id = 0; id < a.bpe_->size(); ++id)
    if (a.bpe_->token(id) != b.bpe_->token(id)) return false;
  return true;
}

}  // namespace gradformer
