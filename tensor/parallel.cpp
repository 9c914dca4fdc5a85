#include "tensor/parallel.h"

#include <algorithm>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "tensor/error.h"

namespace gradformer {
namespace {

thread_local bool running_a_piece = false;  // this thread is inside a parallel_for piece

// Workers sleep on a condition variable until the caller posts a job: `pieces` calls of
// task(piece). The caller runs piece 0 itself, worker w runs piece w + 1.
class ThreadPool {
 public:
  explicit ThreadPool(int threads) {
    for (int w = 0; w + 1 < threads; ++w) workers_.emplace_back([this, w] { work(w + 1); });
  }
  ~ThreadPool() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
  }
  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  void run(int pieces, const std::function<void(int)>& task) {
    {
      std::lock_guard lock(mutex_);
      task_ = &task;
      pieces_ = pieces;
      pending_ = pieces - 1;
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    run_piece(task, 0);
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
    task_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void run_piece(const std::function<void(int)>& task, int piece) {
    running_a_piece = true;
    try {
      task(piece);
    } catch (...) {
      std::lock_guard lock(mutex_);
      if (!error_) error_ = std::current_exception();
    }
    running_a_piece = false;
  }

  void work(int piece) {
    uint64_t seen = 0;
    for (;;) {
      const std::function<void(int)>* task;
      {
        std::unique_lock lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
        if (piece >= pieces_) continue;  // this job has fewer pieces than threads
        task = task_;
      }
      run_piece(*task, piece);
      std::lock_guard lock(mutex_);
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* task_ = nullptr;
  int pieces_ = 0, pending_ = 0;
  uint64_t generation_ = 0;
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
  pool.run(pieces, [&](int piece) {
    const int64_t lo = begin + n * piece / pieces, hi = begin + n * (piece + 1) / pieces;
    if (lo < hi) call(fn, lo, hi);
  });
}

}  // namespace detail
}  // namespace gradformer
