// Reading the names given to record() (autograd/node.h) in sources: the tests that tie every
// recorded op to a gradient check (tests/autograd/test_op_checks.cpp for autograd's table,
// tests/transformer/model/test_op_checks.cpp for every library folder) share this scan.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace test {

// The source with its comments blanked out (node.h's comment shows a record("mul", ...) example),
// keeping string literals and newlines (for line numbers) as they are.
inline std::string without_comments(const std::string& s) {
  std::string out = s;
  enum { Code, String, Line, Block } state = Code;
  for (size_t i = 0; i < s.size(); ++i) {
    const char c = s[i], next = i + 1 < s.size() ? s[i + 1] : '\0';
    if (state == Code) {
      if (c == '"')
        state = String;
      else if (c == '/' && next == '/')
        state = Line;
      else if (c == '/' && next == '*')
        state = Block;
    } else if (state == String) {
      if (c == '\\')
        ++i;
      else if (c == '"')
        state = Code;
    } else if (state == Line && c == '\n') {
      state = Code;
    } else if (state == Block && c == '*' && next == '/') {
      out[i] = out[i + 1] = ' ';
      ++i;
      state = Code;
      continue;
    }
    if ((state == Line || state == Block) && c != '\n') out[i] = ' ';
  }
  return out;
}

struct Scan {
  std::vector<std::pair<std::string, std::string>> ops;  // (op name, "file:line")
  std::vector<std::string> unreadable;                   // calls whose op name the scan cannot tell
};

// Every call record(name, ...) in the .h and .cpp files under dir (its subfolders too), each file
// named by its path from `base` (dir itself when not given). The name is a string literal or a
// `const char* op = "..."` defined earlier in the same file; anything else is reported unreadable,
// so a new way of naming an op cannot slip past the check.
inline Scan scan_record_calls(const std::filesystem::path& dir, std::filesystem::path base = {}) {
  if (base.empty()) base = dir;
  Scan scan;
  const std::regex call(R"(\brecord\s*\(\s*([^,]*))");
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    const std::string ext = entry.path().extension().string();
    if (ext != ".cpp" && ext != ".h") continue;
    std::ifstream file(entry.path());
    std::stringstream buffer;
    buffer << file.rdbuf();
    const std::string text = without_comments(buffer.str());
    for (auto it = std::sregex_iterator(text.begin(), text.end(), call); it != std::sregex_iterator(); ++it) {
      std::string arg = (*it)[1].str();
      arg.erase(arg.find_last_not_of(" \t\n") + 1);
      const std::string before = text.substr(0, static_cast<size_t>(it->position()));
      const std::string where = std::filesystem::relative(entry.path(), base).generic_string() + ":" +
                                std::to_string(std::count(before.begin(), before.end(), '\n') + 1);
      if (arg.starts_with("const char")) continue;  // record's own declaration in node.h
      std::smatch name;
      if (std::regex_match(arg, name, std::regex(R"(\"([^"]+)\"\s*)"))) {
        scan.ops.emplace_back(name[1].str(), where);
        continue;
      }
      std::string found;  // the last definition of the constant before the call
      if (std::regex_match(arg, std::regex(R"([A-Za-z_]\w*)"))) {
        const std::regex definition(R"(\bconst\s+char\s*\*\s*)" + arg + R"(\s*=\s*\"([^"]+)\")");
        for (auto d = std::sregex_iterator(before.begin(), before.end(), definition); d != std::sregex_iterator(); ++d)
          found = (*d)[1].str();
      }
      if (!found.empty())
        scan.ops.emplace_back(found, where);
      else
        scan.unreadable.push_back(where + ": record(" + arg + ", ...)");
    }
  }
  return scan;
}

// Every record() call in the library: tensor/, autograd/, nn/ and transformer/ with all its folders,
// each file named by its path from the project root.
inline Scan scan_library(const std::filesystem::path& root) {
  Scan all;
  for (const char* folder : {"tensor", "autograd", "nn", "transformer"}) {
    Scan one = scan_record_calls(root / folder, root);
    all.ops.insert(all.ops.end(), one.ops.begin(), one.ops.end());
    all.unreadable.insert(all.unreadable.end(), one.unreadable.begin(), one.unreadable.end());
  }
  return all;
}

// "mul (broadcast)" -> "mul"
inline std::string op_of(const std::string& entry_name) { return entry_name.substr(0, entry_name.find(" (")); }

}  // namespace test
