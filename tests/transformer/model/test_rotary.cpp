// Rotary positions (transformer/model/rotary.h) with the tables the model builds: the op equals its
// composed reference, keeps each pair's length, is the identity at position 0, and makes a query's
// score with a key depend on their positions only through the difference (RoPE's reason to be);
// the frequencies and Llama 3.1's rescaling against the formulas written out here.
#include <cmath>
#include <numbers>
#include <vector>

#include "autograd/helpers.h"
#include "transformer/model/rotary.h"

using namespace gradformer;
using test::rnd;
using test::values;

namespace rotary_test {

// A vector [d_k] turned as if at position p: rotary on a [1, d_k] sequence starting at p.
std::vector<double> turned(const std::vector<double>& x, const RotaryTables& t, int64_t p) {
  const Tensor in = from_vector(x, {1, static_cast<int64_t>(x.size())});
  return values(rotary(Variable(in), t.cos, t.sin, p).value());
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

}  // namespace rotary_test

TEST_CASE("rotary: with rotary_tables, the fused op equals rotary_unfused, values and gradients") {
  const RotaryTables t = rotary_tables(16, 8, 10000, {}, DType::Float64);
  REQUIRE(t.cos.shape() == Shape{16, 4});
  for (int64_t start : {0, 5}) {
    const Tensor x = rnd({2, 3, 7, 8}, 40 + start, -2, 2);  // [B, H, T, d_k]
    Variable a(x.clone(), true), b(x.clone(), true);
    const Variable ya = rotary(a, t.cos, t.sin, start), yb = rotary_unfused(b, t.cos, t.sin, start);
    const std::vector<double> va = values(ya.value()), vb = values(yb.value());
    REQUIRE(va.size() == vb.size());
    for (size_t i = 0; i < va.size(); ++i) CHECK(va[i] == Approx(vb[i]).margin(1e-14));
    const Tensor g = rnd(x.shape(), 50 + start);
    ya.backward(g), yb.backward(g);
    const std::vector<double> ga = values(a.grad()), gb = values(b.grad());
    for (size_t i = 0; i < ga.size(); ++i) CHECK(ga[i] == Approx(gb[i]).margin(1e-14));
  }
  // float32 tables for a float32 input
  const RotaryTables t32 = rotary_tables(16, 8, 10000, {}, DType::Float32);
  const Tensor x32 = rnd({3, 16, 8}, 60).to(DType::Float32);
  const std::vector<double> fa = values(rotary(Variable(x32), t32.cos, t32.sin).value()),
                            fb = values(rotary_unfused(Variable(x32), t32.cos, t32.sin).value());
  for (size_t i = 0; i < fa.size(); ++i) CHECK(fa[i] == Approx(fb[i]).margin(1e-6));
}

TEST_CASE("rotary: each pair (x_i, x_{i+h}) keeps its length, and position 0 is the identity") {
  const int64_t dk = 10, h = dk / 2, T = 12;
  const RotaryTables t = rotary_tables(T, dk, 10000, {}, DType::Float64);
  const Tensor x = rnd({2, T, dk}, 61, -3, 3);
  const std::vector<double> in = values(x), out = values(rotary(Variable(x), t.cos, t.sin).value());
  for (int64_t r = 0; r < 2 * T; ++r)
    for (int64_t i = 0; i < h; ++i) {
      const double* a = in.data() + r * dk;
      const double* b = out.data() + r * dk;
      CHECK(std::hypot(b[i], b[i + h]) == Approx(std::hypot(a[i], a[i + h])).epsilon(1e-14));
    }
  // position 0: every angle 0, cos 1 and sin 0 exactly, so the first position of each row is x itself
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t i = 0; i < dk; ++i) CHECK(out[b * T * dk + i] == in[b * T * dk + i]);
  // ... and later positions are not (the test above is not passing for a table of zeros)
  CHECK(out[dk + 1] != in[dk + 1]);
}

TEST_CASE("rotary: the score of a query at m and a key at n depends on m - n only") {
  const int64_t dk = 16;
  const RotaryTables t = rotary_tables(64, dk, 10000, {}, DType::Float64);
  for (uint64_t seed : {70, 71, 72}) {
    const std::vector<double> q = values(rnd({dk}, seed, -2, 2)), k = values(rnd({dk}, seed + 10, -2, 2));
    for (const auto& [m, n] : std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {3, 1}, {1, 7}, {10, 2}, {5, 5}}) {
      const double score = rotary_test::dot(rotary_test::turned(q, t, m), rotary_test::turned(k, t, n));
      for (int64_t s : {1, 4, 13, 40}) {
        INFO("m " << m << ", n " << n << ", shift " << s);
        const double shifted = rotary_test::dot(rotary_test::turned(q, t, m + s), rotary_test::turned(k, t, n + s));
        CHECK(std::abs(shifted - score) <= 1e-12);
      }
    }
    // the positions matter: moving the key one step changes the score
    const double a = rotary_test::dot(rotary_test::turned(q, t, 4), rotary_test::turned(k, t, 2));
    const double b = rotary_test::dot(rotary_test::turned(q, t, 4), rotary_test::turned(k, t, 3));
    CHECK(std::abs(a - b) > 1e-3);
    // at m = n the score is the plain dot product q . k (R_m^T R_m = I)
    CHECK(rotary_test::dot(rotary_test::turned(q, t, 9), rotary_test::turned(k, t, 9)) ==
          Approx(rotary_test::dot(q, k)).margin(1e-12));
  }
}

TEST_CASE("rotary: start = p on one position equals row p of rotary over positions 0..p") {
  const int64_t dk = 6;
  const RotaryTables t = rotary_tables(20, dk, 500, {}, DType::Float64);
  for (int64_t p : {0, 1, 7, 19}) {
    const Tensor x = rnd({2, p + 1, dk}, 80 + static_cast<uint64_t>(p));
    const Tensor all = rotary(Variable(x), t.cos, t.sin).value();
    const Tensor one = rotary(Variable(x.narrow(1, p, 1)), t.cos, t.sin, p).value();
    CHECK(values(one) == values(all.narrow(1, p, 1)));
    // and that row is x_p turned by p times each frequency, written out
    const std::vector<double> xp = values(x.narrow(1, p, 1).select(0, 0)), row = values(one.select(0, 0));
    for (int64_t i = 0; i < dk / 2; ++i) {
      const double angle = static_cast<double>(p) * std::pow(500.0, -2.0 * static_cast<double>(i) / dk);
      CHECK(row[i] == Approx(xp[i] * std::cos(angle) - xp[i + dk / 2] * std::sin(angle)).margin(1e-14));
      CHECK(row[i + dk / 2] == Approx(xp[i + dk / 2] * std::cos(angle) + xp[i] * std::sin(angle)).margin(1e-14));
    }
  }
}

TEST_CASE("rotary frequencies: theta^(-2i/d), written out, and the tables cos and sin of p times them") {
  // d 8, theta 10000: 10000^0, 10000^(-1/4), 10000^(-1/2), 10000^(-3/4) = 1, 0.1, 0.01, 0.001
  const std::vector<double> f = rotary_frequencies(8, 10000);
  REQUIRE(f.size() == 4);
  const double expected[] = {1, 0.1, 0.01, 0.001};
  for (size_t i = 0; i < 4; ++i) CHECK(f[i] == Approx(expected[i]).epsilon(1e-14));
  // theta 100, d 4: 1, 100^(-1/2) = 0.1
  const std::vector<double> g = rotary_frequencies(4, 100);
  CHECK(g[0] == 1.0);
  CHECK(g[1] == Approx(0.1).epsilon(1e-14));
  const RotaryTables t = rotary_tables(5, 8, 10000, {}, DType::Float64);
  const std::vector<double> c = values(t.cos), s = values(t.sin);
  for (int64_t p = 0; p < 5; ++p)
    for (int64_t i = 0; i < 4; ++i) {
      CHECK(c[p * 4 + i] == Approx(std::cos(static_cast<double>(p) * expected[i])).margin(1e-15));
      CHECK(s[p * 4 + i] == Approx(std::sin(static_cast<double>(p) * expected[i])).margin(1e-15));
    }
  CHECK_THROWS_AS(rotary_frequencies(7, 10000), ValueError);
  CHECK_THROWS_AS(rotary_frequencies(0, 10000), ValueError);
}

TEST_CASE(
    "rotary frequencies: Llama 3.1's scaling divides long waves by the factor, keeps short ones, blends between") {
  // factor 32, low_freq_factor 1, high_freq_factor 4, original length 8192, theta 500000, d_k 64.
  // Wavelength 2 pi / f. Longer than 8192 / 1: divided by 32. Shorter than 8192 / 4 = 2048: kept.
  // Between: (1 - s) f / 32 + s f with s = (8192 / wavelength - 1) / (4 - 1).
  const RopeScaling llama3{.factor = 32, .low_freq_factor = 1, .high_freq_factor = 4, .original_max_len = 8192};
  const std::vector<double> scaled = rotary_frequencies(64, 500000, llama3);
  REQUIRE(scaled.size() == 32);
  int kept = 0, divided = 0, blended = 0;
  for (int i = 0; i < 32; ++i) {
    const double f = std::pow(500000.0, -2.0 * i / 64.0);
    const double wavelength = 2 * std::numbers::pi / f;
    INFO("pair " << i << ", wavelength " << wavelength);
    if (wavelength < 2048) {
      CHECK(scaled[i] == Approx(f).epsilon(1e-14));
      ++kept;
    } else if (wavelength > 8192) {
      CHECK(scaled[i] == Approx(f / 32).epsilon(1e-14));
      ++divided;
    } else {
      const double s = (8192 / wavelength - 1) / 3;
      CHECK(scaled[i] == Approx((1 - s) * f / 32 + s * f).epsilon(1e-14));
      ++blended;
      CHECK(scaled[i] < f);
      CHECK(scaled[i] > f / 32);
    }
  }
  // ln(500000) = 13.12: pairs 0-14 have wavelengths under 2048, 18-31 over 8192, 15-17 between.
  CHECK(kept == 15);
  CHECK(blended == 3);
  CHECK(divided == 14);
  // pair 31, the longest wave: exactly a 32nd of 500000^(-62/64); pair 0 (f = 1) untouched
  CHECK(scaled[31] == Approx(std::pow(500000.0, -62.0 / 64) / 32).epsilon(1e-14));
  CHECK(scaled[0] == 1.0);
  // pair 16: wavelength 2 pi sqrt(500000) = 4442.9, s = (8192 / 4442.9 - 1) / 3 = 0.28127...
  const double f16 = 1 / std::sqrt(500000.0), s16 = (8192 / (2 * std::numbers::pi / f16) - 1) / 3;
  CHECK(s16 == Approx(0.28127).epsilon(1e-4));
  CHECK(scaled[16] == Approx(f16 * (s16 + (1 - s16) / 32)).epsilon(1e-14));
  // the tables use the scaled frequencies
  const RotaryTables t = rotary_tables(3, 64, 500000, llama3, DType::Float64);
  CHECK(values(t.sin)[2 * 32 + 31] == Approx(std::sin(2 * scaled[31])).margin(1e-15));
  // factor 0: no rescaling
  CHECK(rotary_frequencies(64, 500000, {}) != scaled);
}
