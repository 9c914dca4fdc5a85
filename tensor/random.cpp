#include "tensor/random.h"

#include <bit>
#include <cmath>
#include <numbers>
#include <sstream>
#include <type_traits>
#include <vector>

#include "tensor/kernels/dropout_kernel.h"
#include "tensor/kernels/parallel.h"

namespace gradformer {

// PCG32's seeding routine (pcg32_srandom): the stream picks the (odd) increment, the seed is mixed
// in by two steps.
Generator::Generator(uint64_t seed, uint64_t stream) : increment_((stream << 1u) | 1u) {
  next_u32();
  state_ += seed;
  next_u32();
}

double Generator::uniform() {
  const uint64_t bits = (static_cast<uint64_t>(next_u32()) << 32 | next_u32()) >> 11;  // 53 bits
  return static_cast<double>(bits) * 0x1.0p-53;
}

double Generator::normal() {
  // Box-Muller: for u1, u2 uniform in (0, 1], sqrt(-2 ln u1) cos(2 pi u2) is standard normal.
  const double u1 = 1.0 - uniform(), u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

int64_t Generator::integer(int64_t lo, int64_t hi) {
  if (lo >= hi) throw ValueError(message("randint: empty range [", lo, ", ", hi, ")"));
  const uint64_t range = static_cast<uint64_t>(hi - lo);
  // Reject the top sliver of 64-bit values that would make some results more likely.
  const uint64_t limit = UINT64_MAX - UINT64_MAX % range;
  for (;;) {
    const uint64_t x = static_cast<uint64_t>(next_u32()) << 32 | next_u32();
    if (x < limit) return lo + static_cast<int64_t>(x % range);
  }
}

// Fills t (contiguous, fresh) in row-major order, so the numbers do not depend on the thread count.
template <class Draw>
static Tensor fill_random(const Shape& shape, DType dtype, const char* op, Draw draw) {
  Tensor t = Tensor::empty(shape, dtype);
  dispatch_floating(dtype, op, [&]<class T>() {
    T* p = t.data<T>();
    for (int64_t i = 0; i < t.numel(); ++i) p[i] = static_cast<T>(draw());
  });
  return t;
}

Tensor uniform(const Shape& shape, double lo, double hi, Generator& gen, DType dtype) {
  if (!(lo <= hi)) throw ValueError(message("uniform: lower bound ", lo, " is above upper bound ", hi));
  return fill_random(shape, dtype, "uniform", [&] { return lo + (hi - lo) * gen.uniform(); });
}
Tensor randn(const Shape& shape, Generator& gen, DType dtype) {
  return fill_random(shape, dtype, "randn", [&] { return gen.normal(); });
}
Tensor normal(const Shape& shape, double mean, double std, Generator& gen, DType dtype) {
  if (!(std >= 0)) throw ValueError(message("normal: standard deviation must be >= 0, got ", std));
  return fill_random(shape, dtype, "normal", [&] { return mean + std * gen.normal(); });
}
namespace {

// For each element i < n: its inverted-dropout factor f, T(1/(1-p)) or 0; mask[i] = f and
// out[i] = in[i] * f.
// The first elements of a chunk (all but fewer than 8) through the widest of the vector kernels the
// CPU runs: how many it did, 0 if none runs. The streams' states are advanced in place.
template <class T>
int64_t draw_vectorised(uint64_t states[4], const uint64_t increments[4], int64_t count, uint32_t cut, T keep,
                        const T* in, T* out, T* mask) {
  if (detail::dropout_avx512(states, increments, count / 8 * 8, cut, keep, in, out, mask)) return count / 8 * 8;
  if (detail::dropout_avx2(states, increments, count / 4 * 4, cut, keep, in, out, mask)) return count / 4 * 4;
  return 0;
}

// The factor of a kept element: 1/(1-p) in T (0 for p = 1, where nothing is kept).
template <class T>
T kept_factor(double p) {
  return p == 1 ? T(0) : static_cast<T>(1 / (1 - p));
}

template <class T>
void draw_dropout(int64_t n, double p, Generator& gen, const T* in, T* out, bool* kept) {
  constexpr int64_t kChunk = 4096;  // elements per stream: fixed, so the thread count cannot matter
  const uint64_t base = static_cast<uint64_t>(gen.next_u32()) << 32 | gen.next_u32();
  const T keep = kept_factor<T>(p);
  const int64_t chunks = (n + kChunk - 1) / kChunk;
  // Within a chunk, element i draws from the chunk's stream i % 4: four independent generator
  // chains the CPU can advance side by side, where one chain would wait on each multiply.
  const auto cut = static_cast<uint64_t>(std::ceil(std::ldexp(p, 32)));  // u >= p * 2^32  <=>  u >= ceil(p * 2^32)
  // The factor is keep's bits or zero's, chosen with an integer mask rather than a branch (or a
  // multiply the compiler turns into one): a random 10% of branches would be mispredicted.
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  const Bits keep_bits = std::bit_cast<Bits>(keep);
  auto put = [=](int64_t i, Generator& g) {
    const bool k = g.next_u32() >= cut;
    kept[i] = k;
    out[i] = in[i] * std::bit_cast<T>(static_cast<Bits>(keep_bits & (Bits{0} - Bits{k})));
  };
  parallel_for(0, chunks, grain_for(kChunk), [=](int64_t lo, int64_t hi) {
    std::vector<T> factors(kChunk);  // the vector kernels' factors, a chunk at a time (in L1), then kept as bools
    for (int64_t c = lo; c < hi; ++c) {
      Generator s[4] = {Generator(base, 4 * c), Generator(base, 4 * c + 1), Generator(base, 4 * c + 2),
                        Generator(base, 4 * c + 3)};
      const int64_t begin = c * kChunk, end = std::min(n, begin + kChunk);
      int64_t i = begin;
      // The four streams side by side in one vector register, where the CPU has one (the same bits).
      if (cut <= UINT32_MAX) {
        uint64_t states[4], increments[4];
        for (int k = 0; k < 4; ++k) states[k] = s[k].state()[0], increments[k] = s[k].state()[1];
        const int64_t done = draw_vectorised(states, increments, end - begin, static_cast<uint32_t>(cut), keep,
                                             in + begin, out + begin, factors.data());
        for (int64_t j = 0; j < done; ++j) kept[begin + j] = factors[static_cast<size_t>(j)] != T(0);
        i += done;
        for (int k = 0; k < 4; ++k) s[k].set_state({states[k], increments[k]});
      }
      for (; i + 4 <= end; i += 4) put(i, s[0]), put(i + 1, s[1]), put(i + 2, s[2]), put(i + 3, s[3]);
      for (int k = 0; i < end; ++i, ++k) put(i, s[k]);
    }
  });
}

void check_dropout_p(double p, const char* op) {
  if (!(p >= 0 && p <= 1)) throw ValueError(message(op, ": p must be in [0, 1], got ", p));
}

}  // namespace

// One pass: each factor drawn, stored and applied while x's element is at hand, where the mask
// and then x * mask would write the mask and read it back.
Dropped apply_dropout(const Tensor& x, double p, Generator& gen) {
  check_dropout_p(p, "dropout");
  const Tensor input = x.contiguous();
  Dropped result{Tensor::empty(x.shape(), x.dtype()), Tensor::empty(x.shape(), DType::Bool)};
  dispatch_floating(x.dtype(), "dropout", [&]<class T>() {
    draw_dropout<T>(input.numel(), p, gen, input.data<T>(), result.output.data<T>(), result.kept.data<bool>());
  });
  return result;
}

Tensor times_dropout_factors(const Tensor& g, const Tensor& kept, double p) {
  check_dropout_p(p, "dropout");
  if (kept.dtype() != DType::Bool || kept.shape() != g.shape())
    throw ShapeError(message("dropout: the kept mask is ", kept.dtype(), " ", kept.shape(), ", the gradient ",
                             g.shape(), ": they must have one shape, the mask bool"));
  const Tensor in = g.contiguous(), mask = kept.contiguous();
  Tensor out = Tensor::empty(g.shape(), g.dtype());
  dispatch_floating(g.dtype(), "dropout", [&]<class T>() {
    const T keep = kept_factor<T>(p);
    const T* a = in.data<T>();
    const bool* k = mask.data<bool>();
    T* o = out.data<T>();
    parallel_for(0, in.numel(), grain_for(1), [=](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) o[i] = a[i] * (k[i] ? keep : T(0));
    });
  });
  return out;
}

Tensor randint(const Shape& shape, int64_t lo, int64_t hi, Generator& gen) {
  if (lo >= hi) throw ValueError(message("randint: empty range [", lo, ", ", hi, ")"));
  Tensor t = Tensor::empty(shape, DType::Int64);
  int64_t* p = t.data<int64_t>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = gen.integer(lo, hi);
  return t;
}

std::string generator_state_text(const Generator& gen) {
  const auto s = gen.state();
  return std::to_string(s[0]) + " " + std::to_string(s[1]);
}

void restore_generator(Generator& gen, const std::string& text, const std::string& source) {
  std::istringstream in(text);
  uint64_t a = 0, b = 0;
  std::string rest;
  if (!(in >> a >> b) || (in >> rest))
    throw CheckpointError(message(source, ": a generator state should be two integers, got '", text, "'"));
  gen.set_state({a, b});
}

}  // namespace gradformer
