#include "transformer/data/hub_decoder.h"

#include <array>
#include <optional>

#include "tensor/support/utf8.h"
#include "transformer/data/bpe.h"
#include "transformer/data/data_error.h"
#include "transformer/data/hub_json.h"
#include "transformer/data/hub_pipeline.h"
#include "transformer/data/utf8.h"

namespace gradformer {

namespace {

constexpr const char* kSupportedDecoders =
    "ByteLevel, Replace, ByteFallback, Fuse, Strip, Metaspace, a Sequence of them, none";

/// The bytes a token in GPT-2's byte characters stands for, or nullopt if one of its characters
/// stands for no byte.
std::optional<std::string> byte_level_bytes(const std::string& token) {
  static const std::array<int, 0x144> byte_of = [] {  // every byte character is below U+0144
    std::array<int, 0x144> table{};
    table.fill(-1);
    for (int b = 0; b < 256; ++b) table[gpt2_byte_characters()[static_cast<size_t>(b)]] = b;
    return table;
  }();
  std::string bytes;
  for (size_t i = 0; i < token.size();) {
    const Utf8Step step = read_utf8(token, i);
    if (!step.valid || step.code_point >= byte_of.size() || byte_of[step.code_point] < 0) return std::nullopt;
    bytes += static_cast<char>(byte_of[step.code_point]);
    i += step.length;
  }
  return bytes;
}

/// The byte a "<0xNN>" token stands for, or nullopt for any other token.
std::optional<char> fallback_byte(const std::string& token) {
  if (token.size() != 6 || token.rfind("<0x", 0) != 0 || token.back() != '>') return std::nullopt;
  const auto hex = [](char c) {
    return c >= '0' && c <= '9'   ? c - '0'
           : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                  : -1;
  };
  const int high = hex(token[3]), low = hex(token[4]);
  if (high < 0 || low < 0) return std::nullopt;
  return static_cast<char>(high * 16 + low);
}

/// ByteFallback: each run of byte tokens becomes its text, or a U+FFFD per byte if not UTF-8.
std::vector<std::string> join_fallback_bytes(const std::vector<std::string>& tokens) {
  std::vector<std::string> out;
  std::string bytes;
  const auto flush = [&] {
    if (bytes.empty()) return;
    if (!invalid_utf8_at(bytes)) {
      out.push_back(bytes);
    } else {
      for (size_t i = 0; i < bytes.size(); ++i) out.emplace_back("\xEF\xBF\xBD");
    }
    bytes.clear();
  };
  for (const std::string& token : tokens) {
    if (const auto byte = fallback_byte(token)) {
      bytes += *byte;
      continue;
    }
    flush();
    out.push_back(token);
  }
  flush();
  return out;
}

/// Strip: up to `start` leading and `stop` trailing copies of `character` removed.
std::string strip(const std::string& token, const std::string& character, int64_t start, int64_t stop) {
  size_t begin = 0, end = token.size();
  for (int64_t i = 0; i < start && token.compare(begin, character.size(), character) == 0; ++i)
    begin += character.size();
  for (int64_t i = 0; i < stop && end >= begin + character.size() &&
                      token.compare(end - character.size(), character.size(), character) == 0;
       ++i)
    end -= character.size();
  return token.substr(begin, end - begin);
}

}  // namespace

HubDecoder HubDecoder::parse(const Json* decoder, const std::string& source) {
  HubDecoder parsed;
  parsed.none_ = json_is_null(decoder);
  if (!parsed.none_) add_steps(*decoder, source, parsed.steps_);
  return parsed;
}

void HubDecoder::add_steps(const Json& decoder, const std::string& source, std::vector<Step>& steps) {
  const std::string where = source + ": decoder";
  const std::string type = json_type(decoder, where);
  if (type != "Sequence") return steps.push_back(step_of(decoder, type, where));
  const Json* list = json_member(decoder, "decoders");
  if (list == nullptr || !list->is_array()) throw DataError(message(where, ".decoders must be an array"));
  for (const Json& step : list->items()) add_steps(step, source, steps);
}

HubDecoder::Step HubDecoder::step_of(const Json& decoder, const std::string& type, const std::string& where) {
  if (type == "ByteLevel") return {Kind::ByteLevel};
  if (type == "ByteFallback") return {Kind::ByteFallback};
  if (type == "Fuse") return {Kind::Fuse};
  if (type == "Replace") {
    const Json* pattern = json_member(decoder, "pattern");
    const Json* text = pattern == nullptr ? nullptr : json_member(*pattern, "String");
    if (text == nullptr || !text->is_string())
      throw DataError(message(where, " Replace pattern ", pattern == nullptr ? "(none)" : pattern->dump(),
                              " is not supported (supported: {\"String\": text})"));
    return {Kind::Replace, text->text(), json_string(decoder, "content", where + " Replace")};
  }
  if (type == "Strip") {
    Step step{Kind::Strip, "", json_string(decoder, "content", where + " Strip")};
    step.start = json_integer(decoder, "start", where + " Strip");
    step.stop = json_integer(decoder, "stop", where + " Strip");
    return step;
  }
  if (type == "Metaspace") {
    Step step{Kind::Metaspace, "", json_string(decoder, "replacement", where + " Metaspace")};
    const Json* scheme = json_member(decoder, "prepend_scheme");
    step.strip_first = json_is_null(scheme) ? json_flag(decoder, "add_prefix_space", true, where + " Metaspace")
                                            : !(scheme->is_string() && scheme->text() == "never");
    return step;
  }
  throw DataError(message(where, " type '", type, "' is not supported (supported: ", kSupportedDecoders, ")"));
}

void HubDecoder::apply(const Step& step, std::vector<std::string>& tokens) {
  switch (step.kind) {
    case Kind::ByteLevel: {
      std::string bytes;
      for (const std::string& token : tokens) bytes += byte_level_bytes(token).value_or(token);
      tokens = {bytes};
      return;
    }
    case Kind::Replace:
      for (std::string& token : tokens) token = replace_all(token, step.pattern, step.content);
      return;
    case Kind::ByteFallback:
      tokens = join_fallback_bytes(tokens);
      return;
    case Kind::Fuse: {
      std::string joined;
      for (const std::string& token : tokens) joined += token;
      tokens = {joined};
      return;
    }
    case Kind::Strip:
      for (std::string& token : tokens) token = strip(token, step.content, step.start, step.stop);
      return;
    case Kind::Metaspace:
      for (size_t i = 0; i < tokens.size(); ++i)
        tokens[i] = replace_all(tokens[i], step.content, i == 0 && step.strip_first ? "" : " ");
      return;
  }
}

std::string HubDecoder::decode(std::vector<std::string> tokens) const {
  std::string text;
  if (none_) {
    for (size_t i = 0; i < tokens.size(); ++i) text += (i > 0 ? " " : "") + tokens[i];
    return text;
  }
  for (const Step& step : steps_) apply(step, tokens);
  for (const std::string& token : tokens) text += token;
  return text;
}

std::string HubDecoder::token_bytes(const std::string& token) const {
  std::string text = token;
  for (const Step& step : steps_) {
    if (step.kind == Kind::ByteLevel) text = byte_level_bytes(text).value_or(text);
    if (step.kind == Kind::Replace) text = replace_all(text, step.pattern, step.content);
    if (step.kind == Kind::Metaspace) text = replace_all(text, step.content, " ");
    if (step.kind == Kind::ByteFallback)
      if (const auto byte = fallback_byte(text)) text = std::string(1, *byte);
  }
  return text;
}

}  // namespace gradformer
