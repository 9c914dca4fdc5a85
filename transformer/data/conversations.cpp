#include "transformer/data/conversations.h"

#include <sstream>

#include "tensor/support/json.h"
#include "transformer/data/data_error.h"
#include "transformer/data/line_reader.h"

namespace gradformer {

namespace {

/// What a JSON value is, for a message: its kind, or a literal as written (true, null, 1.5).
std::string describe(const Json& value) {
  return value.is_literal() ? value.text() : std::string(kind_name(value.kind()));
}

/// The member `key` of an object, or null.
const Json* member(const Json& object, std::string_view key) {
  for (const auto& [name, value] : object.members())
    if (name == key) return &value;
  return nullptr;
}

/// The string member `key`: "" when it is absent and optional; DataError "WHERE: KEY ..." otherwise.
std::string string_member(const Json& object, std::string_view key, bool required, const std::string& where) {
  const Json* value = member(object, key);
  if (!value) {
    if (!required) return "";
    throw DataError(message(where, ": \"", key, "\" is missing"));
  }
  if (!value->is_string()) throw DataError(message(where, ": \"", key, "\" must be a string, got ", describe(*value)));
  return value->text();
}

Role role_of(const std::string& name, const std::string& where) {
  if (name == "system") return Role::System;
  if (name == "user") return Role::User;
  if (name == "assistant") return Role::Assistant;
  throw DataError(message(where, ": \"role\" must be system, user or assistant, got \"", name, "\""));
}

/// {"messages": [...]}: each message's role and content, a system message only first, and at least
/// one assistant message.
std::vector<Message> messages_of(const Json& list, const std::string& where) {
  if (!list.is_array() || list.items().empty())
    throw DataError(message(where, ": \"messages\" must be a non-empty array of {\"role\", \"content\"} objects"));
  std::vector<Message> messages;
  bool answered = false;
  for (size_t i = 0; i < list.items().size(); ++i) {
    const Json& item = list.items()[i];
    const std::string at = message(where, ": message ", i + 1);
    if (!item.is_object())
      throw DataError(message(at, " must be an object {\"role\", \"content\"}, got ", describe(item)));
    const Role role = role_of(string_member(item, "role", true, at), at);
    if (role == Role::System && i != 0) throw DataError(message(at, ": a system message must come first"));
    answered = answered || role == Role::Assistant;
    messages.push_back({role, string_member(item, "content", true, at)});
  }
  if (!answered) throw DataError(message(where, ": no assistant message: nothing to learn to answer"));
  return messages;
}

/// {"instruction", "input", "output"}: the user's turn (instruction, a blank line, the input) and
/// the assistant's answer.
std::vector<Message> instruction_messages(const Json& object, const std::string& where) {
  std::string user = string_member(object, "instruction", true, where);
  const std::string input = string_member(object, "input", false, where);
  if (!input.empty()) user += "\n\n" + input;
  return {{Role::User, std::move(user)}, {Role::Assistant, string_member(object, "output", true, where)}};
}

Conversation conversation_of(const Json& value, const std::string& where) {
  if (!value.is_object())
    throw DataError(message(where, ": expected an object with \"messages\" or \"instruction\", got ", describe(value)));
  if (const Json* list = member(value, "messages")) return {messages_of(*list, where), where};
  if (member(value, "instruction") || member(value, "output")) return {instruction_messages(value, where), where};
  throw DataError(message(where, ": neither \"messages\" nor \"instruction\" and \"output\": not a conversation"));
}

Json parse_json(std::string_view text, const std::string& where) {
  try {
    return Json::parse_config(text);
  } catch (const JsonError& e) {
    throw DataError(message(where, ": not JSON: ", e.what()));
  }
}

}  // namespace

const char* role_name(Role role) {
  switch (role) {
    case Role::System:
      return "system";
    case Role::User:
      return "user";
    case Role::Assistant:
      return "assistant";
  }
  return "?";
}

std::vector<Conversation> parse_conversations(std::string_view text, const std::string& name) {
  if (text.starts_with(kByteOrderMark)) text.remove_prefix(kByteOrderMark.size());
  std::vector<Conversation> conversations;
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '[') {  // one JSON array of conversations
    if (const auto problem = utf8_problem(text)) throw DataError(message(name, ": ", *problem));
    const Json array = parse_json(text, name);
    for (size_t i = 0; i < array.items().size(); ++i)
      conversations.push_back(conversation_of(array.items()[i], message(name, " item ", i + 1)));
  } else {  // JSON Lines
    std::istringstream in{std::string(text)};
    LineReader lines(in, name);
    for (std::string line; lines.next(line);) {
      if (line.find_first_not_of(" \t") == std::string::npos) continue;
      const std::string where = message(name, ":", lines.line_number());
      conversations.push_back(conversation_of(parse_json(line, where), where));
    }
  }
  if (conversations.empty()) throw DataError(message(name, ": no conversation in it"));
  return conversations;
}

std::vector<Conversation> read_conversations(const std::string& path) {
  return parse_conversations(read_whole_file(path, kMaxTextBytes, "a file of conversations"), path);
}

}  // namespace gradformer
