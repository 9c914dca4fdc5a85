#include "tensor/parallel.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>
#include <vector>

#include "tensor/error.h"
#include "tensor/profiler.h"

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
  // When the profiler is on: the caller's phase, and when the job was handed out (0: not profiled).
  profiler::Phase phase = profiler::Phase::Other;
  int64_t published_ns = 0;
};

std::atomic<int> thread_starts_left{-1};  // the test seam of detail::fail_thread_starts_after; -1: off

// A worker thread, or the error std::thread reports when the OS refuses one (EAGAIN at the
// process or user thread limit).
std::thread start_thread(std::function<void()> body) {
  if (thread_starts_left.load() >= 0 && thread_starts_left.fetch_sub(1) <= 0)
    throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                            "injected by the test seam");
  return std::thread(std::move(body));
}

// Every worker takes part in every job (worker w runs piece w + 1, or nothing when the job has
// fewer pieces), so each one sees every job and none can skip one. Waiting on either side spins
// for a while, then sleeps on a condition variable.
//
// One job at a time: run() is entered only by the holder of busy_ (see run_on_pool), because the
// job slot, the error and the pending count are the pool's, not the caller's.
class ThreadPool {
 public:
  explicit ThreadPool(int threads) {
    try {
      for (int w = 0; w + 1 < threads; ++w) workers_.push_back(start_thread([this, w] { work(w + 1); }));
    } catch (const std::system_error& e) {
      // The started workers wait on wake_: stop and join them, or destroying the condition
      // variable under them would hang (and the std::threads' destructors would terminate).
      const int started = static_cast<int>(workers_.size()) + 1;
      stop();
      throw ResourceError(message("set_num_threads: could not start thread ", started + 1, " of ", threads, ": ",
                                  e.code().message(), " (the process or user thread limit; ask for fewer threads)"));
    }
  }
  ~ThreadPool() { stop(); }
  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  /// True if the caller now owns the pool and must call release() after run(); false if another
  /// thread's parallel_for holds it.
  bool try_acquire() { return !busy_.exchange(true, std::memory_order_acquire); }
  void release() { busy_.store(false, std::memory_order_release); }

  void run(const Job& job) {
    job_ = job;  // workers read it only after seeing the new generation (release/acquire below)
    if (profiler::enabled()) job_.phase = profiler::current_phase(), job_.published_ns = profiler::now_ns();
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
    {
      const profiler::Scope waiting(profiler::kPoolWait, job_.phase, profiler::Kind::Pool);
      for (int spins = 0; pending_.load(std::memory_order_acquire) != 0; ++spins) {
        if (spins < kSpins)
          cpu_relax();
        else
          std::this_thread::yield();
      }
    }
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void run_piece(int piece) {
    if (piece >= job_.pieces) return;
    // A worker's piece, profiled: how long after the job was handed out it began, and how long it ran.
    const bool profiled = piece > 0 && job_.published_ns != 0 && profiler::enabled();
    const int64_t began = profiled ? profiler::now_ns() : 0;
    if (profiled) profiler::pool_event(profiler::kPoolWake, job_.phase, job_.published_ns, began);
    const int64_t lo = job_.begin + job_.n * piece / job_.pieces, hi = job_.begin + job_.n * (piece + 1) / job_.pieces;
    running_a_piece = true;
    try {
      if (lo < hi) job_.call(job_.fn, lo, hi);
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
    running_a_piece = false;
    if (profiled) profiler::pool_event(profiler::kPoolPiece, job_.phase, began, profiler::now_ns());
  }

  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
      generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
    workers_.clear();
  }

  void work(int piece) {
    profiler::name_this_thread("pool worker " + std::to_string(piece));
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
  std::atomic<bool> busy_{false};  // a caller is inside run()
  int sleepers_ = 0;
  bool stopping_ = false;
  std::exception_ptr error_;
};

int hardware_threads() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

// GRADFORMER_THREADS, strictly (digits only, no wrapping): 0 or unset means the hardware's count,
// like --threads 0; anything else outside [1, max_threads()] is an error rather than ignored.
int default_threads() {
  const char* env = std::getenv("GRADFORMER_THREADS");
  if (!env) return hardware_threads();
  int64_t n = -1;
  const char* end = env + std::strlen(env);
  const auto [stop, ec] = std::from_chars(env, end, n);
  if (ec != std::errc() || stop != end || n < 0 || n > max_threads())
    throw ValueError(message("GRADFORMER_THREADS: expected a thread count from 0 (all cores) to ", max_threads(),
                             ", got '", env, "'"));
  return n == 0 ? hardware_threads() : static_cast<int>(n);
}

// The pool is shared: a caller keeps the one it started with alive while set_num_threads (on
// another thread) swaps in a new one; the old one's workers are joined when its last user is done.
std::mutex pool_mutex;
std::shared_ptr<ThreadPool> pool;

std::shared_ptr<ThreadPool> the_pool() {
  std::lock_guard lock(pool_mutex);
  if (!pool) pool = std::make_shared<ThreadPool>(default_threads());
  return pool;
}

}  // namespace

int max_threads() {
  static const int limit = std::max(256, 4 * static_cast<int>(std::thread::hardware_concurrency()));
  return limit;
}

void set_num_threads(int n) {
  if (n < 1) throw ValueError(message("set_num_threads: need at least 1 thread, got ", n));
  if (n > max_threads())
    throw ValueError(
        message("set_num_threads: at most ", max_threads(), " threads (4 per hardware thread, at least 256), got ", n));
  std::lock_guard lock(pool_mutex);
  if (!pool || pool->threads() != n) {
    auto fresh = std::make_shared<ThreadPool>(n);  // if this throws, the old pool stays
    pool = std::move(fresh);
  }
}

int num_threads() { return the_pool()->threads(); }

namespace detail {

bool inside_parallel_region() { return running_a_piece; }

void fail_thread_starts_after(int n) { thread_starts_left.store(n); }

void run_on_pool(int64_t begin, int64_t end, int64_t grain, void (*call)(void*, int64_t, int64_t), void* fn) {
  const int64_t n = end - begin;
  const std::shared_ptr<ThreadPool> pool = the_pool();
  const int64_t max_pieces = std::max<int64_t>(1, n / std::max<int64_t>(grain, 1));
  const int pieces = static_cast<int>(std::min<int64_t>(pool->threads(), max_pieces));
  // Another application thread's parallel_for has the pool: run this one here, on the caller's
  // thread, rather than wait (no deadlock, and the result is the same, since no element's value
  // depends on how the range is split).
  if (pieces == 1 || !pool->try_acquire()) {
    call(fn, begin, end);
    return;
  }
  struct Release {
    ThreadPool& pool;
    ~Release() { pool.release(); }
  } release{*pool};
  pool->run(Job{begin, n, pieces, call, fn});
}

}  // namespace detail
}  // namespace gradformer
