// Checks exercises::blocked_transpose (tutorials/exercises/02_blocked_transpose.cpp, or the
// reference solution) against the naive double loop and the library's transpose(0, 1).contiguous(),
// for shapes that are not multiples of the tile and tiles larger than the matrix. Every element must
// be the same, bit for bit (a transpose only moves numbers). Prints what it found; exits 1 if a check
// fails or the file is still the stub.
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "exercises.h"

using namespace gradformer;

// "" if mine and expected hold the same floats, else the first element that differs.
static std::string difference(const std::vector<float>& mine, const std::vector<float>& expected, int64_t rows) {
  for (size_t n = 0; n < expected.size(); ++n)
    if (!(mine[n] == expected[n]))  // a NaN is an element never written
      return "out[" + std::to_string(static_cast<int64_t>(n) / rows) + ", " +
             std::to_string(static_cast<int64_t>(n) % rows) + "] is " + std::to_string(mine[n]) + ", should be " +
             std::to_string(expected[n]);
  return "";
}

static int checks() {
  int failed = 0;
  Generator gen(2);
  const std::pair<int64_t, int64_t> shapes[] = {{1, 1}, {7, 13}, {33, 65}, {64, 64}, {100, 3}};
  for (const auto& [rows, cols] : shapes) {
    const Tensor a = randn({rows, cols}, gen);
    const std::vector<float> values = a.to_vector<float>();
    std::vector<float> naive(values.size());
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j)
        naive[static_cast<size_t>(j * rows + i)] = values[static_cast<size_t>(i * cols + j)];
    const std::vector<float> library = a.transpose(0, 1).contiguous().to_vector<float>();
    for (const int64_t tile : {1, 4, 7, 16, 128}) {
      std::vector<float> mine(values.size(), NAN);
      exercises::blocked_transpose(values.data(), mine.data(), rows, cols, tile);
      std::string wrong = difference(mine, naive, rows);
      if (wrong.empty()) wrong = difference(mine, library, rows);
      std::printf("[%3lld, %3lld], tile %3lld: the naive loop's and the library's transpose: %s\n",
                  static_cast<long long>(rows), static_cast<long long>(cols), static_cast<long long>(tile),
                  wrong.empty() ? "yes" : ("NO, " + wrong).c_str());
      if (!wrong.empty()) ++failed;
    }
  }
  std::printf(failed == 0 ? "blocked transpose: all checks pass\n" : "blocked transpose: %d check(s) FAILED\n", failed);
  return failed;
}

int main() { return exercises::run_checks("02_blocked_transpose.cpp", 2, checks); }
