// The BLIS/Goto matrix multiply: five loops around one register-blocked micro-kernel.
//
//   C[M, N] = A[M, K] · B[K, N]
//
//   loop 5, jc  (NC columns of B and C)       B[K, NC] slice
//    loop 4, pc  (KC of the K dimension)      pack B[KC, NC] into KC x NR panels  -> lives in L3
//     loop 3, ic  (MC rows of A and C)        pack A[MC, KC] into MR x KC panels  -> lives in L2
//      loop 2, jr  (NR columns)               one KC x NR panel of packed B       -> lives in L1
//       loop 1, ir  (MR rows)                 one MR x KC panel of packed A, streamed from L2
//        micro-kernel                         C[MR, NR] in registers, k = 0..KC-1
//
// Each loop exists to keep one operand in one level of the cache while the loop inside it reuses
// it, so the micro-kernel's loads hit L1 or L2 instead of memory. Packing copies each block once
// into the exact order the micro-kernel reads it (unit stride, 64-byte aligned, zero-padded to
// whole MR x NR tiles), which also absorbs any transposition: a transposed operand is just another
// pair of strides to the packing loops, never a copy of the whole matrix.
//
// Block sizes for a common x86-64 server core (32 KiB L1d, 512 KiB or more of L2 per core, tens of
// MiB of L3), chosen on an AMD EPYC Zen 3 (512 KiB L2, 32 MiB L3) and kept on Zen 4 (1 MiB L2), where
// the matmul stays at par with OpenBLAS; they fit the smaller of the two caches:
//   KC = 256: the B micro-panel, KC x NR = 256 x 16 floats = 16 KiB (256 x 8 doubles, also
//             16 KiB), fills half of L1, leaving the other half for the A micro-panel being
//             streamed (6 x 256 x 4 B = 6 KiB) and the C tile. A larger KC would push the B
//             panel out of L1; a smaller one would re-read and re-write C more often (C is loaded
//             and stored once per KC step). With the AVX-512 kernel's NR = 32 the B panel is
//             32 KiB, all of L1, and partly read from L2; halving KC for it was measured slower
//             on Zen 4 (2048³: 97 against 103 GFLOP/s), so KC stays the same for every kernel.
//   MC = 144 floats (72 doubles): the packed A block, MC x KC = 144 x 256 x 4 B = 144 KiB, sits in
//             L2 with room to spare for the B micro-panels passing through on their way to L1.
//             A multiple of MR = 6 (AVX2) and of MR = 8 (AVX-512).
//   NC = 4080: the packed B block, KC x NC = 256 x 4080 x 4 B ≈ 4 MiB, lives in L3 (32 MiB, shared
//             by the cores); a multiple of NR. Most products in a Transformer have N < NC, so
//             loop 5 runs once.
// Threads: loop 3's rows are shared between threads in whole MR strips (a few chunks per thread,
// each taken by whichever thread is free); all threads read one packed B (and pack it together),
// each packs its own A. Every element of C is computed by one thread, with the same blocking and
// k order whatever the thread count, so results never depend on it.
#include "tensor/kernels/gemm.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>

#include "tensor/kernels/parallel.h"

namespace gradformer::detail {
namespace {

constexpr int64_t kKC = 256;
constexpr int64_t kMCBytes = 144 * 256 * 4;  // the packed A block: MC x KC elements
constexpr int64_t kNC = 4080;
// Below this many flops a product is not worth waking another thread for (about 40 µs on one core).
constexpr double kMinFlopsPerThread = 4e6;
// Products up to this many multiply-adds take the small path (no packing of A): at 64 x 64 x 64
// copying A into panels costs more than the faster reads save.
constexpr int64_t kSmallMaxMNK = 96 * 96 * 96;
// The matrix-vector path gives a thread at least this much of B to read (about 10 µs from memory),
// and takes only a B larger than it: a smaller one, packed, stays in a core's L2 cache (an
// attention head's keys at 1024 positions are just that size), so packing it costs no extra trips
// to memory, and such products keep the bits they had before this path existed.
constexpr int64_t kGemvMinBytes = 256 * 1024;
constexpr double kGemvMinBytesPerThread = kGemvMinBytes;

struct Blocking {
  int64_t kc, mc, nc;
};

template <class T>
Blocking blocking_for(const MicroKernels<T>& uk) {
  const int64_t mc = std::max<int64_t>(uk.mr, kMCBytes / (kKC * static_cast<int64_t>(sizeof(T))) / uk.mr * uk.mr);
  return {kKC, mc, kNC / uk.nr * uk.nr};
}

// A 64-byte aligned scratch buffer that grows but is never shrunk: each thread keeps its own, so
// packing does not allocate on every call.
class ScratchBuffer {
 public:
  ~ScratchBuffer() { release(); }
  template <class T>
  T* get(int64_t count) {
    const size_t bytes = static_cast<size_t>(count) * sizeof(T);
    if (bytes > bytes_) {
      release();
      data_ = ::operator new (bytes, std::align_val_t{64});
      bytes_ = bytes;
    }
    return static_cast<T*>(data_);
  }

 private:
  void release() {
    if (data_) ::operator delete (data_, std::align_val_t{64});
    data_ = nullptr;
    bytes_ = 0;
  }
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

thread_local ScratchBuffer packed_a_buffer, packed_b_buffer;

// Runs fn(lo, hi) over chunks covering [0, n) on up to `threads` threads of the pool. The threads
// take the next chunk as they finish one (about 4 chunks per thread), so that a thread the OS
// schedules late, on a busy machine, does less of the work instead of holding everyone up. Which
// thread computes a chunk never changes the arithmetic, so the result is the same either way.
template <class F>
void share(int threads, int64_t n, F&& fn) {
  if (threads <= 1 || n <= 1) {
    fn(int64_t{0}, n);
    return;
  }
  const int64_t chunk = std::max<int64_t>(1, (n + 4 * threads - 1) / (4 * threads));
  std::atomic<int64_t> next{0};
  parallel_for(0, threads, 1, [&](int64_t, int64_t) {
    for (int64_t lo; (lo = next.fetch_add(chunk)) < n;) fn(lo, std::min(n, lo + chunk));
  });
}

// ---- packing --------------------------------------------------------------------------------

// Panels lo..hi-1 of width W, each kc rows long, from a source whose runs of W elements are
// contiguous: dst[(p * kc + k) * W + i] = src[k * stride + p * W + i]. Packs a row-major B
// (W = NR) and a transposed A (W = MR). Eight source rows at a time are dealt out to every panel:
// the reads stay within a few KiB (in L1), and each panel receives 8 x W contiguous elements at once
// rather than W at a time, a whole panel apart. memcpy of a compile-time size is a few vector moves.
template <int W, class T>
void deal_runs(int64_t kc, int64_t lo, int64_t hi, const T* src, int64_t stride, T* dst) {
  for (int64_t k0 = 0; k0 < kc; k0 += 8) {
    const int64_t k1 = std::min(kc, k0 + 8);
    for (int64_t p = lo; p < hi; ++p)
      for (int64_t k = k0; k < k1; ++k) std::memcpy(dst + (p * kc + k) * W, src + k * stride + p * W, sizeof(T) * W);
  }
}

// deal_runs for the widths the kernels use; false if w is not one of them.
template <class T>
bool deal_runs(int w, int64_t kc, int64_t lo, int64_t hi, const T* src, int64_t stride, T* dst) {
  switch (w) {
    case 4:
      return deal_runs<4>(kc, lo, hi, src, stride, dst), true;
    case 6:
      return deal_runs<6>(kc, lo, hi, src, stride, dst), true;
    case 8:
      return deal_runs<8>(kc, lo, hi, src, stride, dst), true;
    case 16:
      return deal_runs<16>(kc, lo, hi, src, stride, dst), true;
    case 32:
      return deal_runs<32>(kc, lo, hi, src, stride, dst), true;
    default:
      return false;
  }
}

// One KC x NR panel of B: dst[k * NR + j] = B(k, j) for j < n, zero for n <= j < NR.
//   b points at B(0, 0) of the panel; B(k, j) = b[k * rs + j * cs].
template <class T>
void pack_b_panel(const MicroKernels<T>& uk, int64_t kc, int n, const T* b, int64_t rs, int64_t cs, T* dst) {
  const int nr = uk.nr;
  if (cs == 1 && n == nr && deal_runs(nr, kc, 0, 1, b, rs, dst)) return;    // rows of B are contiguous
  if (rs == 1 && uk.pack_b_cols) return uk.pack_b_cols(kc, b, cs, n, dst);  // B stored transposed
  if (n < nr)
    for (int64_t k = 0; k < kc; ++k) std::fill(dst + k * nr + n, dst + (k + 1) * nr, T(0));
  if (rs == 1) {  // B is stored transposed: each column is contiguous
    for (int j = 0; j < n; ++j) {
      const T* col = b + j * cs;
      for (int64_t k = 0; k < kc; ++k) dst[k * nr + j] = col[k];
    }
  } else {
    for (int64_t k = 0; k < kc; ++k)
      for (int j = 0; j < n; ++j) dst[k * nr + j] = b[k * rs + j * cs];
  }
}

// One MR x KC panel of A: dst[k * MR + r] = A(r, k) for r < m, zero for m <= r < MR.
//   a points at A(0, 0) of the panel; A(r, k) = a[r * rs + k * cs].
template <class T>
void pack_a_panel(const MicroKernels<T>& uk, int64_t kc, int m, const T* a, int64_t rs, int64_t cs, T* dst) {
  const int mr = uk.mr;
  if (rs == 1 && m == mr && deal_runs(mr, kc, 0, 1, a, cs, dst)) return;    // A stored transposed
  if (cs == 1 && uk.pack_a_rows) return uk.pack_a_rows(kc, a, rs, m, dst);  // rows of A contiguous
  if (m < mr)
    for (int64_t k = 0; k < kc; ++k) std::fill(dst + k * mr + m, dst + (k + 1) * mr, T(0));
  if (cs == 1) {  // rows of A are contiguous
    for (int r = 0; r < m; ++r) {
      const T* row = a + r * rs;
      for (int64_t k = 0; k < kc; ++k) dst[k * mr + r] = row[k];
    }
  } else {
    for (int64_t k = 0; k < kc; ++k)
      for (int r = 0; r < m; ++r) dst[k * mr + r] = a[r * rs + k * cs];
  }
}

}  // namespace

// ---- the five loops -------------------------------------------------------------------------

template <class T>
void gemm_packed(const MicroKernels<T>& uk, int64_t M, int64_t N, int64_t K, const MatrixRef<T>& A,
                 const MatrixRef<T>& B, T* c, int64_t ldc, int threads) {
  const Blocking bs = blocking_for(uk);
  const int64_t MR = uk.mr, NR = uk.nr;
  const int64_t nc_max = std::min(bs.nc, (N + NR - 1) / NR * NR);
  T* packed_b = packed_b_buffer.get<T>(bs.kc * nc_max);  // this thread's; the others read it

  for (int64_t jc = 0; jc < N; jc += bs.nc) {  // loop 5: NC columns of C
    const int64_t nc = std::min(bs.nc, N - jc);
    const int64_t b_panels = (nc + NR - 1) / NR;
    for (int64_t pc = 0; pc < K; pc += bs.kc) {  // loop 4: a KC slice of K
      const int64_t kc = std::min(bs.kc, K - pc);
      // B[pc:pc+kc, jc:jc+nc] -> b_panels panels of kc x NR, panel p at packed_b + p * kc * NR
      share(threads, b_panels, [&](int64_t lo, int64_t hi) {
        const T* b = B.data + pc * B.rs + jc * B.cs;
        if (B.cs == 1) {  // rows of B contiguous: whole panels row by row, the ragged one below
          const int64_t full = std::clamp<int64_t>(nc / NR, lo, hi);
          if (deal_runs(uk.nr, kc, lo, full, b, B.rs, packed_b)) lo = full;
        }
        for (int64_t p = lo; p < hi; ++p) {
          const int n = static_cast<int>(std::min(NR, nc - p * NR));
          pack_b_panel(uk, kc, n, B.data + pc * B.rs + (jc + p * NR) * B.cs, B.rs, B.cs, packed_b + p * kc * NR);
        }
      });
      // Rows of C shared between threads in whole MR strips; each walks its rows MC at a time.
      const int64_t strips = (M + MR - 1) / MR;
      share(threads, strips, [&](int64_t lo, int64_t hi) {
        const int64_t row_end = std::min(M, hi * MR);
        T* packed_a = packed_a_buffer.get<T>(bs.mc * kc + MR);   // + MR: room for pack_a_rows' overrun
        for (int64_t ic = lo * MR; ic < row_end; ic += bs.mc) {  // loop 3: MC rows of C
          const int64_t mc = std::min(bs.mc, row_end - ic);
          // A[ic:ic+mc, pc:pc+kc] -> panels of MR x kc, panel q at packed_a + q * kc * MR
          int64_t q = 0;
          if (A.rs == 1 && deal_runs(uk.mr, kc, 0, mc / MR, A.data + ic + pc * A.cs, A.cs, packed_a))
            q = mc / MR;  // A stored transposed: whole panels row by row, the ragged one below
          for (; q * MR < mc; ++q) {
            const int m = static_cast<int>(std::min(MR, mc - q * MR));
            pack_a_panel(uk, kc, m, A.data + (ic + q * MR) * A.rs + pc * A.cs, A.rs, A.cs, packed_a + q * kc * MR);
          }
          for (int64_t jr = 0; jr < nc; jr += NR) {  // loop 2: one KC x NR panel of B, in L1
            const int n = static_cast<int>(std::min(NR, nc - jr));
            const T* bp = packed_b + (jr / NR) * kc * NR;
            for (int64_t ir = 0; ir < mc; ir += MR) {  // loop 1: one MR x KC panel of A, from L2
              const int m = static_cast<int>(std::min(MR, mc - ir));
              uk.packed(kc, packed_a + (ir / MR) * kc * MR, bp, c + (ic + ir) * ldc + jc + jr, ldc, m, n, pc > 0);
            }
          }
        }
      });
    }
  }
}

// ---- the small path -------------------------------------------------------------------------

// For attention-sized products (64 x 64 x 64) everything fits in L1 already, and packing A would
// cost a good share of the multiply itself. A is read in place through its strides; B is read in
// place when its rows are contiguous, else packed once into K x NR panels (a transposed B, as in
// Q·Kᵀ). Loop order: each B panel (K x NR) stays in L1 while all of A's rows pass over it.
template <class T>
void gemm_small(const MicroKernels<T>& uk, int64_t M, int64_t N, int64_t K, const MatrixRef<T>& A,
                const MatrixRef<T>& B, T* c, int64_t ldc) {
  const int64_t MR = uk.mr, NR = uk.nr;
  const T* b = B.data;
  int64_t rsb = B.rs, panel_stride = NR;  // B(k, jr + j) = b[(jr / NR) * panel_stride + k * rsb + j]
  if (B.cs != 1) {
    const int64_t panels = (N + NR - 1) / NR;
    T* packed = packed_b_buffer.get<T>(panels * K * NR);
    for (int64_t p = 0; p < panels; ++p)
      pack_b_panel(uk, K, static_cast<int>(std::min(NR, N - p * NR)), B.data + p * NR * B.cs, B.rs, B.cs,
                   packed + p * K * NR);
    b = packed, rsb = NR, panel_stride = K * NR;
  }
  for (int64_t jr = 0; jr < N; jr += NR) {
    const int n = static_cast<int>(std::min(NR, N - jr));
    const T* bp = b + (jr / NR) * panel_stride;
    for (int64_t ir = 0; ir < M; ir += MR) {
      const int m = static_cast<int>(std::min(MR, M - ir));
      uk.unpacked(K, A.data + ir * A.rs, A.rs, A.cs, bp, rsb, c + ir * ldc + jr, ldc, m, n, false);
    }
  }
}

bool use_small_path(int64_t M, int64_t N, int64_t K) { return M * N * K <= kSmallMaxMNK; }

// ---- the matrix-vector path -----------------------------------------------------------------

// One token at a time through a Linear is A [1, d] times B = Wᵀ: each element of B is used once
// per row of A, so the product is bound by reading B from memory, and packing B (as gemm_packed
// does) would read it, write a copy and read that again: two to three times the traffic. Here B is
// read once, in place, with the rows of A (at most kGemvMaxRows) kept in the cache:
//   - B's columns contiguous (B = Wᵀ, W [N, K] the Linear's weight): C(r, j) = A row r · W row j,
//     one row of W at a time (the kernel's dot), front to back, so the weight is read as one stream,
//     taking A's rows kDotMaxRows at a time while that row of W stays in the cache;
//   - B's rows contiguous (B = W [K, N]): the unpacked micro-kernel over NR columns at a time, A's
//     rows MR at a time.
// Either way each element of C is one row of A times one column of B, summed the same way whatever
// the other rows are: a row's result does not depend on how many rows come with it.
// Threads take groups of columns of C; a product worth less than kGemvMinBytesPerThread of B per
// thread stays on fewer threads.
template <class T>
void gemv(const MicroKernels<T>& uk, int64_t M, int64_t N, int64_t K, const MatrixRef<T>& A, const MatrixRef<T>& B,
          T* c, int64_t ldc, int threads) {
  const double bytes = static_cast<double>(N) * static_cast<double>(K) * sizeof(T);
  threads = static_cast<int>(std::clamp<double>(bytes / kGemvMinBytesPerThread, 1, std::max(threads, 1)));
  if (B.cs == 1) {  // rows of B contiguous: NR columns of C at a time, all of K in one pass
    const int64_t NR = uk.nr, panels = (N + NR - 1) / NR;
    share(threads, panels, [&](int64_t lo, int64_t hi) {
      for (int64_t p = lo; p < hi; ++p) {
        const int n = static_cast<int>(std::min(NR, N - p * NR));
        for (int64_t r = 0; r < M; r += uk.mr) {
          const int m = static_cast<int>(std::min<int64_t>(uk.mr, M - r));
          uk.unpacked(K, A.data + r * A.rs, A.rs, A.cs, B.data + p * NR, B.rs, c + r * ldc + p * NR, ldc, m, n, false);
        }
      }
    });
    return;
  }
  // columns of B contiguous: the rows of A made contiguous too (M * K elements, a copy if strided)
  const T* a = A.data;
  int64_t lda = A.rs;
  if (A.cs != 1) {
    T* rows = packed_a_buffer.get<T>(M * K);
    for (int64_t r = 0; r < M; ++r)
      for (int64_t k = 0; k < K; ++k) rows[r * K + k] = A.data[r * A.rs + k * A.cs];
    a = rows, lda = K;
  }
  share(threads, N, [&](int64_t lo, int64_t hi) {  // a range of columns of C: rows of W, read in order
    for (int64_t j = lo; j < hi; ++j)
      for (int64_t r = 0; r < M; r += kDotMaxRows) {
        const int m = static_cast<int>(std::min<int64_t>(kDotMaxRows, M - r));
        uk.dot(K, a + r * lda, lda, m, B.data + j * B.cs, c + r * ldc + j, ldc);
      }
  });
}

bool use_gemv_path(int64_t M, int64_t N, int64_t K, int64_t rsb, int64_t csb, int64_t element_bytes) {
  return M <= kGemvMaxRows && (rsb == 1 || csb == 1) && N * K * element_bytes > kGemvMinBytes;
}

template <class T>
void gemm(const MicroKernels<T>& uk, int64_t M, int64_t N, int64_t K, const MatrixRef<T>& A, const MatrixRef<T>& B,
          T* c, int64_t ldc, int threads) {
  if (M == 0 || N == 0) return;
  if (K == 0) {  // an empty sum: C = 0
    for (int64_t i = 0; i < M; ++i) std::fill(c + i * ldc, c + i * ldc + N, T(0));
    return;
  }
  if (use_gemv_path(M, N, K, B.rs, B.cs, sizeof(T))) return gemv(uk, M, N, K, A, B, c, ldc, threads);
  if (use_small_path(M, N, K)) return gemm_small(uk, M, N, K, A, B, c, ldc);
  const double flops = 2.0 * static_cast<double>(M) * static_cast<double>(N) * static_cast<double>(K);
  threads = static_cast<int>(std::clamp<double>(flops / kMinFlopsPerThread, 1, std::max(threads, 1)));
  gemm_packed(uk, M, N, K, A, B, c, ldc, threads);
}

#define GF_INSTANTIATE(T)                                                                                            \
  template void gemm<T>(const MicroKernels<T>&, int64_t, int64_t, int64_t, const MatrixRef<T>&, const MatrixRef<T>&, \
                        T*, int64_t, int);                                                                           \
  template void gemm_packed<T>(const MicroKernels<T>&, int64_t, int64_t, int64_t, const MatrixRef<T>&,               \
                               const MatrixRef<T>&, T*, int64_t, int);                                               \
  template void gemm_small<T>(const MicroKernels<T>&, int64_t, int64_t, int64_t, const MatrixRef<T>&,                \
                              const MatrixRef<T>&, T*, int64_t);                                                     \
  template void gemv<T>(const MicroKernels<T>&, int64_t, int64_t, int64_t, const MatrixRef<T>&, const MatrixRef<T>&, \
                        T*, int64_t, int);
GF_INSTANTIATE(float)
GF_INSTANTIATE(double)
#undef GF_INSTANTIATE

}  // namespace gradformer::detail
