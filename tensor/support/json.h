// A minimal JSON reader and writer: exactly what a safetensors header (and GPT-2's encoder.json)
// needs, and strict.
// Values are objects, arrays, strings and integers; true, false, null and non-integer numbers are
// rejected as unsupported (a safetensors header never holds them), except by parse_config, which
// keeps each as its text (a configuration file such as GPT-2's config.json holds them). Object members keep their file
// order and duplicates are kept, so the caller can report a duplicate name.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tensor/support/error.h"
#include "tensor/support/utf8.h"

namespace gradformer {

/// Invalid or unsupported JSON; the message gives the byte offset and what was wrong there.
struct JsonError : Error {
  using Error::Error;
};

class Json {
 public:
  enum class Kind { Object, Array, String, Integer, Literal };
  using Members = std::vector<std::pair<std::string, Json>>;

  static Json object(Members members = {});
  static Json array(std::vector<Json> items = {});
  static Json string(std::string text);  // text must be UTF-8 (dump checks)
  static Json integer(int64_t value);
  static Json literal(std::string text);  // true, false, null or a number, as written

  /// Parses one value (surrounding whitespace allowed). The text must be valid UTF-8.
  /// Nesting deeper than 64 levels is a JsonError, so a hostile file cannot exhaust the stack, and
  /// so is an array of more than max_array_items: a reader that knows its arrays are short (a
  /// tensor's shape) stops a hostile one at once, instead of building millions of values first.
  static Json parse(std::string_view text, size_t max_array_items = SIZE_MAX);
  /// As parse, also accepting true, false, null and numbers with a fraction or an exponent (JSON's
  /// grammar), each a Kind::Literal whose text() is as written ("true", "1e-05"): the caller reads
  /// the few it needs. For configuration files; a safetensors header never holds them.
  static Json parse_config(std::string_view text);
  /// Compact JSON text ({"a":[1,2]}), non-ASCII characters as UTF-8. JsonError for a string that
  /// is not valid UTF-8.
  std::string dump() const;

  Kind kind() const { return kind_; }
  bool is_object() const { return kind_ == Kind::Object; }
  bool is_array() const { return kind_ == Kind::Array; }
  bool is_string() const { return kind_ == Kind::String; }
  bool is_integer() const { return kind_ == Kind::Integer; }
  bool is_literal() const { return kind_ == Kind::Literal; }
  const Members& members() const { return members_; }
  const std::vector<Json>& items() const { return items_; }
  const std::string& text() const { return text_; }
  int64_t value() const { return integer_; }

 private:
  void dump_to(std::string& out) const;

  Kind kind_ = Kind::Object;
  Members members_;
  std::vector<Json> items_;
  std::string text_;
  int64_t integer_ = 0;
};

/// "object", "array", "string", "integer", "literal": for error messages.
const char* kind_name(Json::Kind kind);

}  // namespace gradformer
