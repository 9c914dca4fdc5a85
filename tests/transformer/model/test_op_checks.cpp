// Every op recorded anywhere in the library has a gradient check. The ops are found by reading the
// names given to record() in every library folder (tensor/, autograd/, nn/, transformer/*: the scan
// is tests/record_scan.h), and the checks are autograd's table (autograd/op_checks.h) and the
// model's (transformer/model/op_checks.h), the highest layer that records an op. An op recorded in
// transformer/train or transformer/cli would need a table there, and this test moved up with it.
#include <filesystem>
#include <set>

#include "model_helpers.h"
#include "record_scan.h"
#include "transformer/model/op_checks.h"

using namespace gradformer;

namespace {

std::set<std::string> recorded_in(const test::Scan& scan) {
  std::set<std::string> ops;
  for (const auto& [op, where] : scan.ops) ops.insert(op);
  return ops;
}

}  // namespace

TEST_CASE("every op recorded in the library has an entry in autograd_op_checks or model_op_checks") {
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
  for (const OpCheck& c : model_op_checks()) checked.insert(test::op_of(c.name));
  for (const auto& [op, where] : scan.ops) {
    INFO(where << " records '" << op << "', which has no entry \"" << op << "\" or \"" << op
               << " (...)\" in autograd_op_checks() (autograd/op_checks.cpp) or model_op_checks() "
                  "(transformer/model/op_checks.cpp)");
    CHECK(checked.count(op) == 1);
  }
}

TEST_CASE("every entry of model_op_checks names an op recorded in transformer/model, once") {
  const std::filesystem::path root = GRADFORMER_SOURCE_DIR;
  const std::set<std::string> recorded = recorded_in(test::scan_record_calls(root / "transformer" / "model", root));
  std::set<std::string> names;
  for (const OpCheck& c : autograd_op_checks()) names.insert(c.name);
  const std::vector<OpCheck> checks = model_op_checks();
  CHECK(checks.size() == 5);
  for (const OpCheck& c : checks) {
    INFO(c.name);
    CHECK(recorded.count(test::op_of(c.name)) == 1);
    CHECK(names.insert(c.name).second);  // distinct, and not also in autograd's table
  }
}

TEST_CASE("every entry of model_op_checks passes gradcheck") {
  for (const OpCheck& c : model_op_checks()) {
    const GradcheckResult r = gradcheck(c.f, c.inputs);
    INFO(c.name << ": " << r.report);
    CHECK(r.ok);
    CHECK(r.elements_checked > 0);
  }
}
