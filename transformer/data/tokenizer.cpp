#include "transformer/data/tokenizer.h"

#include <algorithm>

#include "tensor/support/utf8.h"
#include "transformer/data/hub_tokenizer.h"
#include "transformer/data/learn_bpe.h"
#include "transformer/data/line_reader.h"
#include "transformer/data/pre_tokenize.h"
#include "transformer/data/tsv.h"
#include "transformer/data/utf8.h"

namespace gradformer {

namespace {

/// ValueError unless `name` is written <name> without spaces.
void check_special_name(const std::string& name) {
  if (name.size() < 3 || name.front() != '<' || name.back() != '>' ||
      name.find_first_of(" \t\r\n") != std::string::npos)
    throw ValueError(message("Tokenizer: a special token is written <name> without spaces, got \"", name, "\""));
}

/// Vocab::specials then the extra ones, checked: each "<name>", none twice.
std::vector<std::string> all_specials(const std::vector<std::string>& extra) {
  std::vector<std::string> names(Vocab::specials.begin(), Vocab::specials.end());
  for (const std::string& name : extra) {
    check_special_name(name);
    if (std::find(names.begin(), names.end(), name) != names.end())
      throw ValueError(message("Tokenizer: special token ", name, " given twice"));
    names.push_back(name);
  }
  return names;
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

// ValueError naming the first merge of `bpe` whose joined token is not one of its tokens.
void check_merges_make_tokens(const BytePairEncoding& bpe) {
  for (const auto& [left, right] : bpe.merges())
    if (bpe.id(left + right) < 0)
      throw ValueError(message("the merge ", gpt2_bytes_to_text(left), " ", gpt2_bytes_to_text(right),
                               " makes a token the vocabulary lacks"));
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
  return Tokenizer(Kind::Bytes, BytePairEncoding(single_byte_tokens(), {}), extra_specials, true);
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

int64_t Tokenizer::base_size() const {
  if (kind_ == Kind::Hub) return hub_->size();
  return kind_ == Kind::Words ? vocab_.size() : specials_ + bpe_->size();
}

int64_t Tokenizer::size() const { return base_size() + static_cast<int64_t>(added_.size()); }

Tokenizer Tokenizer::with_added(const std::vector<std::string>& names) const {
  if (kind_ == Kind::Words)
    throw ValueError(
        "Tokenizer with_added: a tokenizer of words cannot take added tokens (its specials are words "
        "of its vocabulary); use bytes, bpe or a hub tokenizer");
  Tokenizer out = *this;
  for (const std::string& name : names) {
    check_special_name(name);
    if (out.special(name)) continue;
    if (has_vocab_ && out.vocab_.contains(name))
      throw ValueError(message("Tokenizer with_added: ", name, " is token ", out.vocab_.id(name),
                               " of the byte-pair encoding, learned from text; it cannot be a special token too"));
    out.added_.push_back(name);
    if (has_vocab_) out.vocab_ = Vocab::from_text(out.vocab_.to_text() + name + "\n", "the tokenizer's vocabulary");
  }
  return out;
}

std::optional<int64_t> Tokenizer::special(std::string_view name) const {
  if (const auto it = std::find(added_.begin(), added_.end(), name); it != added_.end())
    return base_size() + (it - added_.begin());
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
  std::vector<int64_t> run;  // hub: the ids since the last added token, decoded together
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t id = ids[i];
    if (id < 0 || id >= size())
      throw ValueError(message("Tokenizer decode: id ", id, " is outside the vocabulary of ", size(), " tokens"));
    if (id >= base_size()) {  // an added token: its text
      if (!run.empty()) out += hub_->decode(run), run.clear();
      out += added_[static_cast<size_t>(id - base_size())];
    } else if (kind_ == Kind::Hub) {
      run.push_back(id);
    } else if (kind_ == Kind::Words) {
      if (i > 0) out += ' ';
      out += vocab_.token(id);
    } else {
      out += id < specials_ ? vocab_.token(id) : bpe_->token(id - specials_);
    }
  }
  return run.empty() ? out : out + hub_->decode(run);
}

std::string Tokenizer::decode(const std::vector<int64_t>& ids) const {
  return kind_ == Kind::Words ? decode_bytes(ids) : utf8_replace_invalid(decode_bytes(ids));
}

std::string Tokenizer::piece(int64_t id) const {
  if (id < 0 || id >= size())
    throw ValueError(message("Tokenizer piece: id ", id, " is outside the vocabulary of ", size(), " tokens"));
  if (id >= base_size()) return added_[static_cast<size_t>(id - base_size())];
  if (kind_ == Kind::Hub) return hub_->token(id);
  if (kind_ == Kind::Words || id < specials_) return vocab_.token(id);
  return gpt2_bytes_to_text(bpe_->token(id - specials_));
}

int64_t Tokenizer::byte_length(int64_t id) const {
  if (id < 0 || id >= size())
    throw ValueError(message("Tokenizer byte_length: id ", id, " is outside the vocabulary of ", size(), " tokens"));
  if (id >= base_size()) return 0;  // an added token stands for no bytes of text
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

bool operator==(const Tokenizer& a, const Tokenizer& b) {
  if (a.kind_ != b.kind_ || a.has_vocab_ != b.has_vocab_ || a.specials_ != b.specials_ || !(a.vocab_ == b.vocab_) ||
      a.added_ != b.added_)
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
