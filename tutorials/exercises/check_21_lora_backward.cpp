// Checks exercises::lora_backward (tutorials/exercises/21_lora_backward.cpp, or the reference
// solution) in float64: a rank-1 case worked by hand, B = 0 giving A no gradient (how training
// starts), and autograd through the library's LoraAdapter (nn/lora.h) for three shapes and scales.
// Prints what it found; exits 1 if a check fails or the file is still the stub.
#include <cstdio>
#include <tuple>

#include "autograd/all.h"
#include "exercises.h"
#include "nn/lora.h"

using namespace gradformer;
using exercises::max_difference;

static int checks() {
  int failed = 0;
  // By hand: x = [1 2], A = [3 4], B = [5 6]^T, G = [1 -1], scale 2: u = 11, g = G B = -1, so
  // dB = 2 G^T u = [22 -22]^T, dA = 2 g x = [-2 -4], dx = 2 g A = [-6 -8].
  const auto t = [](std::initializer_list<double> v, Shape shape) { return tensor(v, shape, DType::Float64); };
  const exercises::LoraGradients hand =
      exercises::lora_backward(t({1, 2}, {1, 2}), t({3, 4}, {1, 2}), t({5, 6}, {2, 1}), 2, t({1, -1}, {1, 2}));
  const double by_hand =
      std::max({max_difference(hand.dB, t({22, -22}, {2, 1})), max_difference(hand.dA, t({-2, -4}, {1, 2})),
                max_difference(hand.dx, t({-6, -8}, {1, 2}))});
  std::printf("rank 1 by hand: dB [22 -22], dA [-2 -4], dx [-6 -8], within %.1e: %s\n", by_hand,
              by_hand < 1e-12 ? "yes" : "NO");
  failed += by_hand < 1e-12 ? 0 : 1;

  Generator gen(21);
  for (const auto& [N, in, out, r, alpha] :
       {std::tuple<int64_t, int64_t, int64_t, int64_t, double>{3, 4, 5, 2, 2}, {7, 6, 3, 3, 16}, {1, 8, 8, 1, 0.5}}) {
    for (const bool b_zero : {true, false}) {
      LoraAdapter adapter(in, out, r, alpha, gen, DType::Float64);  // B = 0, as training starts
      if (!b_zero) {
        Tensor B = adapter.B.value();
        B.copy_(randn({out, r}, gen, DType::Float64));
      }
      const Variable x(randn({N, in}, gen, DType::Float64), /*requires_grad=*/true);
      const Tensor G = randn({N, out}, gen, DType::Float64);
      sum(adapter.forward(x) * Variable(G)).backward();  // dL/dh = G
      const exercises::LoraGradients mine =
          exercises::lora_backward(x.value(), adapter.A.value(), adapter.B.value(), adapter.scale(), G);
      const double difference =
          std::max({max_difference(mine.dA, adapter.A.grad()), max_difference(mine.dB, adapter.B.grad()),
                    max_difference(mine.dx, x.grad())});
      const bool ok = difference < 1e-12 && (!b_zero || max_difference(mine.dA, zeros({r, in}, DType::Float64)) == 0);
      std::printf("N %lld, in %lld, out %lld, rank %lld, alpha %g, B %s: autograd's dA, dB, dx within %.1e: %s\n",
                  static_cast<long long>(N), static_cast<long long>(in), static_cast<long long>(out),
                  static_cast<long long>(r), alpha, b_zero ? "zero (dA must be 0)" : "random", difference,
                  ok ? "yes" : "NO");
      failed += ok ? 0 : 1;
    }
  }
  std::printf(failed == 0 ? "LoRA backward: all checks pass\n" : "LoRA backward: %d check(s) FAILED\n", failed);
  return failed;
}

int main() { return exercises::run_checks("21_lora_backward.cpp", 21, checks); }
