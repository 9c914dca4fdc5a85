#include <algorithm>

#include "catch.h"
#include "transformer/data/copy_task.h"

using namespace gradformer;

TEST_CASE("copy task batch has the Annotated Transformer's structure") {
  Generator gen(0);
  const Batch batch = copy_task_batch(30, gen);
  REQUIRE(batch.src.shape() == Shape{30, 10});
  REQUIRE(batch.tgt_in.shape() == Shape{30, 9});
  REQUIRE(batch.tgt_out.shape() == Shape{30, 9});
  CHECK(batch.ntokens == 30 * 9);
  for (int64_t b = 0; b < 30; ++b) {
    CHECK(batch.src.at({b, 0}) == 1);  // data[:, 0] = 1
    for (int64_t t = 0; t < 10; ++t) {
      const double v = batch.src.at({b, t});
      CHECK(v >= 1);
      CHECK(v <= 10);
    }
    for (int64_t t = 0; t < 9; ++t) {
      CHECK(batch.tgt_in.at({b, t}) == batch.src.at({b, t}));       // tgt[:, :-1]
      CHECK(batch.tgt_out.at({b, t}) == batch.src.at({b, t + 1}));  // tgt[:, 1:]
    }
  }
  // No padding (id 0) anywhere: the model's source mask is all true and its target mask the plain causal mask.
  for (const Tensor* ids : {&batch.src, &batch.tgt_in, &batch.tgt_out}) CHECK(min(*ids).item() >= 1);
}

TEST_CASE("copy task uses every symbol and is seeded") {
  Generator a(5), b(5), c(6);
  const auto first = copy_task_batch(80, a).src.to_vector<int64_t>();
  CHECK(copy_task_batch(80, b).src.to_vector<int64_t>() == first);
  CHECK(copy_task_batch(80, c).src.to_vector<int64_t>() != first);
  for (int64_t symbol = 1; symbol <= 10; ++symbol) CHECK(std::count(first.begin(), first.end(), symbol) > 0);
  CHECK(std::count(first.begin(), first.end(), 0) == 0);
}

TEST_CASE("copy task options and errors") {
  Generator gen(1);
  const Batch batch = copy_task_batch(4, gen, {.vocab_size = 5, .length = 20});
  CHECK(batch.src.shape() == Shape{4, 20});
  CHECK(max(batch.src).item() <= 4);
  CHECK_THROWS_MSG(copy_task_batch(0, gen), ValueError, "batch_size");
  CHECK_THROWS_MSG(copy_task_batch(2, gen, {.vocab_size = 2}), ValueError, "vocab_size");
  CHECK_THROWS_MSG(copy_task_batch(2, gen, {.length = 1}), ValueError, "length");
}
