#include "transformer/data/hub_pipeline.h"

#include "transformer/data/bpe.h"
#include "transformer/data/data_error.h"
#include "transformer/data/hub_json.h"
#include "transformer/data/llama3_pre_tokenize.h"
#include "transformer/data/pre_tokenize.h"
#include "transformer/data/utf8.h"

namespace gradformer {

namespace {

constexpr const char* kSupportedNormalizers = "Sequence of Prepend and Replace, Prepend, Replace, NFC, none";

// Characters NFC leaves as they are wherever they stand (their NFC_Quick_Check is Yes and none of
// them combines with a character before it), by the ranges require_nfc's comment lists.
bool stable_under_nfc(char32_t c) {
  return c < 0x300 || (c >= 0x2002 && c <= 0x206F) || (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3000 && c <= 0x3096) ||
         (c >= 0x30A0 && c <= 0x30FF) || (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0x1F000 && c <= 0x1FAFF);
}
constexpr const char* kSupportedPreTokenizers =
    "ByteLevel, Split with Llama 3's or Qwen2's pattern, Metaspace, Digits, a Sequence of them, none";

/// The items of an array member, or a DataError naming it.
const std::vector<Json>& array_member(const Json& object, const char* name, const std::string& where) {
  const Json* items = json_member(object, name);
  if (items == nullptr || !items->is_array()) throw DataError(message(where, ".", name, " must be an array"));
  return items->items();
}

}  // namespace

std::string replace_all(const std::string& text, const std::string& pattern, const std::string& content) {
  if (pattern.empty()) return text;
  std::string out;
  size_t start = 0;
  for (size_t at; (at = text.find(pattern, start)) != std::string::npos; start = at + pattern.size())
    out.append(text, start, at - start) += content;
  return out.append(text, start);
}

void require_nfc(std::string_view text, const std::string& source) {
  for (size_t at = 0; at < text.size();) {
    const Utf8Step step = decode_utf8(text, at, "require_nfc");
    if (!stable_under_nfc(step.code_point))
      throw ValueError(message(source, ": the NFC normalizer: the character U+", std::hex, std::uppercase,
                               static_cast<uint32_t>(step.code_point), std::dec, " at byte ", at,
                               " is one NFC may change, and gradformer does not implement NFC's tables yet"));
    at += step.length;
  }
}

HubNormalizer HubNormalizer::parse(const Json* normalizer, const std::string& source) {
  HubNormalizer parsed;
  if (!json_is_null(normalizer)) add_steps(*normalizer, source, parsed.steps_);
  return parsed;
}

void HubNormalizer::add_steps(const Json& normalizer, const std::string& source, std::vector<Step>& steps) {
  const std::string where = source + ": normalizer";
  const std::string type = json_type(normalizer, where);
  if (type == "Sequence") {
    for (const Json& step : array_member(normalizer, "normalizers", where)) add_steps(step, source, steps);
  } else if (type == "NFC") {
    steps.push_back({false, "", "", true});
  } else if (type == "Prepend") {
    steps.push_back({true, "", json_string(normalizer, "prepend", where)});
  } else if (type == "Replace") {
    const Json* pattern = json_member(normalizer, "pattern");
    const Json* text = pattern == nullptr ? nullptr : json_member(*pattern, "String");
    if (text == nullptr || !text->is_string())
      throw DataError(message(where, " Replace pattern ", pattern == nullptr ? "(none)" : pattern->dump(),
                              " is not supported (supported: {\"String\": text})"));
    steps.push_back({false, text->text(), json_string(normalizer, "content", where)});
  } else {
    throw DataError(message(where, " type '", type, "' is not supported (supported: ", kSupportedNormalizers, ")"));
  }
}

std::string HubNormalizer::normalize(std::string text) const {
  for (const Step& step : steps_) {
    if (step.nfc) {
      require_nfc(text, "tokenizer.json");
    } else if (step.prepend) {
      if (!text.empty()) text.insert(0, step.content);
    } else {
      text = replace_all(text, step.pattern, step.content);
    }
  }
  return text;
}

HubPreTokenizer HubPreTokenizer::parse(const Json* pre_tokenizer, const std::string& source) {
  HubPreTokenizer parsed;
  if (!json_is_null(pre_tokenizer)) add_steps(*pre_tokenizer, source, parsed.steps_);
  return parsed;
}

void HubPreTokenizer::add_steps(const Json& pre_tokenizer, const std::string& source, std::vector<Step>& steps) {
  const std::string where = source + ": pre_tokenizer";
  const std::string type = json_type(pre_tokenizer, where);
  if (type == "Sequence") {
    for (const Json& step : array_member(pre_tokenizer, "pretokenizers", where)) add_steps(step, source, steps);
  } else if (type == "ByteLevel") {
    Step step{Kind::ByteLevel};
    step.add_prefix_space = json_flag(pre_tokenizer, "add_prefix_space", false, where + " ByteLevel");
    step.use_regex = json_flag(pre_tokenizer, "use_regex", true, where + " ByteLevel");
    steps.push_back(step);
  } else if (type == "Split") {
    steps.push_back(split_step(pre_tokenizer, source));
  } else if (type == "Metaspace") {
    steps.push_back(metaspace_step(pre_tokenizer, source));
  } else if (type == "Digits") {  // StarCoder's and SmolLM's, before ByteLevel
    Step step{Kind::Digits};
    step.individual_digits = json_flag(pre_tokenizer, "individual_digits", false, where + " Digits");
    steps.push_back(step);
  } else {
    throw DataError(message(where, " type '", type, "' is not supported (supported: ", kSupportedPreTokenizers, ")"));
  }
}

HubPreTokenizer::Step HubPreTokenizer::split_step(const Json& split, const std::string& source) {
  const std::string where = source + ": pre_tokenizer Split";
  const Json* pattern = json_member(split, "pattern");
  const Json* regex = pattern == nullptr ? nullptr : json_member(*pattern, "Regex");
  if (regex == nullptr || !regex->is_string() ||
      (regex->text() != kLlama3SplitPattern && regex->text() != kQwen2SplitPattern))
    throw DataError(message(where, " pattern ", pattern == nullptr ? "(none)" : pattern->dump(),
                            " is not supported (supported: exactly Llama 3's or Qwen2's Regex)"));
  const std::string behavior = json_string(split, "behavior", where);
  if (behavior != "Isolated")
    throw DataError(message(where, " behavior '", behavior, "' is not supported (supported: Isolated)"));
  if (json_flag(split, "invert", false, where)) throw DataError(message(where, " invert true is not supported"));
  return Step{regex->text() == kLlama3SplitPattern ? Kind::SplitLlama3 : Kind::SplitQwen2};
}

HubPreTokenizer::Step HubPreTokenizer::metaspace_step(const Json& metaspace, const std::string& source) {
  const std::string where = source + ": pre_tokenizer Metaspace";
  Step step{Kind::Metaspace};
  step.replacement = json_string(metaspace, "replacement", where);
  if (step.replacement.empty()) throw DataError(message(where, ".replacement is empty"));
  step.split = json_flag(metaspace, "split", true, where);
  if (json_is_null(json_member(metaspace, "prepend_scheme"))) {  // files before prepend_scheme
    step.prepend = json_flag(metaspace, "add_prefix_space", true, where) ? Prepend::Always : Prepend::Never;
    return step;
  }
  const std::string scheme = json_string(metaspace, "prepend_scheme", where);
  if (scheme != "first" && scheme != "always" && scheme != "never")
    throw DataError(
        message(where, " prepend_scheme '", scheme, "' is not supported (supported: first, always, never)"));
  step.prepend = scheme == "first" ? Prepend::First : scheme == "always" ? Prepend::Always : Prepend::Never;
  return step;
}

void HubPreTokenizer::pre_tokenize(const HubPiece& piece, std::vector<HubPiece>& out) const {
  std::vector<HubPiece> pieces{piece}, next;
  for (const Step& step : steps_) {
    next.clear();
    for (const HubPiece& p : pieces) apply(step, p, next);
    pieces.swap(next);
  }
  for (HubPiece& p : pieces)
    if (!p.text.empty()) out.push_back(std::move(p));
}

namespace {

// The Digits pre-tokenizer: the text cut around its numbers (\p{N}, Rust's char::is_numeric): each
// number character a piece of its own (individual) or each run of them one piece; the text between
// them as it is.
std::vector<std::string> digit_pieces(const std::string& text, bool individual) {
  std::vector<std::string> pieces;
  bool last_number = false;
  for (size_t at = 0; at < text.size();) {
    const Utf8Step step = decode_utf8(text, at, "Digits pre-tokenizer");
    const bool number = character_class(step.code_point) == CharacterClass::Number;
    if (pieces.empty() || number != last_number || (number && individual)) pieces.emplace_back();
    pieces.back().append(text, at, step.length);
    last_number = number, at += step.length;
  }
  return pieces;
}

}  // namespace

void HubPreTokenizer::apply(const Step& step, const HubPiece& piece, std::vector<HubPiece>& out) {
  const auto add_all = [&](const std::vector<std::string>& texts) {
    for (size_t i = 0; i < texts.size(); ++i) out.push_back({texts[i], piece.starts_text && i == 0});
  };
  switch (step.kind) {
    case Kind::ByteLevel: {
      const std::string text = step.add_prefix_space && piece.text.rfind(' ', 0) != 0 ? " " + piece.text : piece.text;
      std::vector<std::string> texts = step.use_regex ? gpt2_pre_tokens(text) : std::vector<std::string>{text};
      for (std::string& t : texts) t = gpt2_bytes_to_text(t);
      return add_all(texts);
    }
    case Kind::SplitLlama3:
      return add_all(llama3_pre_tokens(piece.text));
    case Kind::SplitQwen2:
      return add_all(qwen2_pre_tokens(piece.text));
    case Kind::Digits:
      return add_all(digit_pieces(piece.text, step.individual_digits));
    case Kind::Metaspace: {
      std::string text = replace_all(piece.text, " ", step.replacement);
      const bool first = step.prepend == Prepend::First && piece.starts_text;
      if ((step.prepend == Prepend::Always || first) && text.rfind(step.replacement, 0) != 0)
        text.insert(0, step.replacement);
      if (!step.split) return add_all({text});
      std::vector<std::string> texts;  // cut before each replacement (the library's MergedWithNext)
      for (size_t start = 0; start < text.size();) {
        size_t cut = text.find(step.replacement, start + 1);
        if (cut == std::string::npos) cut = text.size();
        texts.push_back(text.substr(start, cut - start));
        start = cut;
      }
      return add_all(texts);
    }
  }
}

}  // namespace gradformer
