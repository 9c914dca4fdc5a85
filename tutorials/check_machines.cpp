// check_listings' machines check: a measured number means little without the machine it was measured
// on, and nothing at all beside one measured on another. The first line after every varies block
// says, where the reader sees it, which machine printed it:
//   <sub>Measured on AMD EPYC (Zen 5, AVX-512), 2 cores.</sub>
// and every varies block of a chapter names the same machine, so that the chapter compares nothing
// across two (after a new measurement, `--update-varies` reruns the chapter's blocks on one machine;
// then correct these lines). A block only an optional tool prints ("needs: torch") may name another:
// not every machine has the tool; the prose must not set its timings beside the chapter's.
#include <iostream>
#include <regex>
#include <string>
#include <vector>

#include "check_listings.h"

int check_machines(const std::string& chapter_path, const Lines& md, const std::vector<Block>& blocks) {
  static const std::regex line("<sub>Measured on (.+)\\.</sub>");
  int failures = 0;
  std::string first;  // the chapter's machine: the first block's
  size_t first_at = 0;
  for (const Block& b : blocks) {
    if (b.tag != "varies") continue;
    size_t i = b.close + 1;
    while (i < md.size() && trim(md[i]).empty()) ++i;
    std::smatch m;
    const std::string next = i < md.size() ? trim(md[i]) : "";
    if (!std::regex_match(next, m, line)) {
      ++failures;
      std::cerr << chapter_path << ":" << b.close + 1
                << ": a varies block without the machine under it: its next line must be "
                   "<sub>Measured on MACHINE.</sub>\n";
      continue;
    }
    if (!b.needs.empty() && b.needs != "avx2" && b.needs != "avx512") continue;  // an optional tool's block
    if (first.empty()) {
      first = m[1], first_at = i + 1;
    } else if (m[1] != first) {
      ++failures;
      std::cerr << chapter_path << ":" << i + 1 << ": measured on " << m[1] << ", where line " << first_at
                << " was measured on " << first
                << ": one chapter, one machine (rerun its blocks on one: --update-varies)\n";
    }
  }
  return failures;
}
