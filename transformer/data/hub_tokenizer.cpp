#include "transformer/data/hub_tokenizer.h"

#include <algorithm>

#include "tensor/support/utf8.h"
#include "transformer/data/data_error.h"
#include "transformer/data/hub_json.h"

namespace gradformer {

namespace {

/// model.vocab: token -> id, each id once.
TokenIds read_vocab(const Json& model, const std::string& source) {
  const Json* vocab = json_member(model, "vocab");
  if (vocab == nullptr || !vocab->is_object())
    throw DataError(message(source, ": model.vocab must be an object of token -> id"));
  TokenIds ids;
  ids.reserve(vocab->members().size());
  for (const auto& [token, id] : vocab->members()) {
    if (!id.is_integer() || id.value() < 0)
      throw DataError(message(source, ": model.vocab \"", token, "\" has no id (a number from 0)"));
    if (!ids.emplace(token, id.value()).second)
      throw DataError(message(source, ": model.vocab lists \"", token, "\" twice"));
  }
  return ids;
}

/// model.merges: "left right" strings (one space) or ["left", "right"] pairs.
std::vector<HubBpeModel::Merge> read_merges(const Json& model, const std::string& source) {
  const Json* merges = json_member(model, "merges");
  std::vector<HubBpeModel::Merge> out;
  if (json_is_null(merges)) return out;
  if (!merges->is_array()) throw DataError(message(source, ": model.merges must be an array"));
  out.reserve(merges->items().size());
  for (const Json& merge : merges->items()) {
    if (merge.is_string()) {
      const std::string& text = merge.text();
      const size_t space = text.find(' ');
      if (space != std::string::npos && text.find(' ', space + 1) == std::string::npos) {
        out.emplace_back(text.substr(0, space), text.substr(space + 1));
        continue;
      }
    } else if (merge.is_array() && merge.items().size() == 2 && merge.items()[0].is_string() &&
               merge.items()[1].is_string()) {
      out.emplace_back(merge.items()[0].text(), merge.items()[1].text());
      continue;
    }
    throw DataError(message(source, ": model.merges[", out.size(), "] is ", merge.dump().substr(0, 60),
                            ", not \"left right\" nor [\"left\", \"right\"]"));
  }
  return out;
}

/// A setting that must be null (or absent), or one of `allowed` values: DataError naming it.
void require_unset(const Json& model, const char* name, const std::string& source, bool empty_string_allowed) {
  const Json* value = json_member(model, name);
  if (json_is_null(value) || (empty_string_allowed && value->is_string() && value->text().empty())) return;
  throw DataError(message(source, ": model.", name, " ", value->dump(), " is not supported (supported: null",
                          empty_string_allowed ? " or \"\")" : ")"));
}

std::shared_ptr<const HubBpeModel> read_model(const Json* model, const std::string& source) {
  if (model == nullptr || !model->is_object()) throw DataError(message(source, ": no \"model\" object"));
  const std::string type = json_type(*model, source + ": model");
  if (type != "BPE") throw DataError(message(source, ": model type '", type, "' is not supported (supported: BPE)"));
  require_unset(*model, "dropout", source, false);
  require_unset(*model, "continuing_subword_prefix", source, true);
  require_unset(*model, "end_of_word_suffix", source, true);
  const std::string where = source + ": model";
  HubBpeOptions options;
  options.byte_fallback = json_flag(*model, "byte_fallback", false, where);
  options.fuse_unk = json_flag(*model, "fuse_unk", false, where);
  options.ignore_merges = json_flag(*model, "ignore_merges", false, where);
  if (!json_is_null(json_member(*model, "unk_token"))) options.unk_token = json_string(*model, "unk_token", where);
  return std::make_shared<const HubBpeModel>(read_vocab(*model, source), read_merges(*model, source),
                                             std::move(options), source);
}

/// The id TemplateProcessing puts first for a single text (directly, or within a Sequence).
std::optional<int64_t> template_bos(const Json* processor) {
  if (json_is_null(processor)) return std::nullopt;
  const Json* type = json_member(*processor, "type");
  if (type == nullptr || !type->is_string()) return std::nullopt;
  if (type->text() == "Sequence") {
    const Json* list = json_member(*processor, "processors");
    if (list != nullptr && list->is_array())
      for (const Json& step : list->items())
        if (const auto bos = template_bos(&step)) return bos;
    return std::nullopt;
  }
  const Json* single = json_member(*processor, "single");
  if (type->text() != "TemplateProcessing" || single == nullptr || !single->is_array() || single->items().empty())
    return std::nullopt;
  const Json* first = json_member(single->items()[0], "SpecialToken");
  const Json* name = first == nullptr ? nullptr : json_member(*first, "id");
  const Json* specials = json_member(*processor, "special_tokens");
  const Json* entry = name == nullptr || specials == nullptr ? nullptr : json_member(*specials, name->text());
  const Json* ids = entry == nullptr ? nullptr : json_member(*entry, "ids");
  if (ids == nullptr || !ids->is_array() || ids->items().empty() || !ids->items()[0].is_integer()) return std::nullopt;
  return ids->items()[0].value();
}

}  // namespace

void HubTokenizer::Matcher::add(std::string text, int64_t id) {
  if (text.empty()) return;
  starts_a_token[static_cast<unsigned char>(text[0])] = true;
  tokens.emplace_back(std::move(text), id);
}

void HubTokenizer::Matcher::sort() {
  std::stable_sort(tokens.begin(), tokens.end(),
                   [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
}

template <class OnText, class OnToken>
void HubTokenizer::Matcher::cut(std::string_view text, OnText on_text, OnToken on_token) const {
  size_t stretch = 0;  // where the text since the last token starts
  for (size_t i = 0; i < text.size(); ++i) {
    if (!starts_a_token[static_cast<unsigned char>(text[i])]) continue;
    const auto match = std::find_if(tokens.begin(), tokens.end(), [&](const auto& token) {
      return text.substr(i, token.first.size()) == token.first;
    });
    if (match == tokens.end()) continue;
    if (i > stretch) on_text(text.substr(stretch, i - stretch), stretch);
    on_token(match->second);
    stretch = i + match->first.size();
    i = stretch - 1;
  }
  if (stretch < text.size()) on_text(text.substr(stretch), stretch);
}

bool HubTokenizer::is_hub_json(const Json& root) {
  return json_member(root, "model") != nullptr && json_member(root, "version") != nullptr;
}

HubTokenizer HubTokenizer::parse(std::string_view text, const std::string& source) {
  Json root;
  try {
    root = Json::parse_config(text);
  } catch (const JsonError& e) {
    throw DataError(message(source, ": not a tokenizer.json: ", e.what()));
  }
  return from_json(root, source);
}

HubTokenizer HubTokenizer::from_json(const Json& root, const std::string& source) {
  if (!root.is_object())
    throw DataError(message(source, ": a tokenizer.json is an object, found ", kind_name(root.kind())));
  HubTokenizer tokenizer;
  tokenizer.model_ = read_model(json_member(root, "model"), source);
  tokenizer.normalizer_ = HubNormalizer::parse(json_member(root, "normalizer"), source);
  tokenizer.pre_tokenizer_ = HubPreTokenizer::parse(json_member(root, "pre_tokenizer"), source);
  tokenizer.decoder_ = HubDecoder::parse(json_member(root, "decoder"), source);
  tokenizer.read_added_tokens(json_member(root, "added_tokens"), source);
  tokenizer.number_tokens(source);
  tokenizer.bos_ = template_bos(json_member(root, "post_processor"));
  tokenizer.json_ = root.dump();
  return tokenizer;
}

void HubTokenizer::read_added_tokens(const Json* added, const std::string& source) {
  if (json_is_null(added)) return;
  if (!added->is_array()) throw DataError(message(source, ": added_tokens must be an array"));
  for (const Json& entry : added->items()) {
    const std::string where = message(source, ": added_tokens[", added_.size(), "]");
    HubAddedToken token{json_integer(entry, "id", where), json_string(entry, "content", where),
                        json_flag(entry, "special", false, where), json_flag(entry, "normalized", false, where)};
    if (token.id < 0) throw DataError(message(where, ".id is ", token.id, ", below 0"));
    for (const char* option : {"lstrip", "rstrip", "single_word"})
      if (json_flag(entry, option, false, where))
        throw DataError(message(source, ": added token \"", token.content, "\" (id ", token.id, ") has ", option,
                                " true, which is not supported (supported: false)"));
    if (token.normalized) {
      normalized_.add(normalizer_.normalize(token.content), token.id);
    } else {
      raw_.add(token.content, token.id);
    }
    added_.push_back(std::move(token));
  }
  raw_.sort();
  normalized_.sort();
}

// Ids 0 .. size()-1: the model's tokens, then the added tokens' (which win where both name an id, as
// in the library's id_to_token).
void HubTokenizer::number_tokens(const std::string& source) {
  int64_t count = 0;
  for (const auto& [token, id] : model_->vocab()) count = std::max(count, id + 1);
  for (const HubAddedToken& token : added_) count = std::max(count, token.id + 1);
  tokens_.assign(static_cast<size_t>(count), std::string());
  special_.assign(static_cast<size_t>(count), false);
  std::vector<bool> named(static_cast<size_t>(count), false);
  for (const auto& [token, id] : model_->vocab()) {
    tokens_[static_cast<size_t>(id)] = token;
    named[static_cast<size_t>(id)] = true;
  }
  for (const HubAddedToken& token : added_) {
    tokens_[static_cast<size_t>(token.id)] = token.content;
    special_[static_cast<size_t>(token.id)] = token.special;
    named[static_cast<size_t>(token.id)] = true;
  }
  const auto gap = std::find(named.begin(), named.end(), false);
  if (gap != named.end())
    throw DataError(message(source, ": no token has id ", gap - named.begin(),
                            " (model.vocab and added_tokens hold ids ", "up to ", count - 1,
                            ", and every id below must be a token)"));
}

std::vector<int64_t> HubTokenizer::encode(std::string_view text) const {
  if (const auto bad = invalid_utf8_at(text))
    throw ValueError(message("HubTokenizer encode: the text is not UTF-8 at byte ", *bad));
  std::vector<int64_t> ids;
  raw_.cut(
      text, [&](std::string_view stretch, size_t offset) { encode_text(stretch, offset == 0, ids); },
      [&](int64_t id) { ids.push_back(id); });
  return ids;
}

void HubTokenizer::encode_text(std::string_view text, bool starts_text, std::vector<int64_t>& ids) const {
  const std::string normalized = normalizer_.normalize(std::string(text));
  std::vector<HubPiece> pieces;
  normalized_.cut(
      normalized,
      [&](std::string_view stretch, size_t offset) {
        pieces.clear();
        pre_tokenizer_.pre_tokenize({std::string(stretch), starts_text && offset == 0}, pieces);
        for (const HubPiece& piece : pieces) model_->tokenize(piece.text, ids);
      },
      [&](int64_t id) { ids.push_back(id); });
}

const std::string& HubTokenizer::token(int64_t id) const {
  if (id < 0 || id >= size())
    throw ValueError(message("HubTokenizer: id ", id, " is outside the vocabulary of ", size(), " tokens"));
  return tokens_[static_cast<size_t>(id)];
}

std::string HubTokenizer::decode(const std::vector<int64_t>& ids) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (const int64_t id : ids) tokens.push_back(token(id));
  return decoder_.decode(std::move(tokens));
}

int64_t HubTokenizer::byte_length(int64_t id) const {
  const std::string& text = token(id);
  return special_[static_cast<size_t>(id)] ? 0 : static_cast<int64_t>(decoder_.token_bytes(text).size());
}

std::optional<int64_t> HubTokenizer::added_token(std::string_view content) const {
  for (const HubAddedToken& token : added_)
    if (token.content == content) return token.id;
  return std::nullopt;
}

}  // namespace gradformer
