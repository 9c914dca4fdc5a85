#include <filesystem>
#include <fstream>

#include "catch.h"
#include "transformer/data/conversations.h"
#include "transformer/data/data_error.h"

using namespace gradformer;

namespace {

std::vector<Conversation> parse(const std::string& text) { return parse_conversations(text, "chat.jsonl"); }

/// The roles and contents of a conversation as "role: content" lines, to compare at a glance.
std::vector<std::string> lines_of(const Conversation& c) {
  std::vector<std::string> out;
  for (const Message& m : c.messages) out.push_back(std::string(role_name(m.role)) + ": " + m.content);
  return out;
}

}  // namespace

TEST_CASE("conversations: the messages form, one a line, members it does not use ignored") {
  const auto all =
      parse(R"({"id": 7, "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "2+2?"},)"
            R"( {"role": "assistant", "content": "4", "weight": 1}]})"
            "\n\n"  // a blank line is skipped
            R"({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello\nthere"},)"
            R"( {"role": "user", "content": "bye"}, {"role": "assistant", "content": ""}]})"
            "\n");
  REQUIRE(all.size() == 2);
  CHECK(lines_of(all[0]) == std::vector<std::string>{"system: Be brief.", "user: 2+2?", "assistant: 4"});
  CHECK(lines_of(all[1]) ==
        std::vector<std::string>{"user: hi", "assistant: hello\nthere", "user: bye", "assistant: "});
  CHECK(all[0].source == "chat.jsonl:1");
  CHECK(all[1].source == "chat.jsonl:3");
}

TEST_CASE("conversations: the instruction form, as lines or as one JSON array") {
  const std::string with_input = R"({"instruction": "Reverse the words.", "input": "a b c", "output": "c b a"})";
  const std::string without = R"({"instruction": "Say hi.", "input": "", "output": "hi"})";
  const std::string no_input_member = R"({"instruction": "Count to 2.", "output": "1 2"})";
  const auto lines = parse(with_input + "\r\n" + without + "\n" + no_input_member);
  REQUIRE(lines.size() == 3);
  // The input follows the instruction after a blank line; an empty or absent input adds nothing.
  CHECK(lines_of(lines[0]) == std::vector<std::string>{"user: Reverse the words.\n\na b c", "assistant: c b a"});
  CHECK(lines_of(lines[1]) == std::vector<std::string>{"user: Say hi.", "assistant: hi"});
  CHECK(lines_of(lines[2]) == std::vector<std::string>{"user: Count to 2.", "assistant: 1 2"});
  const auto array = parse_conversations("\xEF\xBB\xBF  [" + with_input + ",\n" + without + "]\n", "alpaca.json");
  REQUIRE(array.size() == 2);
  CHECK(lines_of(array[0]) == lines_of(lines[0]));
  CHECK(lines_of(array[1]) == lines_of(lines[1]));
  CHECK(array[1].source == "alpaca.json item 2");
}

TEST_CASE("conversations: a line that is wrong is refused, naming the file, the line and the member") {
  const std::string ok = R"({"instruction": "a", "output": "b"})";
  auto refused = [&](const std::string& bad) {
    try {
      parse(ok + "\n" + bad + "\n");
    } catch (const DataError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  CHECK(refused("{\"messages\": [}").rfind("chat.jsonl:2: not JSON: ", 0) == 0);
  CHECK(refused("[1]") == "chat.jsonl:2: expected an object with \"messages\" or \"instruction\", got array");
  CHECK(refused("{\"text\": \"x\"}") ==
        "chat.jsonl:2: neither \"messages\" nor \"instruction\" and \"output\": not a conversation");
  CHECK(refused("{\"messages\": []}") ==
        "chat.jsonl:2: \"messages\" must be a non-empty array of {\"role\", \"content\"} objects");
  CHECK(refused(R"({"messages": ["hi"]})") ==
        "chat.jsonl:2: message 1 must be an object {\"role\", \"content\"}, got string");
  CHECK(refused(R"({"messages": [{"role": "bot", "content": "x"}]})") ==
        "chat.jsonl:2: message 1: \"role\" must be system, user or assistant, got \"bot\"");
  CHECK(refused(R"({"messages": [{"content": "x"}]})") == "chat.jsonl:2: message 1: \"role\" is missing");
  CHECK(refused(R"({"messages": [{"role": "user", "content": "x"}, {"role": "system", "content": "y"}]})") ==
        "chat.jsonl:2: message 2: a system message must come first");
  CHECK(refused(R"({"messages": [{"role": "user", "content": "x"}]})") ==
        "chat.jsonl:2: no assistant message: nothing to learn to answer");
  CHECK(refused(R"({"messages": [{"role": "assistant", "content": [{"type": "text"}]}]})") ==
        "chat.jsonl:2: message 1: \"content\" must be a string, got array");
  CHECK(refused(R"({"instruction": "a", "output": null})") == "chat.jsonl:2: \"output\" must be a string, got null");
  CHECK(refused(R"({"output": "b"})") == "chat.jsonl:2: \"instruction\" is missing");
  CHECK(refused(R"({"instruction": "a", "input": 3, "output": "b"})") ==
        "chat.jsonl:2: \"input\" must be a string, got integer");
  CHECK(refused("\xE9t\xE9").rfind("chat.jsonl:2: not valid UTF-8", 0) == 0);
  CHECK_THROWS_MSG(parse_conversations("[" + ok + ", 3]", "a.json"), DataError,
                   "a.json item 2: expected an object with \"messages\" or \"instruction\", got integer");
  CHECK_THROWS_MSG(parse(" \n\n"), DataError, "chat.jsonl: no conversation in it");
  CHECK_THROWS_MSG(parse_conversations("[]", "a.json"), DataError, "a.json: no conversation in it");
}

TEST_CASE("conversations: read from a file, and a file that cannot be read is a DataError naming it") {
  const std::filesystem::path path = std::filesystem::temp_directory_path() / "gradformer_conversations.jsonl";
  std::ofstream(path) << R"({"instruction": "a", "output": "b"})"
                      << "\n";
  const auto all = read_conversations(path.string());
  REQUIRE(all.size() == 1);
  CHECK(all[0].source == path.string() + ":1");
  std::filesystem::remove(path);
  CHECK_THROWS_AS(read_conversations(path.string()), DataError);
}
