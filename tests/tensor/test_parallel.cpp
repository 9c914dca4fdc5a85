#include <algorithm>
#include <atomic>
#include <thread>
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
  CHECK_THROWS_MSG(parallel_for(0, 100, 1,
                                [](int64_t lo, int64_t) {
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

TEST_CASE("the thread count has an upper bound, named in the error") {
  CHECK(max_threads() >= 256);
  CHECK_THROWS_MSG(set_num_threads(max_threads() + 1), ValueError,
                   message("set_num_threads: at most ", max_threads(),
                           " threads (4 per hardware thread, at least 256), got ", max_threads() + 1));
}

TEST_CASE("a thread the OS refuses is a ResourceError: the started workers are stopped and the old pool stays") {
  set_num_threads(2);
  detail::fail_thread_starts_after(2);  // the pool of 4 gets workers 1 and 2, then the third start fails
  CHECK_THROWS_MSG(set_num_threads(4), ResourceError, "set_num_threads: could not start thread 4 of 4: ");
  detail::fail_thread_starts_after(-1);
  CHECK(num_threads() == 2);
  std::vector<int> hits(1000, 0);
  parallel_for(0, 1000, 10, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) ++hits[static_cast<size_t>(i)];
  });
  CHECK(hits == std::vector<int>(1000, 1));
  set_num_threads(4);  // and a later request succeeds
  CHECK(num_threads() == 4);
}

// Each caller checks its own ranges: every index processed exactly once, whoever ran it.
static int64_t callers_missing_indices(int callers, int calls, bool resize_pool) {
  std::atomic<int64_t> wrong = 0;
  std::vector<std::thread> threads;
  for (int c = 0; c < callers; ++c) {
    threads.emplace_back([&, c] {
      std::vector<int> hits;
      for (int k = 0; k < calls; ++k) {
        const int64_t n = 64 + (c * 131 + k * 17) % 900;
        hits.assign(static_cast<size_t>(n), 0);
        parallel_for(0, n, 8, [&](int64_t lo, int64_t hi) {
          for (int64_t i = lo; i < hi; ++i) ++hits[static_cast<size_t>(i)];
        });
        for (int h : hits) wrong += h != 1;
        if (resize_pool && c == 0 && k % 50 == 0) set_num_threads(2 + (k / 50) % 3);
      }
    });
  }
  for (auto& t : threads) t.join();
  return wrong.load();
}

TEST_CASE("parallel_for from several application threads at once processes every index exactly once") {
  set_num_threads(3);
  CHECK(callers_missing_indices(4, 2000, /*resize_pool=*/false) == 0);
}

TEST_CASE("set_num_threads while other threads run parallel_for is safe") {
  set_num_threads(2);
  CHECK(callers_missing_indices(3, 1000, /*resize_pool=*/true) == 0);
  set_num_threads(2);
  CHECK(num_threads() == 2);
}

TEST_CASE("parallel_for: a worker that never gets a core holds nothing up, the caller runs its pieces") {
  // Every piece is taken from a shared counter, so a worker the OS does not run (another program has
  // its core) leaves its piece to the caller instead of making the caller wait for it.
  set_num_threads(4);
  detail::hold_workers(true);
  std::vector<std::thread::id> ran_on(4);
  parallel_for(0, 4, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) ran_on[static_cast<size_t>(i)] = std::this_thread::get_id();
  });
  detail::hold_workers(false);
  for (const std::thread::id& id : ran_on) CHECK(id == std::this_thread::get_id());
  // Released, the workers take part again: the same range, the same result.
  std::vector<int> counts(1 << 16, 0);
  parallel_for(0, static_cast<int64_t>(counts.size()), 1, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) ++counts[static_cast<size_t>(i)];
  });
  CHECK(std::count(counts.begin(), counts.end(), 1) == static_cast<std::ptrdiff_t>(counts.size()));
  set_num_threads(2);
}
