#include <cmath>

#include "catch.h"
#include "tensor/all.h"
#include "tensor/kernels/dropout_kernel.h"

using namespace gradformer;

TEST_CASE("the generator reproduces PCG32's reference sequence") {
  // pcg32_srandom(42, 54) in the PCG reference implementation (pcg-c-basic's demo) prints these.
  Generator gen(42, 54);
  const uint32_t expected[] = {0xa15c02b7, 0x7b47f409, 0xba1d3330, 0x83d2f293, 0xbfa4784b, 0xcbed606e};
  for (uint32_t e : expected) CHECK(gen.next_u32() == e);
}

TEST_CASE("the same seed gives the same tensors, another seed other tensors") {
  Generator a(123), b(123), c(124);
  const std::vector<float> first = randn({64}, a).to_vector<float>();
  CHECK(randn({64}, b).to_vector<float>() == first);
  CHECK(randn({64}, c).to_vector<float>() != first);
  CHECK(randn({64}, a).to_vector<float>() != first);  // the generator moved on
}

TEST_CASE("saving and restoring the state replays the sequence exactly") {
  Generator gen(5);
  (void)uniform({10}, 0, 1, gen);
  const auto saved = gen.state();
  const std::vector<double> next = uniform({10}, 0, 1, gen, DType::Float64).to_vector<double>();
  Generator other(999);
  other.set_state(saved);
  CHECK(uniform({10}, 0, 1, other, DType::Float64).to_vector<double>() == next);
}

TEST_CASE("uniform and normal numbers have the right moments") {
  // 200,000 draws: the standard error of the mean is about 0.0006 (uniform) and 0.0022 (normal).
  Generator gen(2024);
  const Tensor u = uniform({200000}, 0, 1, gen, DType::Float64);
  CHECK(mean(u).item() == Approx(0.5).margin(0.003));
  CHECK(var(u).item() == Approx(1.0 / 12).margin(0.001));
  CHECK(min(u).item() >= 0.0);
  CHECK(max(u).item() < 1.0);
  const Tensor n = randn({200000}, gen, DType::Float64);
  CHECK(mean(n).item() == Approx(0.0).margin(0.01));
  CHECK(var(n).item() == Approx(1.0).margin(0.01));
  const Tensor scaled = normal({200000}, 3.0, 2.0, gen, DType::Float64);
  CHECK(mean(scaled).item() == Approx(3.0).margin(0.02));
  CHECK(var(scaled).item() == Approx(4.0).margin(0.05));
  const Tensor w = uniform({1000}, -0.5, 0.5, gen);
  CHECK(min(w).item() >= -0.5);
  CHECK(max(w).item() < 0.5);
}

TEST_CASE("randint covers lo to hi-1 evenly") {
  Generator gen(3);
  const Tensor t = randint({60000}, 1, 4, gen);
  CHECK(t.dtype() == DType::Int64);
  for (int64_t v = 1; v < 4; ++v) {
    const double share = sum(eq(t, full({1}, static_cast<double>(v), DType::Int64)).to(DType::Int64)).item() / 60000.0;
    CHECK(share == Approx(1.0 / 3).margin(0.01));
  }
  CHECK(min(t).item() == 1);
  CHECK(max(t).item() == 3);
}

TEST_CASE("bad random arguments are ValueErrors") {
  Generator gen;
  CHECK_THROWS_MSG(randint({2}, 3, 3, gen), ValueError, "randint: empty range [3, 3)");
  CHECK_THROWS_MSG(uniform({2}, 1, 0, gen), ValueError, "uniform: lower bound 1 is above upper bound 0");
  CHECK_THROWS_MSG(normal({2}, 0, -1, gen), ValueError, "normal: standard deviation must be >= 0, got -1");
  CHECK_THROWS_MSG(randn({2}, gen, DType::Int64), DTypeError, "randn: expected a floating dtype");
}

// The mask of dropping ones: the factors alone.
static Tensor dropout_factors(const Shape& shape, double p, Generator& gen) {
  return apply_dropout(ones(shape), p, gen).output;
}

TEST_CASE("dropout keeps 1 - p of the elements scaled by 1/(1-p), the same for any thread count") {
  Generator a(77);
  set_num_threads(1);
  const Tensor one = dropout_factors({300, 200}, 0.25, a);
  Generator b(77);
  set_num_threads(2);
  const Tensor two = dropout_factors({300, 200}, 0.25, b);
  CHECK(one.to_vector<float>() == two.to_vector<float>());
  const double kept = sum(ne(one, zeros({1})).to(DType::Float64)).item() / 60000.0;
  CHECK(kept == Approx(0.75).margin(0.01));  // standard error about 0.0018
  CHECK(max(one).item() == Approx(1 / 0.75));
  CHECK(sum(dropout_factors({100}, 1.0, a)).item() == 0.0);
  CHECK(min(dropout_factors({100}, 0.0, a)).item() == 1.0);
  // Successive masks differ: the generator moves on.
  CHECK(dropout_factors({64}, 0.5, a).to_vector<float>() != dropout_factors({64}, 0.5, a).to_vector<float>());
}

TEST_CASE("apply_dropout's output is x times its mask, and the mask does not depend on x") {
  for (const DType dtype : {DType::Float32, DType::Float64}) {
    for (const int threads : {1, 2}) {
      INFO(dtype << ", " << threads << " threads");
      set_num_threads(threads);
      Generator init(5);
      const Tensor x = randn({37, 301}, init, dtype);  // 11,137 elements: three chunks and a ragged tail
      Generator a(9), b(9);
      const Dropped of_ones = apply_dropout(ones(x.shape(), dtype), 0.1, a);
      const Tensor mask = of_ones.output;  // the factors: 1/(1-p) where kept, else 0
      const Dropped dropped = apply_dropout(x, 0.1, b);
      CHECK(dropped.kept.dtype() == DType::Bool);
      const auto flags = [](const Tensor& t) { return t.to(DType::Float64).to_vector<double>(); };
      CHECK(flags(dropped.kept) == flags(of_ones.kept));
      CHECK(flags(dropped.kept) == flags(ne(mask, zeros({1}, dtype))));
      CHECK(dropped.output.to_vector<double>() == mul(x, mask).to_vector<double>());
      CHECK(times_dropout_factors(x, dropped.kept, 0.1).to_vector<double>() == mul(x, mask).to_vector<double>());
      CHECK(a.state() == b.state());
      // A strided input reads its own elements, not its storage's order.
      Generator c(9);
      const Tensor xt = x.transpose(0, 1);
      CHECK(apply_dropout(xt, 0.1, c).output.to_vector<double>() ==
            mul(xt.contiguous(), mask.reshape({301, 37})).to_vector<double>());
    }
  }
  set_num_threads(2);
  Generator gen;
  CHECK_THROWS_MSG(apply_dropout(ones({2}), -0.5, gen), ValueError, "dropout: p must be in [0, 1], got -0.5");
  CHECK_THROWS_MSG(apply_dropout(ones({2}, DType::Int64), 0.5, gen), DTypeError, "dropout");
}

TEST_CASE("times_dropout_factors: g times 1/(1-p) where kept, and a signed zero where not, as a multiply by 0 gives") {
  const Tensor g = tensor({2.0, -3.0, 0.5, -1.0}, {2, 2}, DType::Float64);
  const Tensor kept = ne(tensor({1.0, 0.0, 1.0, 0.0}, {2, 2}), zeros({1}));
  const std::vector<double> out = times_dropout_factors(g, kept, 0.5).to_vector<double>();
  CHECK(out == std::vector<double>{4.0, 0.0, 1.0, 0.0});
  CHECK(std::signbit(out[1]));  // -3 * 0 = -0, as the factors' multiply gave
  // Strided gradients read in their own order.
  CHECK(times_dropout_factors(g.transpose(0, 1), kept, 0.5).to_vector<double>() ==
        std::vector<double>{4.0, 0.0, -6.0, 0.0});
  CHECK(sum(times_dropout_factors(g, kept, 1.0)).item() == 0.0);  // p = 1: nothing kept at any factor
  CHECK_THROWS_MSG(times_dropout_factors(g, ne(ones({4}), zeros({1})), 0.5), ShapeError,
                   "dropout: the kept mask is bool [4], the gradient [2, 2]: they must have one shape, the mask bool");
  CHECK_THROWS_AS(times_dropout_factors(g, ones({2, 2}), 0.5), ShapeError);
}

// The vector kernels, each as a function of the float and double overloads it has (both take the
// streams' states and increments, a count that is a multiple of its width, cut, keep, in, out, mask).
struct DropoutKernel {
  const char* name;
  int64_t width;
  bool (*f32)(uint64_t*, const uint64_t*, int64_t, uint32_t, float, const float*, float*, float*);
  bool (*f64)(uint64_t*, const uint64_t*, int64_t, uint32_t, double, const double*, double*, double*);
};

TEST_CASE("dropout's vector kernels draw PCG32's numbers four streams at a time: the definition's bits") {
  const DropoutKernel kernels[] = {{"AVX2", 4, detail::dropout_avx2, detail::dropout_avx2},
                                   {"AVX-512", 8, detail::dropout_avx512, detail::dropout_avx512}};
  for (const DropoutKernel& kernel : kernels)
    // The definition, one element at a time: element i from stream i % 4, factor keep if u >= cut.
    // 1000 and 1016 elements: the kernels' unrolled loop and the groups after it.
    for (const int64_t n : {int64_t{1000}, int64_t{1016}, kernel.width})
      for (const double p : {0.0, 0.1, 0.5, 0.9}) {
        INFO(kernel.name << ", " << n << " elements, p " << p);
        const auto cut = static_cast<uint32_t>(std::ceil(std::ldexp(p, 32)));
        const float keep = static_cast<float>(1 / (1 - p));
        Generator streams[4] = {Generator(123, 0), Generator(123, 1), Generator(123, 2), Generator(123, 3)};
        uint64_t states[4], increments[4];
        for (int k = 0; k < 4; ++k) states[k] = streams[k].state()[0], increments[k] = streams[k].state()[1];
        std::vector<float> in(static_cast<size_t>(n)), out(in.size()), mask(in.size());
        for (int64_t i = 0; i < n; ++i) in[static_cast<size_t>(i)] = 0.25f * static_cast<float>(i % 13) - 1;
        if (!kernel.f32(states, increments, n, cut, keep, in.data(), out.data(), mask.data())) {
          WARN("no " << kernel.name << " on this CPU or in this build: the kernel is not used, nothing to compare");
          continue;
        }
        for (int64_t i = 0; i < n; ++i) {
          const size_t at = static_cast<size_t>(i);
          const float f = streams[i % 4].next_u32() >= cut ? keep : 0.0f;
          REQUIRE(mask[at] == f);
          REQUIRE(out[at] == in[at] * f);
        }
        for (int k = 0; k < 4; ++k) CHECK(states[k] == streams[k].state()[0]);  // advanced alike
        // float64
        std::vector<double> in64(in.begin(), in.end()), out64(in.size()), mask64(in.size());
        Generator again[4] = {Generator(123, 0), Generator(123, 1), Generator(123, 2), Generator(123, 3)};
        for (int k = 0; k < 4; ++k) states[k] = again[k].state()[0];
        REQUIRE(kernel.f64(states, increments, n, cut, static_cast<double>(keep), in64.data(), out64.data(),
                           mask64.data()));
        for (int64_t i = 0; i < n; ++i) {
          const size_t at = static_cast<size_t>(i);
          const double f = again[i % 4].next_u32() >= cut ? static_cast<double>(keep) : 0.0;
          REQUIRE(mask64[at] == f);
          REQUIRE(out64[at] == in64[at] * f);
        }
        for (int k = 0; k < 4; ++k) CHECK(states[k] == again[k].state()[0]);
      }
}
