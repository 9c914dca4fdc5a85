// Conversations to fine-tune a language model on, read from the two forms instruction data comes in:
//   messages     one JSON object a line (JSON Lines), {"messages": [{"role": "system" | "user" |
//                "assistant", "content": "..."}, ...]}: a whole conversation, any number of turns
//   instruction  {"instruction": "...", "input": "...", "output": "..."} (Alpaca's form), one a line
//                or all of them in one JSON array: a user's turn (the instruction, then the input
//                after a blank line when there is one) and the assistant's answer
// A line may hold either form. Members the reader does not use (an "id", a "source") are ignored;
// a member it uses that is missing or of the wrong kind refuses the line, naming the file, the line
// (or the array's item) and the member. Blank lines are skipped.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gradformer {

enum class Role { System, User, Assistant };

/// "system", "user", "assistant".
const char* role_name(Role role);

struct Message {
  Role role = Role::User;
  std::string content;
};

/// One conversation: an optional system message first, then turns, at least one of them the
/// assistant's (what fine-tuning learns to say).
struct Conversation {
  std::vector<Message> messages;
  std::string source;  // "chat.jsonl:12" or "chat.json item 3": where it was read, for messages
};

/// The conversations of a file's text; `name` stands for the file in messages. DataError
/// "name:LINE: ..." (JSON Lines) or "name item N: ..." (one JSON array) for the first item refused:
/// not JSON, not an object, "messages" not an array of {"role", "content"} objects, a role other than
/// system, user or assistant, a system message that is not first, no assistant message, content that
/// is not a string, "instruction" or "output" missing or not a string, "input" not a string. A text
/// holding no conversation is a DataError too.
std::vector<Conversation> parse_conversations(std::string_view text, const std::string& name);

/// parse_conversations of the file at `path` (at most 1 GiB, UTF-8; a byte-order mark first is
/// dropped). DataError "path: cannot open ..." for a file that cannot be read.
std::vector<Conversation> read_conversations(const std::string& path);

}  // namespace gradformer
