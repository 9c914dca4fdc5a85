// Checks exercises::positional_encoding (tutorials/exercises/07_positional_encoding.cpp, or the
// reference solution) against the library's sinusoidal_encoding for a few sizes. Prints what it
// found; exits 1 if a check fails or the file is still the stub.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "exercises.h"
#include "transformer/model/positional_encoding.h"

using namespace gradformer;

using exercises::max_difference;

// The checks; each prints what it found. Returns how many failed.
static int checks() {
  int failed = 0;
  for (const auto& [max_len, d] : {std::pair<int64_t, int64_t>{3, 2}, {10, 8}, {200, 64}}) {
    const double difference =
        max_difference(exercises::positional_encoding(max_len, d), sinusoidal_encoding(max_len, d, DType::Float64));
    const bool close = difference < 1e-12;
    std::printf("max_len %3lld, d_model %2lld: largest difference from the library %.3g: %s\n",
                static_cast<long long>(max_len), static_cast<long long>(d), difference, close ? "yes" : "NO");
    if (!close) ++failed;
  }
  std::printf(failed == 0 ? "positional encoding: all checks pass\n" : "positional encoding: %d check(s) FAILED\n",
              failed);
  return failed;
}

int main() { return exercises::run_checks("07_positional_encoding.cpp", 7, checks); }
