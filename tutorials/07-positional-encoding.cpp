// Chapter 7: positional encoding. The companion program of tutorials/07-positional-encoding.md:
// every listing of the chapter is a piece of this file, and every output the chapter shows is what
// this program prints. It exits non-zero if a claim does not hold.
#include <cmath>
#include <cstdio>
#include <iostream>

#include "nn/all.h"
#include "transformer/model/positional_encoding.h"
#include "claims.h"

using namespace gradformer;
using namespace tutorial;

namespace {

double max_abs_diff(const Tensor& a, const Tensor& b) {
  const Tensor d = a - b;
  return std::abs(max(maximum(d, -d)).item());
}

}  // namespace

int main() {
  const int64_t d = 64, max_len = 200;
  const Tensor pe = sinusoidal_encoding(max_len, d, DType::Float64);  // [max_len, d]
  std::printf("PE(1, 0..3) = %.4f %.4f %.4f %.4f\n", pe.at({1, 0}), pe.at({1, 1}), pe.at({1, 2}), pe.at({1, 3}));
  // PE(pos + k) = R_k PE(pos) for every pos, with one fixed rotation R_k per offset k
  for (int64_t k : {1, 10, 100}) {
    const Tensor R = positional_rotation(k, d);
    const Tensor rotated = matmul(pe.narrow(0, 0, max_len - k), R.transpose(0, 1));  // every PE(pos), rotated
    const double error = max_abs_diff(rotated, pe.narrow(0, k, max_len - k));
    std::printf("k = %3lld: max |R_k PE(pos) - PE(pos + k)| over all pos = %.1e\n", static_cast<long long>(k), error);
    claim(error < 1e-12, "PE(pos + k) is a fixed rotation of PE(pos)");
  }
  // A consequence: PE(pos) . PE(pos + k) depends on k only.
  const double a = sum(pe.select(0, 3) * pe.select(0, 8)).item(), b = sum(pe.select(0, 120) * pe.select(0, 125)).item();
  std::printf("PE(3) . PE(8) = %.6f   PE(120) . PE(125) = %.6f\n", a, b);
  claim(std::abs(a - b) < 1e-9, "the dot product depends only on the offset");
  return failures == 0 ? 0 : 1;
}
