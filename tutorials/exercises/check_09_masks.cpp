// Checks exercises::causal_mask and exercises::padding_mask (tutorials/exercises/09_masks.cpp, or the
// reference solution): bool, the right shape, true exactly where the definition says (j <= i; not
// padding), the same as the library's masks, and, combined, the decoder's target mask. Prints what it
// found; exits 1 if a check fails or the file is still the stub.
#include <cstdio>
#include <string>
#include <vector>

#include "exercises.h"
#include "transformer/model/masks.h"

using namespace gradformer;
using exercises::max_difference;

// "" if `mask` is a bool tensor of `shape` holding `expected` (row-major, 1 for true), else what differs.
static std::string difference(const Tensor& mask, const Shape& shape, const std::vector<int64_t>& expected) {
  if (!mask.defined()) return "no tensor";
  if (mask.dtype() != DType::Bool) return "dtype " + std::string(name(mask.dtype())) + ", not bool";
  if (mask.shape() != shape) return "shape " + to_string(mask.shape()) + ", not " + to_string(shape);
  const std::vector<int64_t> values = mask.to(DType::Int64).contiguous().to_vector<int64_t>();
  for (size_t n = 0; n < values.size(); ++n)
    if (values[n] != expected[n]) {
      std::string index;  // n, row-major, as [i, j] or [b, 0, s]
      for (int64_t rest = static_cast<int64_t>(n), d = shape.rank() - 1; d >= 0;
           rest /= shape[static_cast<int>(d)], --d)
        index = std::to_string(rest % shape[static_cast<int>(d)]) + (index.empty() ? "" : ", ") + index;
      return "element [" + index + "] is " + (values[n] ? "true" : "false");
    }
  return "";
}

static bool report(const std::string& what, const std::string& wrong) {
  std::printf("%-48s: %s\n", what.c_str(), wrong.empty() ? "yes" : ("NO, " + wrong).c_str());
  return wrong.empty();
}

static int checks() {
  int failed = 0;
  for (const int64_t T : {1, 2, 6}) {
    std::vector<int64_t> expected;  // by the definition: query i sees key j when j <= i
    for (int64_t i = 0; i < T; ++i)
      for (int64_t j = 0; j < T; ++j) expected.push_back(j <= i ? 1 : 0);
    const Tensor mine = exercises::causal_mask(T);
    std::string wrong = difference(mine, {T, T}, expected);
    if (wrong.empty() && max_difference(mine, causal_mask(T)) != 0) wrong = "differs from the library's causal_mask";
    if (!report("causal mask, T = " + std::to_string(T) + ": j <= i", wrong)) ++failed;
  }

  const std::vector<int64_t> ids = {4, 5, 6, 0, 0, 7, 0, 0, 0, 0, 1, 2, 3, 4, 5};  // three sentences, pad 0
  const Tensor batch = from_vector(ids, {3, 5});
  for (const int64_t pad : {0, 2}) {
    std::vector<int64_t> expected;
    for (const int64_t id : ids) expected.push_back(id != pad ? 1 : 0);
    const Tensor mine = exercises::padding_mask(batch, pad);
    std::string wrong = difference(mine, {3, 1, 5}, expected);
    if (wrong.empty() && max_difference(mine, padding_mask(batch, pad)) != 0)
      wrong = "differs from the library's padding_mask";
    if (!report("padding mask, pad = " + std::to_string(pad) + ": ids != pad", wrong)) ++failed;
  }

  // The decoder's self-attention mask: a key is visible when it is not padding AND not in the future.
  const Tensor combined = logical_and(exercises::padding_mask(batch, 0), exercises::causal_mask(5).unsqueeze(0));
  if (!report("both together: the library's target_mask",
              max_difference(combined, target_mask(batch, 0)) == 0 ? "" : "they differ"))
    ++failed;

  std::printf(failed == 0 ? "masks: all checks pass\n" : "masks: %d check(s) FAILED\n", failed);
  return failed;
}

int main() { return exercises::run_checks("09_masks.cpp", 9, checks); }
