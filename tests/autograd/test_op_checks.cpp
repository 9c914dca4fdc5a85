// The table of gradient checks (autograd/op_checks.h): every entry passes, and every op autograd
// records has an entry. The ops are found by reading the names given to record() in autograd's
// own sources (GRADFORMER_AUTOGRAD_DIR, set by tests/autograd/CMakeLists.txt), so an op added
// without a gradient check fails here, as ggml's static_assert on its op count fails a build.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "helpers.h"

using namespace gradformer;

namespace {

// The source with its comments blanked out (node.h's comment shows a record("mul", ...) example),
// keeping string literals and newlines (for line numbers) as they are.
std::string without_comments(const std::string& s) {
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

// Every call record(name, ...) in the .h and .cpp files under dir. The name is a string literal or
// a `const char* op = "..."` defined earlier in the same file; anything else is reported unreadable,
// so a new way of naming an op cannot slip past the check.
Scan scan_record_calls(const std::filesystem::path& dir) {
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
      const std::string where =
          entry.path().filename().string() + ":" + std::to_string(std::count(before.begin(), before.end(), '\n') + 1);
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

// "mul (broadcast)" -> "mul"
std::string op_of(const std::string& entry_name) { return entry_name.substr(0, entry_name.find(" (")); }

std::set<std::string> table_ops() {
  std::set<std::string> ops;
  for (const OpCheck& c : autograd_op_checks()) ops.insert(op_of(c.name));
  return ops;
}

}  // namespace

TEST_CASE("the scan of record() calls reads literal names and named constants, and not comments") {
  const std::string source =
      "// record(\"commented\", y, {x}, f);\n"
      "/* record(\"blocked\", y, {x}, f); */\n"
      "Variable a(const Variable& x) { return record(\"a\", x.value(), {x}, f); }\n"
      "Variable b(const Variable& x) {\n  const char* op = \"b\";\n  return record(op, x.value(), {x}, f);\n}\n"
      "Variable c(const Variable& x) { return record(name_of(x), x.value(), {x}, f); }\n";
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "gradformer_test_op_checks_scan";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "ops.cpp") << source;
  const Scan scan = scan_record_calls(dir);
  std::filesystem::remove_all(dir);
  CHECK(scan.ops == std::vector<std::pair<std::string, std::string>>{{"a", "ops.cpp:3"}, {"b", "ops.cpp:6"}});
  CHECK(scan.unreadable == std::vector<std::string>{"ops.cpp:8: record(name_of(x), ...)"});
}

TEST_CASE("every op recorded in autograd's sources has an entry in autograd_op_checks") {
  const std::filesystem::path dir = GRADFORMER_AUTOGRAD_DIR;
  REQUIRE(std::filesystem::is_directory(dir));
  const Scan scan = scan_record_calls(dir);
  for (const std::string& call : scan.unreadable) {
    INFO("cannot tell the op name of " << call << ": name the op with a string literal or a const char* op = \"...\"");
    CHECK(false);
  }
  // The scan must see both ways of naming an op, or it could pass by finding nothing.
  std::set<std::string> recorded;
  for (const auto& [op, where] : scan.ops) recorded.insert(op);
  for (const char* op : {"add", "matmul", "concat", "softmax", "layer_norm", "cross_entropy"}) {
    INFO("the scan did not find " << op);
    REQUIRE(recorded.count(op) == 1);
  }
  const std::set<std::string> checked = table_ops();
  for (const auto& [op, where] : scan.ops) {
    INFO(where << " records '" << op << "', which has no entry \"" << op << "\" or \"" << op
               << " (...)\" in autograd_op_checks()");
    CHECK(checked.count(op) == 1);
  }
}

TEST_CASE("every entry of autograd_op_checks names a recorded op, and names are distinct") {
  const Scan scan = scan_record_calls(GRADFORMER_AUTOGRAD_DIR);
  std::set<std::string> recorded;
  for (const auto& [op, where] : scan.ops) recorded.insert(op);
  std::set<std::string> names;
  for (const OpCheck& c : autograd_op_checks()) {
    INFO(c.name);
    CHECK(recorded.count(op_of(c.name)) == 1);
    CHECK(names.insert(c.name).second);
  }
}

TEST_CASE("every entry of autograd_op_checks passes gradcheck") {
  for (const OpCheck& c : autograd_op_checks()) {
    const GradcheckResult r = gradcheck(c.f, c.inputs);
    INFO(c.name << ": " << r.report);
    CHECK(r.ok);
    CHECK(r.elements_checked > 0);
  }
}
