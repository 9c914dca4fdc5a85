#include <atomic>
#include <vector>

#include "catch.h"
#include "tensor/all.h"

using namespace gradformer;

TEST_CASE("parallel_for covers the range exactly once, in contiguous pieces") {
  set_num_threads(2);
  CHECK(num_threads() == 2);
  std::vector<int> hits(1000, 0);
  parallel_for(0, 1000, 10, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) ++hits[static_cast<size_t>(i)];
  });
  CHECK(hits == std::vector<int>(1000, 1));
}

TEST_CASE("small ranges stay on the calling thread") {
  set_num_threads(2);
  std::atomic<int> pieces = 0;
  parallel_for(0, 10, 100, [&](int64_t, int64_t) { ++pieces; });
  CHECK(pieces == 1);
  parallel_for(5, 5, 1, [&](int64_t, int64_t) { ++pieces; });  // empty: not called
  CHECK(pieces == 1);
}

TEST_CASE("nested parallel_for runs serially instead of deadlocking") {
  set_num_threads(2);
  std::atomic<int64_t> total = 0;
  parallel_for(0, 4, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) parallel_for(0, 100, 1, [&](int64_t a, int64_t b) { total += b - a; });
  });
  CHECK(total == 400);
}

TEST_CASE("an exception inside a piece reaches the caller") {
  set_num_threads(2);
  CHECK_THROWS_MSG(parallel_for(0, 100, 1, [](int64_t lo, int64_t) {
                     if (lo > 0) throw ValueError("from a worker");
                   }),
                   ValueError, "from a worker");
  int calls = 0;  // the pool still works afterwards
  parallel_for(0, 1, 1, [&](int64_t, int64_t) { ++calls; });
  CHECK(calls == 1);
}

TEST_CASE("the thread count must be positive") {
  CHECK_THROWS_MSG(set_num_threads(0), ValueError, "set_num_threads: need at least 1 thread, got 0");
}

TEST_CASE("grain_for gives each task about 32768 units of work, and at least one item") {
  static_assert(grain_for(1) == 32768);  // usable where a constant is needed
  CHECK(grain_for(2) == 16384);          // an elementwise op with a sqrt: 16K elements per task
  CHECK(grain_for(2 * 512) == 32);       // softmax over rows of 512: 32 rows * 1024 units
  CHECK(grain_for(3 * 1000) == 10);      // 32768 / 3000 = 10.9, rounded down
  CHECK(grain_for(1 << 20) == 1);        // one item is already more than a task: one per task
  CHECK(grain_for(0) == 32768);          // empty items count as one unit each
}
