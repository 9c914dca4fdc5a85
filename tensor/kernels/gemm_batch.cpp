// A batch of matrix products and how it shares the threads: one product by rows, or many products
// each on one thread, by what the kernel will really do. matmul (tensor/matmul.cpp) hands the
// batch over once its shapes, broadcasting and operands' offsets are worked out.
#include <algorithm>

#include "tensor/kernels/gemm.h"
#include "tensor/kernels/parallel.h"
#include "tensor/support/profiler.h"

namespace gradformer::detail {

namespace {

// Below this many flops per product, a batch is split between threads by whole products rather
// than each product by rows: attention's many 64 x 64 products each take a few microseconds, less
// than waking a thread costs.
constexpr double kBatchSplitFlops = 32e6;
// ...and a thread gets at least this much work (about 10 µs), else the batch stays on one thread.
constexpr double kMinBatchFlopsPerThread = 1e6;
// A product with few rows of A (one token's attention: q [1, d_k] against the keys [T, d_k]) does
// two flops per element of B it reads, and waits on memory, not on arithmetic: its cost is counted
// as this many flops per byte of B (about a core's matmul flops over its memory bandwidth), so
// that the batch of such products is shared between threads when reading it is worth it.
constexpr double kFlopsPerByteRead = 8;
// A single product this small never uses more than one thread (gemm has the same rule; checking it
// here as well saves asking the pool how many threads it has).
constexpr double kMinThreadedFlops = 4e6;

}  // namespace

template <class T>
void gemm_batch(int64_t M, int64_t N, int64_t K, const T* a, const int64_t* a_offsets, int64_t sam, int64_t sak,
                const T* b, const int64_t* b_offsets, int64_t sbk, int64_t sbn, T* c, int64_t batches) {
  profiler::count_flops(2 * M * N * K * batches);  // a multiply and an add per term of each sum
  const double flops = 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  const MicroKernels<T>& uk = active_kernels<T>();
  // for one product (the matrix-vector path, bound by memory, decides by the bytes it reads)
  const bool gemv = use_gemv_path(M, N, K, sbk, sbn, sizeof(T));
  const int threads = flops < kMinThreadedFlops && !gemv ? 1 : num_threads();
  auto product = [&](int64_t bi, int threads) {
    gemm<T>(uk, M, N, K, {a + a_offsets[bi], sam, sak}, {b + b_offsets[bi], sbk, sbn}, c + bi * M * N, N, threads);
  };
  if (batches == 1) {
    product(0, threads);
  } else if (flops < kBatchSplitFlops || batches >= 4 * num_threads()) {
    // many products: each thread takes whole products. A product's cost is the work the kernel
    // does, whole MR x NR tiles: for a 9 x 9 product an 8 x 32 kernel computes two tiles, 16 x 32
    // outputs, six times the product's own flops (counting only those kept the copy task's 9 x 9
    // decoder heads on one thread).
    auto whole_tiles = [](int64_t n, int tile) { return static_cast<double>((n + tile - 1) / tile * tile); };
    const double tile_flops = 2.0 * whole_tiles(M, uk.mr) * whole_tiles(N, uk.nr) * static_cast<double>(K);
    const double bytes = static_cast<double>(N) * static_cast<double>(K) * static_cast<double>(sizeof(T));
    const double cost = M <= kGemvMaxRows ? std::max(tile_flops, kFlopsPerByteRead * bytes) : tile_flops;
    const int64_t grain = std::max<int64_t>(1, static_cast<int64_t>(kMinBatchFlopsPerThread / cost));
    parallel_for(0, batches, grain, [&](int64_t lo, int64_t hi) {
      for (int64_t bi = lo; bi < hi; ++bi) product(bi, 1);
    });
  } else {
    for (int64_t bi = 0; bi < batches; ++bi) product(bi, num_threads());
  }
}

template void gemm_batch<float>(int64_t, int64_t, int64_t, const float*, const int64_t*, int64_t, int64_t, const float*,
                                const int64_t*, int64_t, int64_t, float*, int64_t);
template void gemm_batch<double>(int64_t, int64_t, int64_t, const double*, const int64_t*, int64_t, int64_t,
                                 const double*, const int64_t*, int64_t, int64_t, double*, int64_t);

}  // namespace gradformer::detail
