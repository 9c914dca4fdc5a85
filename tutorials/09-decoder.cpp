// Chapter 9: the decoder. The companion program of tutorials/09-decoder.md: every listing of the
// chapter is a piece of this file, and every output the chapter shows is what this program prints.
// It exits non-zero if a claim does not hold.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>

#include "claims.h"
#include "nn/all.h"
#include "transformer/model/decoder.h"
#include "transformer/model/masks.h"

using namespace gradformer;
using namespace tutorial;

namespace {

double max_abs_diff(const Tensor& a, const Tensor& b) {
  const Tensor d = a - b;
  return std::abs(max(maximum(d, -d)).item());
}

}  // namespace

int main() {
  Generator gen(0);
  Decoder decoder({64, 4, 256, 0.0, NormPlacement::Post, DType::Float64}, 2, gen, std::make_shared<Generator>(0));
  const Variable memory(randn({1, 7, 64}, gen, DType::Float64));
  const Tensor y = randn({1, 6, 64}, gen, DType::Float64);
  Tensor y_changed = y.clone();
  y_changed.select(1, 4).copy_(randn({64}, gen, DType::Float64));  // a different token at position 4

  // With the causal mask, outputs 0..3 cannot see position 4; without it, they can.
  for (bool causal : {true, false}) {
    const Tensor mask = causal ? causal_mask(6) : Tensor();
    const Tensor a = decoder.forward(Variable(y), memory, Tensor(), mask).value();
    const Tensor b = decoder.forward(Variable(y_changed), memory, Tensor(), mask).value();
    const double before = max_abs_diff(a.narrow(1, 0, 4), b.narrow(1, 0, 4));
    std::printf("%-9s change at position 4 moves outputs 0..3 by %.3g\n", causal ? "causal:" : "no mask:", before);
    claim(causal ? before == 0.0 : before > 1e-3,
          causal ? "the causal mask stops the future leaking" : "without it, it leaks");
  }

  // Generating one token at a time: the whole prefix again at every step, or a key/value cache.
  const int64_t steps = 60;
  const Tensor long_y = randn({1, steps, 64}, gen, DType::Float64);
  NoGradGuard no_grad;
  auto t0 = std::chrono::steady_clock::now();
  Tensor last_full;
  for (int64_t t = 1; t <= steps; ++t)
    last_full =
        decoder.forward(Variable(long_y.narrow(1, 0, t)), memory, Tensor(), causal_mask(t)).value().narrow(1, t - 1, 1);
  auto t1 = std::chrono::steady_clock::now();
  DecoderCache cache = decoder.start_cache(memory);
  Tensor last_cached;
  for (int64_t t = 0; t < steps; ++t)
    last_cached = decoder.forward_step(Variable(long_y.narrow(1, t, 1)), Tensor(), cache).value();
  auto t2 = std::chrono::steady_clock::now();
  const double full_ms = 1e3 * std::chrono::duration<double>(t1 - t0).count(),
               cached_ms = 1e3 * std::chrono::duration<double>(t2 - t1).count();
  std::printf("%lld tokens one at a time: whole prefix %.1f ms, with the cache %.1f ms; last outputs differ by %.1g\n",
              static_cast<long long>(steps), full_ms, cached_ms, max_abs_diff(last_full, last_cached));
  claim(max_abs_diff(last_full, last_cached) < 1e-12, "the cache gives the same outputs");
  claim(cached_ms < full_ms, "the cache is faster");
  return failures == 0 ? 0 : 1;
}
