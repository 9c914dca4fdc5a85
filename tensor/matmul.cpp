// matmul: shapes, batching and broadcasting, and the choice of kernel. The arithmetic is in
// gemm.cpp (the blocked loops) and gemm_kernel_*.cpp (the micro-kernels).
//   a: [..., M, K], b: [..., K, N] -> out: [..., M, N]
#include "tensor/matmul.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "tensor/gemm.h"
#include "tensor/parallel.h"
#include "tensor/profiler.h"

namespace gradformer {
namespace detail {

// (the compiler's CPU check also asks the OS whether it saves the 256-bit and 512-bit registers)
bool avx2_available() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool cpu_ok = (__builtin_cpu_init(), __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"));
  return cpu_ok && avx2_kernels<float>() != nullptr;
#else
  return false;
#endif
}

bool avx512_available() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool cpu_ok =
      (__builtin_cpu_init(),
       __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"));
  return cpu_ok && avx512_kernels<float>() != nullptr;
#else
  return false;
#endif
}

namespace {

MatmulKernel resolve(MatmulKernel k) {
  if (k != MatmulKernel::Auto) return k;
  return avx512_available() ? MatmulKernel::Avx512 : avx2_available() ? MatmulKernel::Avx2 : MatmulKernel::Portable;
}

// GRADFORMER_MATMUL: a kernel's name chooses it, when this build and CPU have it. Anything else
// (a typo, a kernel this CPU lacks) keeps the automatic choice and says so on stderr: this runs
// before main, where an exception would end the program with no message.
MatmulKernel initial_kernel() {
  const char* env = std::getenv("GRADFORMER_MATMUL");
  if (!env || !*env) return resolve(MatmulKernel::Auto);
  for (MatmulKernel k : {MatmulKernel::Auto, MatmulKernel::Avx512, MatmulKernel::Avx2, MatmulKernel::Portable})
    if (std::string_view(env) == matmul_kernel_name(k)) {
      if (matmul_kernel_available(k)) return resolve(k);
      std::fprintf(stderr, "gradformer: GRADFORMER_MATMUL=%s: this build or CPU lacks that kernel; using %s\n", env,
                   matmul_kernel_name(resolve(MatmulKernel::Auto)));
      return resolve(MatmulKernel::Auto);
    }
  std::fprintf(stderr, "gradformer: GRADFORMER_MATMUL=%s is not one of avx512, avx2, portable, auto; using %s\n", env,
               matmul_kernel_name(resolve(MatmulKernel::Auto)));
  return resolve(MatmulKernel::Auto);
}

std::atomic<MatmulKernel>& current_kernel() {
  static std::atomic<MatmulKernel> kernel{initial_kernel()};
  return kernel;
}

}  // namespace

template <class T>
const MicroKernels<T>& active_kernels() {
  switch (current_kernel().load(std::memory_order_relaxed)) {
    case MatmulKernel::Avx512:
      return *avx512_kernels<T>();
    case MatmulKernel::Avx2:
      return *avx2_kernels<T>();
    default:
      return portable_kernels<T>();
  }
}
template const MicroKernels<float>& active_kernels<float>();
template const MicroKernels<double>& active_kernels<double>();

}  // namespace detail

bool matmul_kernel_available(MatmulKernel kernel) {
  switch (kernel) {
    case MatmulKernel::Avx512:
      return detail::avx512_available();
    case MatmulKernel::Avx2:
      return detail::avx2_available();
    default:
      return true;
  }
}

const char* matmul_kernel_name(MatmulKernel kernel) {
  switch (kernel) {
    case MatmulKernel::Avx512:
      return "avx512";
    case MatmulKernel::Avx2:
      return "avx2";
    case MatmulKernel::Portable:
      return "portable";
    default:
      return "auto";
  }
}

void set_matmul_kernel(MatmulKernel kernel) {
  if (!matmul_kernel_available(kernel))
    throw ValueError(message("set_matmul_kernel: the ", matmul_kernel_name(kernel),
                             " kernel is not available (not built in, or this CPU lacks the instructions)"));
  detail::current_kernel().store(detail::resolve(kernel));
}

MatmulKernel matmul_kernel() { return detail::current_kernel().load(); }

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

// The strides of x's batch dimensions, aligned to the broadcast batch shape `batch` (from the
// right): 0 where x lacks the dimension or has size 1 there, so that every element of the batch
// finds its operand with the same arithmetic, broadcast or not.
static Shape batch_strides(const Tensor& x, const Shape& batch) {
  Shape strides = batch;
  const int missing = batch.rank() - (x.dim() - 2);
  for (int d = 0; d < batch.rank(); ++d)
    strides[d] = d < missing || x.shape()[d - missing] == 1 ? 0 : x.strides()[d - missing];
  return strides;
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined()) throw ValueError("matmul: undefined tensor");
  const int ra = a.dim(), rb = b.dim();
  if (ra < 2 || rb < 2)
    throw ShapeError(
        message("matmul: both operands need at least 2 dimensions, a is ", a.shape(), ", b is ", b.shape()));
  if (a.dtype() != b.dtype()) throw DTypeError(message("matmul: dtypes differ: ", a.dtype(), " and ", b.dtype()));
  if (!is_floating(a.dtype()))
    throw DTypeError(message("matmul: expected a floating dtype (float32 or float64), got ", a.dtype()));
  const int64_t M = a.shape()[ra - 2], K = a.shape()[ra - 1], N = b.shape()[rb - 1];
  if (b.shape()[rb - 2] != K)
    throw ShapeError(message("matmul: inner dimensions differ: a is ", a.shape(), ", b is ", b.shape()));

  // out: [batch..., M, N], batch = the broadcast of a's and b's leading dimensions (none for two
  // matrices, the common case, which skips the batch arithmetic below)
  const bool batched = ra > 2 || rb > 2;
  const Shape batch = batched ? broadcast_shapes(Shape(std::span(a.shape().begin(), ra - 2)),
                                                 Shape(std::span(b.shape().begin(), rb - 2)), "matmul")
                              : Shape{};
  Shape out_shape = batch;
  out_shape.push_back(M), out_shape.push_back(N);
  Tensor out = Tensor::empty(out_shape, a.dtype());
  if (out.numel() == 0) return out;
  const int64_t batches = batch.numel();
  profiler::count_flops(2 * M * N * K * batches);  // a multiply and an add per term of each sum
  // the matrices' own strides: A(i, k) = pa[i * sam + k * sak], B(k, j) = pb[k * sbk + j * sbn]
  const int64_t sam = a.strides()[ra - 2], sak = a.strides()[ra - 1], sbk = b.strides()[rb - 2],
                sbn = b.strides()[rb - 1];
  const double flops = 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);

  dispatch_floating(a.dtype(), "matmul", [&]<class T>() {
    const detail::MicroKernels<T>& uk = detail::active_kernels<T>();
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* pc = out.data<T>();
    // for one product (the matrix-vector path, bound by memory, decides by the bytes it reads)
    const bool gemv = detail::use_gemv_path(M, N, K, sbk, sbn, sizeof(T));
    const int threads = flops < kMinThreadedFlops && !gemv ? 1 : num_threads();
    if (!batched) return detail::gemm<T>(uk, M, N, K, {pa, sam, sak}, {pb, sbk, sbn}, pc, N, threads);
    const int r = batch.rank();
    const Shape a_bs = batch_strides(a, batch), b_bs = batch_strides(b, batch);
    // out[bi] = A[bi] · B[bi]: the flat batch index bi is unravelled into each operand's offset.
    auto product = [&](int64_t bi, int threads) {
      int64_t oa = 0, ob = 0;
      for (int64_t d = r - 1, rest = bi; d >= 0; --d) {
        const int dim = static_cast<int>(d);
        oa += rest % batch[dim] * a_bs[dim];
        ob += rest % batch[dim] * b_bs[dim];
        rest /= batch[dim];
      }
      detail::gemm<T>(uk, M, N, K, {pa + oa, sam, sak}, {pb + ob, sbk, sbn}, pc + bi * M * N, N, threads);
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
      const double cost = M <= detail::kGemvMaxRows ? std::max(tile_flops, kFlopsPerByteRead * bytes) : tile_flops;
      const int64_t grain = std::max<int64_t>(1, static_cast<int64_t>(kMinBatchFlopsPerThread / cost));
      parallel_for(0, batches, grain, [&](int64_t lo, int64_t hi) {
        for (int64_t bi = lo; bi < hi; ++bi) product(bi, 1);
      });
    } else {
      for (int64_t bi = 0; bi < batches; ++bi) product(bi, num_threads());
    }
  });
  return out;
}

}  // namespace gradformer
