// The table of gradient checks (autograd/op_checks.h): every entry passes and names an op autograd
// records. The ops are found by reading the names given to record() in autograd's own sources
// (GRADFORMER_SOURCE_DIR, set by tests/autograd/CMakeLists.txt; the scan: tests/record_scan.h).
// That every op recorded anywhere in the library has a check is test_model's test, which sees
// this table and the model's (tests/transformer/model/test_op_checks.cpp).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "helpers.h"
#include "record_scan.h"

using namespace gradformer;
using test::op_of;
using test::Scan;
using test::scan_record_calls;

TEST_CASE("the scan of record() calls reads literal names and named constants, and not comments") {
  const std::string source =
      "// record(\"commented\", y, {x}, f);\n"
      "/* record(\"blocked\", y, {x}, f); */\n"
      "Variable a(const Variable& x) { return record(\"a\", x.value(), {x}, f); }\n"
      "Variable b(const Variable& x) {\n  const char* op = \"b\";\n  return record(op, x.value(), {x}, f);\n}\n"
      "Variable c(const Variable& x) { return record(name_of(x), x.value(), {x}, f); }\n";
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "gradformer_test_op_checks_scan";
  std::filesystem::create_directories(dir / "sub");
  std::ofstream(dir / "ops.cpp") << source;
  std::ofstream(dir / "sub" / "more.h")
      << "Variable d(const Variable& x) { return record(\"d\", x.value(), {x}, f); }\n";
  Scan scan = scan_record_calls(dir);
  std::sort(scan.ops.begin(), scan.ops.end());  // the directory's order is the file system's
  const Scan from_parent = scan_record_calls(dir / "sub", dir.parent_path());
  std::filesystem::remove_all(dir);
  CHECK(scan.ops == std::vector<std::pair<std::string, std::string>>{
                        {"a", "ops.cpp:3"}, {"b", "ops.cpp:6"}, {"d", "sub/more.h:1"}});
  CHECK(scan.unreadable == std::vector<std::string>{"ops.cpp:8: record(name_of(x), ...)"});
  // named by their path from the base given
  CHECK(from_parent.ops ==
        std::vector<std::pair<std::string, std::string>>{{"d", "gradformer_test_op_checks_scan/sub/more.h:1"}});
}

TEST_CASE("every entry of autograd_op_checks names an op recorded in autograd, and names are distinct") {
  const Scan scan = scan_record_calls(std::filesystem::path(GRADFORMER_SOURCE_DIR) / "autograd");
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
