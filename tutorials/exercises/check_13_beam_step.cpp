// Checks exercises::beam_step (tutorials/exercises/13_beam_step.cpp, or the reference solution)
// against the library's beam-search step, best_extensions (transformer/model/decoding.h): the first
// step (one live row), a middle step (every row live), a step with dead rows that leaves fewer than
// asked for, and ties. Prints what it found; exits 1 if a check fails or the file is still the stub.
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "exercises.h"

using namespace gradformer;

namespace {

// "" if the two lists agree (same rows and tokens in the same order, log P within 1e-12), else what differs.
std::string difference(const std::vector<BeamCandidate>& mine, const std::vector<BeamCandidate>& library) {
  if (mine.size() != library.size())
    return "returned " + std::to_string(mine.size()) + " candidates, the library " + std::to_string(library.size());
  for (size_t i = 0; i < mine.size(); ++i) {
    const BeamCandidate &a = mine[i], &b = library[i];
    if (a.row != b.row || a.token != b.token || !(std::abs(a.log_prob - b.log_prob) < 1e-12))
      return "candidate " + std::to_string(i) + " is (row " + std::to_string(a.row) + ", token " +
             std::to_string(a.token) + ", log P " + std::to_string(a.log_prob) + "), the library's (row " +
             std::to_string(b.row) + ", token " + std::to_string(b.token) + ", log P " + std::to_string(b.log_prob) +
             ")";
  }
  return "";
}

}  // namespace

// The checks; each prints what it found. Returns how many failed.
static int checks() {
  const double inf = std::numeric_limits<double>::infinity();
  Generator gen(12);
  const int64_t beam = 4, vocab = 10;
  const Tensor logp = log_softmax(Variable(randn({beam, vocab}, gen, DType::Float64)), -1).value();  // [beam, V]
  struct Case {
    std::string name;
    std::vector<double> alive;
    Tensor log_probs;
    int64_t count;
  };
  const Case cases[] = {
      {"first step (row 0 alive)", {0, -inf, -inf, -inf}, logp, 2 * beam},
      {"a middle step", {-1.2, -1.5, -2.0, -3.1}, logp, 2 * beam},
      {"dead rows, fewer left than asked", {-inf, -0.7, -inf, -inf}, logp.narrow(1, 0, 3), 2 * beam},
      {"ties", {0, 0, 0, 0}, zeros({beam, 3}, DType::Float64), 5},
  };
  int failed = 0;
  for (const Case& c : cases) {
    const std::string differs =
        difference(exercises::beam_step(c.alive, c.log_probs, c.count), best_extensions(c.alive, c.log_probs, c.count));
    std::printf("%-34s: same as the library's: %s\n", c.name.c_str(),
                differs.empty() ? "yes" : ("NO, " + differs).c_str());
    if (!differs.empty()) ++failed;
  }
  std::printf(failed == 0 ? "beam step: all checks pass\n" : "beam step: %d check(s) FAILED\n", failed);
  return failed;
}

int main() { return exercises::run_checks("13_beam_step.cpp", 12, checks); }
