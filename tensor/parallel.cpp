#include "tensor/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "tensor/error.h"

namespace gradformer {
namespace {

thread_local bool running_a_piece = false;  // this thread is inside a parallel_for piece

// A hint to the CPU that this thread is spinning (it frees resources for the other hyperthread
// and saves power); a no-op where there is no such instruction.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// How long a waiting thread spins before it sleeps: about 50 microseconds. A training step runs
// hundreds of parallel regions of tens of microseconds each; waking a sleeping thread through the
// kernel takes about as long as that, so without spinning a second thread saves nothing (measured:
// the copy task took 33.6 s on one thread and 33.9 s on two). Spinning no longer than this keeps
// an idle pool from burning a core.
constexpr int kSpins = 4000;

// One parallel_for: `pieces` contiguous pieces of [begin, begin + n), piece p run as call(fn, lo, hi).
struct Job {
  int64_t begin = 0, n = 0;
  int pieces = 0;
  void (*call)(void*, int64_t, int64_t) = nullptr;
  void* fn = nullptr;
};

// Every worker takes part in every job (worker w runs piece w + 1, or nothing when the job has
// fewer pieces), so each one sees every job and none can skip one. Waiting on either side spins
// for a while, then sleeps on a condition variable.
class ThreadPool {
 public:
  explicit ThreadPool(int threads) {
    for (int w = 0; w + 1 < threads; ++w) workers_.emplace_back([this, w] { work(w + 1); });
  }
  ~ThreadPool() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
  }
  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  void run(const Job& job) {
    job_ = job;  // workers read it only after seeing the new generation (release/acquire below)
    error_ = nullptr;
    pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
    bool sleeping;
    {
      std::lock_guard lock(mutex_);
      generation_.fetch_add(1, std::memory_order_release);
      sleeping = sleepers_ > 0;
    }
    if (sleeping) wake_.notify_all();
    run_piece(0);
    for (int spins = 0; pending_.load(std::memory_order_acquire) != 0; ++spins) {
      if (spins < kSpins) cpu_relax();
      else std::this_thread::yield();
    }
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void run_piece(int piece) {
    if (piece >= job_.pieces) return;
    const int64_t lo = job_.begin + job_.n * piece / job_.pieces, hi = job_.begin + job_.n * (piece + 1) / job_.pieces;
    running_a_piece = true;
    try {
      if (lo < hi) job_.call(job_.fn, lo, hi);
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
    running_a_piece = false;
  }

  void work(int piece) {
    uint64_t seen = 0;
    for (;;) {
      uint64_t now = generation_.load(std::memory_order_acquire);
      for (int spins = 0; now == seen && spins < kSpins; ++spins) {
        cpu_relax();
        now = generation_.load(std::memory_order_acquire);
      }
      if (now == seen) {  // nothing came: sleep until the next job
        std::unique_lock lock(mutex_);
        ++sleepers_;
        wake_.wait(lock, [&] { return generation_.load(std::memory_order_acquire) != seen; });
        --sleepers_;
        now = generation_.load(std::memory_order_acquire);
      }
      seen = now;
      {
        std::lock_guard lock(mutex_);
        if (stopping_) return;
      }
      run_piece(piece);
      pending_.fetch_sub(1, std::memory_order_release);
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;  // guards sleepers_, stopping_ and error_
  std::condition_variable wake_;
  Job job_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> pending_{0};
  int sleepers_ = 0;
  bool stopping_ = false;
  std::exception_ptr error_;
};

int default_threads() {
  if (const char* env = std::getenv("GRADFORMER_THREADS")) {
    const int n = std::atoi(env);
    if (n >= 1) return n;
  }
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

std::mutex pool_mutex;
std::unique_ptr<ThreadPool> pool;

ThreadPool& the_pool() {
  std::lock_guard lock(pool_mutex);
  if (!pool) pool = std::make_unique<ThreadPool>(default_threads());
  return *pool;
}

}  // namespace

void set_num_threads(int n) {
  if (n < 1) throw ValueError(message("set_num_threads: need at least 1 thread, got ", n));
  std::lock_guard lock(pool_mutex);
  if (!pool || pool->threads() != n) {
    pool.reset();  // joins the old workers first
    pool = std::make_unique<ThreadPool>(n);
  }
}

int num_threads() { return the_pool().threads(); }

namespace detail {

bool inside_parallel_region() { return running_a_piece; }

void run_on_pool(int64_t begin, int64_t end, int64_t grain, void (*call)(void*, int64_t, int64_t), void* fn) {
  const int64_t n = end - begin;
  ThreadPool& pool = the_pool();
  const int64_t max_pieces = std::max<int64_t>(1, n / std::max<int64_t>(grain, 1));
  const int pieces = static_cast<int>(std::min<int64_t>(pool.threads(), max_pieces));
  if (pieces == 1) {
    call(fn, begin, end);
    return;
  }
  pool.run(Job{begin, n, pieces, call, fn});
}

}  // namespace detail
}  // namespace gradformer
