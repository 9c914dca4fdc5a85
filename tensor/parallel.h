// A small pool of std::threads that kernels share. parallel_for splits a range into one piece per
// thread (never pieces smaller than `grain`, so tiny tensors stay on the calling thread).
// Kernels only split work whose result does not depend on how it was split, so every result is the
// same for every thread count.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>

namespace gradformer {

/// The number of threads kernels use (the caller counts as one). Default: the GRADFORMER_THREADS
/// environment variable, else the machine's hardware threads. ValueError if n < 1.
void set_num_threads(int n);
int num_threads();

namespace detail {
bool inside_parallel_region();
/// Runs call(fn, lo, hi) over the pieces on the pool's threads (the caller takes piece 0).
void run_on_pool(int64_t begin, int64_t end, int64_t grain, void (*call)(void* fn, int64_t lo, int64_t hi), void* fn);
}  // namespace detail

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
