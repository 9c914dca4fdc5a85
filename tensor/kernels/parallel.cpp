#include "tensor/kernels/parallel.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
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

#include "tensor/support/error.h"
#include "tensor/support/profiler.h"

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

// How long a waiting thread spins before it sleeps, at most. A training step runs hundreds of
// parallel regions of tens of microseconds each; waking a sleeping thread through the kernel takes
// about as long as that, so without spinning a second thread saves nothing (measured: the copy task
// took 33.6 s on one thread and 33.9 s on two). Spinning no longer than this keeps an idle pool from
// burning a core. Measured on the clock, not counted in pause instructions: one pause takes about
// 10 cycles on some CPUs and 140 on others (24 ns on the Zen 5 this was measured on), so a count
// would be a different duration on every machine.
using Clock = std::chrono::steady_clock;
constexpr std::chrono::nanoseconds kSpinTime = std::chrono::microseconds(50);

// Spins (cpu_relax) while done() is false, until `budget` has passed; returns done(). The clock is
// read every 16 spins: a read costs about as much as a pause.
template <class Done>
bool spin_until(Done done, std::chrono::nanoseconds budget) {
  if (budget <= std::chrono::nanoseconds::zero()) return done();
  const Clock::time_point deadline = Clock::now() + budget;
  for (int spins = 1;; ++spins) {
    if (done()) return true;
    cpu_relax();
    if (spins % 16 == 0 && Clock::now() >= deadline) return done();
  }
}

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

// The pool's claim word: which job is current (its generation), how many pieces it has, and the next
// piece nobody has taken yet, in one atomic so that a thread taking a piece knows in the same step
// that the piece belongs to the job it woke for.
//   bits 63..32: generation   31..16: pieces   15..0: next piece
constexpr uint32_t generation_of(uint64_t claim) { return static_cast<uint32_t>(claim >> 32); }
constexpr int pieces_of(uint64_t claim) { return static_cast<int>((claim >> 16) & 0xFFFF); }
constexpr int next_piece_of(uint64_t claim) { return static_cast<int>(claim & 0xFFFF); }
constexpr uint64_t claim_word(uint32_t generation, int pieces) {
  return (uint64_t{generation} << 32) | (static_cast<uint64_t>(pieces) << 16);
}
constexpr int kMaxPieces = 0xFFFF;

std::atomic<int> thread_starts_left{-1};  // the test seam of detail::fail_thread_starts_after; -1: off
std::atomic<bool> workers_held{false};    // the test seam of detail::hold_workers

// A worker thread, or the error std::thread reports when the OS refuses one (EAGAIN at the
// process or user thread limit).
std::thread start_thread(std::function<void()> body) {
  if (thread_starts_left.load() >= 0 && thread_starts_left.fetch_sub(1) <= 0)
    throw std::system_error(std::make_error_code(std::errc::resource_unavailable_try_again),
                            "injected by the test seam");
  return std::thread(std::move(body));
}

// The caller and the workers take the job's pieces from a shared counter, each running pieces until
// none is left; the caller then waits until every piece taken is done. Which thread runs a piece
// does not change its result (the pieces' bounds are fixed by the job), so the results are the same
// whoever takes what. Taking, rather than handing each worker its piece, is what makes a busy
// machine harmless: a worker that the OS has not scheduled yet (another program has its core) takes
// nothing, and the caller runs that piece itself instead of waiting for the worker to get a core.
//
// Waiting for the next job, a worker spins for up to its spin budget, then sleeps on a condition
// variable. The budget adapts to the machine: a worker that saw a job while spinning yet found every
// piece taken, although the job had a piece for each worker up to it, was not running when it
// mattered (its core was busy with something else), so spinning only took a core from the caller or
// another program: it halves its budget. (A job with fewer pieces than threads leaves the last
// workers nothing without any of them being late: that changes no budget.) A worker that gets a
// piece doubles it again, up to kSpinTime. On a quiet machine every job finds its workers spinning, and
// they keep the whole budget.
//
// One job at a time: run() is entered only by the holder of busy_ (see run_on_pool), because the
// job slot, the error and the done count are the pool's, not the caller's.
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
    job_ = job;  // workers read it only after taking a piece of this generation (release/acquire below)
    job_.pieces = std::min(job_.pieces, kMaxPieces);
    if (profiler::enabled()) job_.phase = profiler::current_phase(), job_.published_ns = profiler::now_ns();
    error_ = nullptr;
    done_.store(0, std::memory_order_relaxed);
    const uint32_t generation = ++generation_;
    bool sleeping;
    {
      std::lock_guard lock(mutex_);  // a worker going to sleep checks the claim word under it
      claim_.store(claim_word(generation, job_.pieces), std::memory_order_release);
      sleeping = sleepers_ > 0;
    }
    if (sleeping) wake_.notify_all();
    take_pieces(generation, /*worker=*/false);
    {
      const profiler::Scope waiting(profiler::kPoolWait, job_.phase, profiler::Kind::Pool);
      auto all_done = [&] { return done_.load(std::memory_order_acquire) == job_.pieces; };
      if (!spin_until(all_done, kSpinTime))
        while (!all_done()) std::this_thread::yield();  // a worker's piece is long, or it lost its core
    }
    if (error_) std::rethrow_exception(error_);
  }

 private:
  // Takes and runs pieces of job `generation` until none is left; returns how many it ran.
  int take_pieces(uint32_t generation, bool worker) {
    int ran = 0;
    uint64_t claim = claim_.load(std::memory_order_acquire);
    while (generation_of(claim) == generation && next_piece_of(claim) < pieces_of(claim)) {
      if (!claim_.compare_exchange_weak(claim, claim + 1, std::memory_order_acq_rel, std::memory_order_acquire))
        continue;  // another thread took that piece (claim now holds the fresh word): try the next
      run_piece(next_piece_of(claim), worker);
      done_.fetch_add(1, std::memory_order_release);
      ++ran;
      claim = claim_.load(std::memory_order_acquire);
    }
    return ran;
  }

  void run_piece(int piece, bool worker) {
    // A worker's piece, profiled: how long after the job was handed out it began, and how long it ran.
    const bool profiled = worker && job_.published_ns != 0 && profiler::enabled();
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
      stopping_.store(true, std::memory_order_relaxed);
      claim_.store(claim_word(++generation_, 0), std::memory_order_release);  // wakes every worker
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
    workers_.clear();
  }

  void work(int index) {
    profiler::name_this_thread("pool worker " + std::to_string(index));
    uint32_t seen = 0;
    std::chrono::nanoseconds budget = kSpinTime;  // spinning before sleeping; adapts as the class comment says
    for (;;) {
      const bool slept =
          !spin_until([&] { return generation_of(claim_.load(std::memory_order_acquire)) != seen; }, budget);
      if (slept) {  // nothing came: sleep until the next job
        std::unique_lock lock(mutex_);
        ++sleepers_;
        wake_.wait(lock, [&] { return generation_of(claim_.load(std::memory_order_acquire)) != seen; });
        --sleepers_;
      }
      if (stopping_.load(std::memory_order_relaxed)) return;
      const uint64_t current = claim_.load(std::memory_order_acquire);
      seen = generation_of(current);
      if (workers_held.load(std::memory_order_relaxed)) continue;
      if (take_pieces(seen, /*worker=*/true) > 0)
        budget = std::min(kSpinTime, 2 * std::max(budget, std::chrono::nanoseconds(100)));
      else if (!slept && index < pieces_of(current))
        budget /= 2;  // spun, and a piece was there for it, yet it came late: its core was busy elsewhere
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;  // guards sleepers_ and error_; the claim word changes under it
  std::condition_variable wake_;
  Job job_;
  uint32_t generation_ = 0;  // the last job's; written only by run() and stop()
  std::atomic<uint64_t> claim_{0};
  std::atomic<int> done_{0};       // pieces of the current job finished
  std::atomic<bool> busy_{false};  // a caller is inside run()
  std::atomic<bool> stopping_{false};
  int sleepers_ = 0;
  std::exception_ptr error_;
};

int hardware_threads() { return std::max(1, static_cast<int>(std::thread::hardware_concurrency())); }

// The pool is shared: a caller keeps the one it started with alive while set_num_threads (on
// another thread) swaps in a new one; the old one's workers are joined when its last user is done.
std::mutex pool_mutex;
std::shared_ptr<ThreadPool> pool;

std::shared_ptr<ThreadPool> the_pool() {
  std::lock_guard lock(pool_mutex);
  if (!pool) pool = std::make_shared<ThreadPool>(threads_from_environment());
  return pool;
}

}  // namespace

// GRADFORMER_THREADS, strictly (digits only, no wrapping): 0 or unset means the hardware's count,
// like --threads 0; anything else outside [1, max_threads()] is an error rather than ignored.
int threads_from_environment() {
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

void hold_workers(bool held) { workers_held.store(held); }

// One piece per thread. Several smaller pieces per thread, taken by whichever thread is free, would
// let a faster core take more of a job; measured, they made training slower (the copy task and the
// d_model 512 step, about 10%, alternated runs). The likely reason: with one piece each, thread t works on the same
// part of every tensor from one op to the next, so that part is still in its core's own cache, and
// pieces that land on either core lose that.
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
