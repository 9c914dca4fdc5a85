// Every entry of gradient_checks() (transformer/inspect/gradcheck_suite.h) -- every differentiable op, every
// layer and whole encoder-decoders -- passes its float64 central-difference check. The list is run
// in four parts so each ctest test stays short under the sanitizers.
#include <algorithm>
#include <string>

#include "autograd/op_checks.h"
#include "catch.h"
#include "transformer/inspect/gradcheck_suite.h"

using namespace gradformer;

namespace {

void run_part(size_t part, size_t parts) {
  const std::vector<NamedGradcheck> checks = gradient_checks();
  REQUIRE(checks.size() >= 40);  // the ops, the layers and the two whole models
  const size_t begin = part * checks.size() / parts, end = (part + 1) * checks.size() / parts;
  for (size_t i = begin; i < end; ++i) {
    const GradcheckResult r = checks[i].run();
    INFO("check " << i << ": " << checks[i].name << ": " << r.report);
    CHECK(r.ok);
    CHECK(r.elements_checked > 0);
    CHECK(r.score <= 1);
  }
}

}  // namespace

TEST_CASE("gradient_checks: every name is distinct and the layers and whole models are in the list") {
  const std::vector<NamedGradcheck> checks = gradient_checks();
  std::vector<std::string> names;
  for (const NamedGradcheck& c : checks) names.push_back(c.name);
  std::sort(names.begin(), names.end());
  CHECK(std::adjacent_find(names.begin(), names.end()) == names.end());
  for (const char* expected :
       {"Linear", "LayerNorm", "multi-head attention (padding mask)", "encoder layer (post-LN)",
        "encoder layer (pre-LN)", "decoder layer (post-LN)", "decoder layer (pre-LN)",
        "encoder-decoder + label-smoothed loss (post-LN)", "encoder-decoder + label-smoothed loss (pre-LN)"}) {
    INFO(expected);
    CHECK(std::find(names.begin(), names.end(), expected) != names.end());
  }
  for (const OpCheck& op : autograd_op_checks()) {  // every op, the fused attention's cases too
    INFO(op.name);
    CHECK(std::find(names.begin(), names.end(), op.name) != names.end());
  }
}

TEST_CASE("gradient_checks: part 1 of 4 passes") { run_part(0, 4); }
TEST_CASE("gradient_checks: part 2 of 4 passes") { run_part(1, 4); }
TEST_CASE("gradient_checks: part 3 of 4 passes") { run_part(2, 4); }
TEST_CASE("gradient_checks: part 4 of 4 passes") { run_part(3, 4); }

TEST_CASE("gradient_checks: a check gives the same result run twice and run alone") {
  // Each entry builds its inputs from fixed seeds when it runs, so its result does not depend on
  // which entries ran before it (gradformer gradcheck --filter runs a subset).
  const std::vector<NamedGradcheck> all = gradient_checks();
  for (const NamedGradcheck& c : all) {
    if (c.name != "Linear" && c.name != "multi-head attention (padding mask)") continue;
    INFO(c.name);
    const GradcheckResult a = c.run();
    const GradcheckResult b = gradient_checks()[static_cast<size_t>(&c - all.data())].run();
    CHECK(a.analytic == b.analytic);
    CHECK(a.numeric == b.numeric);
    CHECK(a.score == b.score);
  }
}
