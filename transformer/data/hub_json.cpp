#include "transformer/data/hub_json.h"

#include "transformer/data/data_error.h"

namespace gradformer {

const Json* json_member(const Json& object, std::string_view name) {
  if (!object.is_object()) return nullptr;
  for (const auto& [key, value] : object.members())
    if (key == name) return &value;
  return nullptr;
}

bool json_is_null(const Json* value) { return value == nullptr || (value->is_literal() && value->text() == "null"); }

std::string json_string(const Json& object, std::string_view name, const std::string& where) {
  const Json* value = json_member(object, name);
  if (value == nullptr || !value->is_string())
    throw DataError(message(where, ".", name, " must be a string, found ",
                            value == nullptr      ? "nothing"
                            : value->is_literal() ? value->text()
                                                  : kind_name(value->kind())));
  return value->text();
}

bool json_flag(const Json& object, std::string_view name, bool fallback, const std::string& where) {
  const Json* value = json_member(object, name);
  if (json_is_null(value)) return fallback;
  if (value->is_literal() && (value->text() == "true" || value->text() == "false")) return value->text() == "true";
  throw DataError(message(where, ".", name, " must be true or false, found ",
                          value->is_literal() ? value->text() : kind_name(value->kind())));
}

int64_t json_integer(const Json& object, std::string_view name, const std::string& where) {
  const Json* value = json_member(object, name);
  if (value == nullptr || !value->is_integer())
    throw DataError(message(where, ".", name, " must be an integer, found ",
                            value == nullptr      ? "nothing"
                            : value->is_literal() ? value->text()
                                                  : kind_name(value->kind())));
  return value->value();
}

std::string json_type(const Json& component, const std::string& where) {
  const Json* type = json_member(component, "type");
  if (type == nullptr || !type->is_string())
    throw DataError(message(where, " has no \"type\" string: ", component.dump().substr(0, 80)));
  return type->text();
}

}  // namespace gradformer
