// Checks exercises::attention_head (tutorials/exercises/05_attention_head.cpp, or the reference
// solution) against the library's scaled_dot_product_attention, without a mask, with a causal mask
// and with a padding mask. Prints what it found; exits 1 if a check fails or the file is still the stub.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "autograd/fused_attention.h"
#include "exercises.h"
#include "transformer/model/masks.h"

using namespace gradformer;

using exercises::max_difference;

// The checks; each prints what it found. Returns how many failed.
static int checks() {
  int failed = 0;
  Generator gen(0);
  const int64_t T = 5, d_k = 8, d_v = 3;
  const Tensor q = randn({T, d_k}, gen, DType::Float64), k = randn({T, d_k}, gen, DType::Float64),
               v = randn({T, d_v}, gen, DType::Float64);
  // padding: the last two keys are padding for every query
  const Tensor padding =
      padding_mask(from_vector(std::vector<int64_t>{4, 5, 6, 0, 0}, {1, T}), 0).select(0, 0).expand({T, T});
  const std::pair<std::string, Tensor> masks[] = {
      {"no mask", Tensor()}, {"causal mask", causal_mask(T)}, {"padding mask", padding}};
  for (const auto& [name, mask] : masks) {
    const Tensor mine = exercises::attention_head(q, k, v, mask);
    const Tensor library = scaled_dot_product_attention(Variable(q), Variable(k), Variable(v), mask).output.value();
    const double difference = max_difference(mine, library);
    const bool close = difference < 1e-12;
    std::printf("%-13s: largest difference from the library %.3g: %s\n", name.c_str(), difference,
                close ? "yes" : "NO");
    if (!close) ++failed;
  }
  std::printf(failed == 0 ? "attention head: all checks pass\n" : "attention head: %d check(s) FAILED\n", failed);
  return failed;
}

int main() { return exercises::run_checks("05_attention_head.cpp", 5, checks); }
