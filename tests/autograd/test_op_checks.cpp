// The table of gradient checks (autograd/op_checks.h): every entry passes and names an op autograd
// records. The ops are found by reading the names given to record() in autograd's own sources
// (GRADFORMER_SOURCE_DIR, set by tests/autograd/CMakeLists.txt; the scan: tests/record_scan.h).
// And every op recorded anywhere in the library (every library folder scanned) has a check here:
// the fused ops, attention's included, all live in autograd/.
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

namespace {

std::set<std::string> recorded_in(const test::Scan& scan) {
  std::set<std::string> ops;
  for (const auto& [op, where] : scan.ops) ops.insert(op);
  return ops;
}

}  // namespace

TEST_CASE("every op recorded anywhere in the library has an entry in autograd_op_checks") {
  const std::filesystem::path root = GRADFORMER_SOURCE_DIR;
  REQUIRE(std::filesystem::is_directory(root / "transformer" / "model"));
  const test::Scan scan = test::scan_library(root);
  for (const std::string& call : scan.unreadable) {
    INFO("cannot tell the op name of " << call << ": name the op with a string literal or a const char* op = \"...\"");
    CHECK(false);
  }
  // The scan must see both ways of naming an op, in autograd and beyond, or it could pass by
  // finding nothing.
  const std::set<std::string> recorded = recorded_in(scan);
  for (const char* op :
       {"add", "matmul", "concat", "softmax", "layer_norm", "cross_entropy", "scaled_dot_product_attention"}) {
    INFO("the scan did not find " << op);
    REQUIRE(recorded.count(op) == 1);
  }
  std::set<std::string> checked;
  for (const OpCheck& c : autograd_op_checks()) checked.insert(test::op_of(c.name));
  for (const auto& [op, where] : scan.ops) {
    INFO(where << " records '" << op << "', which has no entry \"" << op << "\" or \"" << op
               << " (...)\" in autograd_op_checks() (autograd/op_checks.cpp)");
    CHECK(checked.count(op) == 1);
  }
}
