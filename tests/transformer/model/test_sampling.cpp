// Sampling without ranking (transformer/model/sampling.cpp): next_token_distribution ranks only the
// tokens top-k keeps (partial_sort) and sample_next_token, without top-k and top-p, ranks none. Both
// must draw what the first implementation drew, a stable sort of every token, for every seed: the
// chapters print seeded samples. The reference below is that implementation, kept verbatim.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "catch.h"
#include "tensor/all.h"
#include "transformer/model/sampling.h"

using namespace gradformer;

namespace {

// The distribution as gradformer first computed it: every token stable-sorted by probability.
std::vector<double> ranked_distribution(const Tensor& logits, const SamplingOptions& o) {
  const std::vector<double> z = logits.to(DType::Float64).contiguous().to_vector<double>();
  const size_t V = z.size();
  std::vector<double> p(V, 0.0);
  const size_t best = static_cast<size_t>(std::max_element(z.begin(), z.end()) - z.begin());
  if (o.temperature == 0) {
    p[best] = 1;
    return p;
  }
  double total = 0;
  for (size_t i = 0; i < V; ++i) total += p[i] = std::exp((z[i] - z[best]) / o.temperature);
  for (double& v : p) v /= total;
  std::vector<size_t> order(V);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] > p[b]; });
  size_t keep = o.top_k > 0 ? std::min(V, static_cast<size_t>(o.top_k)) : V;
  if (o.top_p < 1) {
    double mass = 0;
    size_t n = 0;
    while (n < keep && mass < o.top_p) mass += p[order[n++]];
    keep = n;
  }
  double kept = 0;
  for (size_t r = 0; r < V; ++r) {
    if (r < keep)
      kept += p[order[r]];
    else
      p[order[r]] = 0;
  }
  for (double& v : p) v /= kept;
  return p;
}

// The draw as it was: the first index whose cumulative probability exceeds one uniform number.
int64_t ranked_draw(const std::vector<double>& p, Generator& gen) {
  const double u = gen.uniform();
  double cumulative = 0;
  int64_t last = -1;
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] <= 0) continue;
    cumulative += p[i], last = static_cast<int64_t>(i);
    if (u < cumulative) return last;
  }
  return last;
}

// Logits of V tokens with many ties (values on a coarse grid), as a trained model's often are not,
// so that ties by id are exercised: each distribution a different mix of spread and repetition.
Tensor logits_for(uint64_t seed, int64_t V) {
  Generator gen(seed);
  const double spread = 0.5 + static_cast<double>(seed % 7);
  std::vector<float> z(static_cast<size_t>(V));
  for (float& v : z) v = static_cast<float>(std::round(gen.normal() * spread * 4) / 4);
  return from_vector(z, {V});
}

}  // namespace

TEST_CASE("sampling: without top-k and top-p the unranked draw is the ranked one's, seed for seed") {
  for (const double temperature : {0.7, 1.0, 1.9})
    for (uint64_t seed = 0; seed < 200; ++seed) {
      const Tensor logits = logits_for(seed, seed % 2 ? 50 : 1000);
      const SamplingOptions o{.temperature = temperature};
      Generator old_gen(seed * 31 + 7), new_gen(seed * 31 + 7);
      for (int draw = 0; draw < 20; ++draw)
        REQUIRE(sample_next_token(logits, o, new_gen) == ranked_draw(ranked_distribution(logits, o), old_gen));
    }
}

TEST_CASE("sampling: every option's distribution is the ranked one's, bit for bit") {
  const std::vector<SamplingOptions> options = {{.temperature = 1.0},
                                                {.temperature = 0},
                                                {.temperature = 0.8, .top_k = 1},
                                                {.temperature = 1.0, .top_k = 5},
                                                {.temperature = 1.3, .top_k = 40},
                                                {.temperature = 1.0, .top_k = 2000},
                                                {.temperature = 1.0, .top_p = 0.9},
                                                {.temperature = 0.9, .top_k = 30, .top_p = 0.5}};
  for (uint64_t seed = 0; seed < 60; ++seed) {
    const Tensor logits = logits_for(seed, 1000);
    for (const SamplingOptions& o : options) {
      const std::vector<double> got = next_token_distribution(logits, o), want = ranked_distribution(logits, o);
      REQUIRE(got == want);  // doubles compared exactly
      Generator old_gen(seed), new_gen(seed);
      for (int draw = 0; draw < 10; ++draw)
        REQUIRE(sample_next_token(logits, o, new_gen) == ranked_draw(want, old_gen));
    }
  }
}

TEST_CASE("sampling: top-k keeps the k most likely tokens, ties to the lower id") {
  // probabilities by id: 0.1 0.3 0.3 0.2 0.1 -> the two most likely are ids 1 and 2, the third id 3,
  // and of the two 0.1s top-k 4 keeps id 0
  const Tensor logits =
      from_vector<double>({std::log(0.1), std::log(0.3), std::log(0.3), std::log(0.2), std::log(0.1)}, {5});
  const std::vector<double> two = next_token_distribution(logits, {.top_k = 2});
  CHECK(two[1] == Approx(0.5));
  CHECK(two[2] == Approx(0.5));
  CHECK(two[0] + two[3] + two[4] == 0);
  const std::vector<double> four = next_token_distribution(logits, {.top_k = 4});
  CHECK(four[0] == Approx(0.1 / 0.9));
  CHECK(four[4] == 0);
}

TEST_CASE("sampling: sample_next_token refuses what next_token_distribution refuses") {
  Generator gen(1);
  CHECK_THROWS_AS(sample_next_token(zeros({2, 3}), {}, gen), ShapeError);
  CHECK_THROWS_AS(sample_next_token(zeros({3}), {.top_p = 0}, gen), ValueError);
}

TEST_CASE("sampling: ids `never` names are never drawn, greedy or sampled, and the rest renormalise") {
  // probabilities by id: 0.4 0.3 0.2 0.1; never {0}: greedy takes id 1, sampling 0.3 0.2 0.1 over 0.6
  const Tensor logits = from_vector<double>({std::log(0.4), std::log(0.3), std::log(0.2), std::log(0.1)}, {4});
  CHECK(next_token_distribution(logits, {.temperature = 0, .never = {0}})[1] == 1);
  const std::vector<double> p = next_token_distribution(logits, {.never = {0}});
  CHECK(p[0] == 0);
  CHECK(p[1] == Approx(0.5));
  CHECK(p[2] == Approx(1.0 / 3));
  CHECK(p[3] == Approx(1.0 / 6));
  Generator gen(7);
  for (int draw = 0; draw < 200; ++draw) {
    CHECK(sample_next_token(logits, {.never = {0, 2}}, gen) % 2 == 1);  // ids 1 and 3 only
    CHECK(sample_next_token(logits, {.top_k = 2, .never = {1}}, gen) != 1);
  }
  CHECK_THROWS_MSG(sample_next_token(logits, {.never = {4}}, gen), ValueError,
                   "generate: never names id 4, which is not one of the 4 ids");
  CHECK_THROWS_MSG(next_token_distribution(logits, {.never = {3, 2, 1, 0}}), ValueError,
                   "generate: never names every one of the 4 ids: none is left to draw");
}
