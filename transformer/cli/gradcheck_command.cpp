// gradformer gradcheck: every op's and layer's gradient checked against central differences, as a table.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "transformer/cli/commands.h"
#include "transformer/cli/flags.h"
#include "transformer/inspect/gradcheck_suite.h"

namespace gradformer {

int gradcheck_command(int argc, char** argv) {
  Flags f("gradcheck",
          "Check the gradient of every differentiable op and layer, up to a whole encoder-decoder with its\n"
          "label-smoothed loss, against float64 central differences (eps 1e-6, atol 1e-5, rtol 1e-3, a random\n"
          "upstream gradient, backward run twice to check accumulation). Prints one row per check and exits\n"
          "with status 1 if any fails.");
  f.add("--filter", "", "only the checks whose name contains this text");
  if (!f.parse(argc, argv)) {
    std::cout << f.help();
    return 0;
  }
  std::vector<NamedGradcheck> checks;
  for (NamedGradcheck& check : gradient_checks())
    if (check.name.find(f.text("--filter")) != std::string::npos) checks.push_back(std::move(check));
  int width = 5;  // the name column fits the longest name
  for (const NamedGradcheck& check : checks) width = std::max(width, static_cast<int>(check.name.size()));
  int failed = 0, ran = 0;
  std::printf("%-*s %-6s %9s %12s %14s %14s\n", width, "check", "result", "elements", "worst score", "analytic",
              "numeric");
  for (const NamedGradcheck& check : checks) {
    const GradcheckResult r = check.run();
    ++ran;
    failed += !r.ok;
    std::printf("%-*s %-6s %9zu %12.2e %14.6e %14.6e\n", width, check.name.c_str(), r.ok ? "ok" : "FAILED",
                r.elements_checked, r.score, r.analytic, r.numeric);
    if (!r.ok) std::printf("  %s\n", r.report.c_str());
  }
  std::printf(
      "%d checks, %d failed   (score = |analytic - numeric| / (atol + rtol |numeric|); a check passes below 1)\n", ran,
      failed);
  return failed ? 1 : 0;
}

}  // namespace gradformer
