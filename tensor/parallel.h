// A small pool of std::threads that kernels share. parallel_for splits a range into one piece per
// thread (never pieces smaller than `grain`, so tiny tensors stay on the calling thread).
// Kernels only split work whose result does not depend on how it was split, so every result is the
// same for every thread count.
#pragma once

#include <cstdint>
#include <functional>

namespace gradformer {

/// The number of threads kernels use (the caller counts as one). Default: the GRADFORMER_THREADS
/// environment variable, else the machine's hardware threads. ValueError if n < 1.
void set_num_threads(int n);
int num_threads();

/// Runs fn(lo, hi) over contiguous pieces covering [begin, end), in parallel, and returns when all
/// are done. An exception thrown by any piece is rethrown here. Called from inside a piece, it runs
/// serially (no nested parallelism).
void parallel_for(int64_t begin, int64_t end, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

}  // namespace gradformer
