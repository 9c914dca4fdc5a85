// A small pool of std::threads that kernels share. parallel_for splits a range into one piece per
// thread (never pieces smaller than `grain`, so tiny tensors stay on the calling thread).
// Kernels only split work whose result does not depend on how it was split, so every result is the
// same for every thread count.
//
// Thread safety. Any number of application threads may call parallel_for (and so any kernel) at
// once: the pool runs one call at a time, and a call made while it is busy runs serially on its
// caller's thread (no waiting, no deadlock, the same result). set_num_threads and num_threads may
// be called from any thread at any time; calls already running finish on the pool they started
// with. What is not safe is what is never safe in C++: two threads writing the same tensor, or one
// writing a tensor another reads, at the same time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>

namespace gradformer {

/// The number of threads kernels use (the caller counts as one). Default: the GRADFORMER_THREADS
/// environment variable (0: all cores; ValueError, at first use, if it is not a count up to max_threads()),
/// else the machine's hardware threads. ValueError if n < 1 or n > max_threads(); ResourceError if
/// the operating system refuses a thread (the workers already started are stopped, and the pool in
/// use before stays).
void set_num_threads(int n);
int num_threads();
/// The most threads set_num_threads accepts: 4 per hardware thread, and at least 256. More only
/// add switching; the bound stops a typo (--threads 100000) from exhausting the process limit.
int max_threads();
/// The thread count GRADFORMER_THREADS asks for (unset or 0: the hardware's), read without
/// starting the pool: a ValueError naming the variable and its value for anything but a count
/// from 0 to max_threads(), so a program can refuse a bad environment before any work.
int threads_from_environment();

namespace detail {
bool inside_parallel_region();
/// Tests only: after n more thread starts, every start fails as if the OS refused it; -1 turns it off.
void fail_thread_starts_after(int n);
/// Tests only: while held, the pool's workers take no piece, as if the OS never gave them a core.
void hold_workers(bool held);
/// Runs call(fn, lo, hi) over the pieces on the pool's threads (the caller takes piece 0).
void run_on_pool(int64_t begin, int64_t end, int64_t grain, void (*call)(void* fn, int64_t lo, int64_t hi), void* fn);
}  // namespace detail

/// The grain policy: a parallel_for task gets about kWorkPerTask units of work, a unit being one
/// simple operation on one element (read, add, write back). That is some microseconds of work,
/// comparable to what handing a task to a pooled thread and waiting for it costs (more when the
/// thread has to be woken): smaller tasks would spend more on threading than they save, and a range
/// with less than two tasks' work stays on the calling thread. Kernels that do more per element
/// (an exp or a sqrt, two or three passes over a row) count 2 units per element, so a task gets
/// about 16K elements of softmax or layer_norm and 32K of an add.
/// (Matmul has its own rule, in flops: it knows each product's cost exactly.)
inline constexpr int64_t kWorkPerTask = 32768;

/// The grain to pass to parallel_for when each item of the range costs work_per_item units:
/// items per task, at least 1.   grain_for(1) for an elementwise op; grain_for(2 * C) for rows of C.
constexpr int64_t grain_for(int64_t work_per_item) {
  return std::max<int64_t>(1, kWorkPerTask / std::max<int64_t>(1, work_per_item));
}

/// Runs fn(lo, hi) over contiguous pieces covering [begin, end), in parallel, and returns when all
/// are done. An exception thrown by any piece is rethrown here. Called from inside a piece, it runs
/// serially (no nested parallelism). Work too small for two pieces runs right here, without
/// touching the pool: tiny tensors pay nothing for threading (not even an allocation, which a
/// std::function holding a kernel's lambda would cost).
template <class F>
void parallel_for(int64_t begin, int64_t end, int64_t grain, F&& fn) {
  if (end <= begin) return;
  if (end - begin < 2 * std::max<int64_t>(grain, 1) || detail::inside_parallel_region()) {
    fn(begin, end);
    return;
  }
  using Fn = std::remove_reference_t<F>;
  detail::run_on_pool(
      begin, end, grain, [](void* f, int64_t lo, int64_t hi) { (*static_cast<Fn*>(f))(lo, hi); },
      const_cast<void*>(static_cast<const void*>(std::addressof(fn))));
}

}  // namespace gradformer
