// Reading the members of a Hugging Face tokenizer.json (parsed by tensor/support/json.h's
// parse_config, which keeps true, false, null and fractions as literals): each reader names what it
// reads ("tokenizer.json: pre_tokenizer.use_regex") in the DataError a wrong value gets.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tensor/support/json.h"

namespace gradformer {

/// The member `name` of a JSON object, or nullptr if it has none (or is not an object).
const Json* json_member(const Json& object, std::string_view name);

/// True for an absent value (nullptr) and for null.
bool json_is_null(const Json* value);

/// The string member `name`. DataError "where.name must be a string" if it is absent or not one.
std::string json_string(const Json& object, std::string_view name, const std::string& where);

/// The true/false member `name`, or `fallback` when it is absent or null; DataError for another value.
bool json_flag(const Json& object, std::string_view name, bool fallback, const std::string& where);

/// The integer member `name`. DataError if it is absent or not an integer.
int64_t json_integer(const Json& object, std::string_view name, const std::string& where);

/// The "type" of a component ("BPE", "ByteLevel"). DataError if it has none.
std::string json_type(const Json& component, const std::string& where);

}  // namespace gradformer
