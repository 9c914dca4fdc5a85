// Internal interface of the matrix multiply (not part of the public API; see matmul.h).
//
// gemm computes C[M, N] = A[M, K] · B[K, N] on raw pointers. A and B are read through arbitrary
// row and column strides (a transposed operand is just a pair of swapped strides), C is written
// with unit column stride and row stride ldc. Two ways to get there:
//   - gemm_packed: the BLIS/Goto algorithm, five loops around a register-blocked micro-kernel,
//     with A and B copied ("packed") into cache-sized, zero-padded panels (gemm.cpp);
//   - gemm_small: no packing of A, for products so small that copying costs more than it saves.
// The micro-kernels themselves live in gemm_kernel_avx512.cpp (x86-64 with AVX-512F),
// gemm_kernel_avx2.cpp (x86-64 with AVX2 and FMA), both instances of gemm_kernel_simd.h, and
// gemm_kernel_portable.cpp (plain C++, everywhere). This header includes nothing of the library,
// so a file compiled with -mavx2 or -mavx512f emits no inline function a file for other CPUs could
// end up using.
#pragma once

#include <cstdint>

namespace gradformer::detail {

/// A read-only strided matrix: element (i, j) is data[i * rs + j * cs].
template <class T>
struct MatrixRef {
  const T* data;
  int64_t rs, cs;
};

/// The register-blocked micro-kernels for one element type. Each computes one MR x NR tile of C
/// in registers; the loops in gemm.cpp feed them.
template <class T>
struct MicroKernels {
  int mr, nr;  // tile shape: MR rows of C, NR columns
  /// c[0:m, 0:n] = (accumulate ? c : 0) + sum_k a_k ⊗ b_k over k < kc, where
  ///   a: packed MR x kc panel, a[k * MR + r] (64-byte aligned, zero-padded beyond the valid rows),
  ///   b: packed kc x NR panel, b[k * NR + j] (64-byte aligned, zero-padded beyond the valid columns).
  /// Only the valid m x n part (m <= MR, n <= NR) is written; rows and columns beyond it may be computed.
  void (*packed)(int64_t kc, const T* a, const T* b, T* c, int64_t ldc, int m, int n, bool accumulate);
  /// c[0:m, 0:n] = (accumulate ? c : 0) + sum_k A(r, k) B(k, j) over k < kc, without packing:
  ///   A(r, k) = a[r * rsa + k * csa] for r < m (any strides),
  ///   B(k, j) = b[k * rsb + j] for j < n (unit column stride; only columns < n are read).
  void (*unpacked)(int64_t kc, const T* a, int64_t rsa, int64_t csa, const T* b, int64_t rsb, T* c, int64_t ldc, int m,
                   int n, bool accumulate);
  /// Optional fast packers for the two layouts that need a transpose while packing (nullptr: the
  /// generic loops in gemm.cpp do it). pack_a_rows packs an MR x kc panel of an A whose rows are
  /// contiguous, dst[k * MR + r] = a[r * rs + k] for r < m, zero for m <= r < MR; it may write up to
  /// MR elements past the panel (the buffer has room). pack_b_cols packs a kc x NR panel of a B whose
  /// columns are contiguous (a transposed B), dst[k * NR + j] = b[j * cs + k] for j < n, zero for
  /// n <= j < NR.
  void (*pack_a_rows)(int64_t kc, const T* a, int64_t rs, int m, T* dst);
  void (*pack_b_cols)(int64_t kc, const T* b, int64_t cs, int n, T* dst);
  /// Dot products of m rows of A with one row of B (1 <= m <= kDotMaxRows), both contiguous:
  /// c[r * ldc] = sum_k a[r * lda + k] * b[k] over k < kc. Each sum is kept in the partial sums of
  /// one 64-byte span (16 floats, 8 doubles; partial l gets the k with k % span == l, in order of k),
  /// added up in one fixed tree at the end, so every kernel set that fuses its multiply-adds gives
  /// the same bits.
  void (*dot)(int64_t kc, const T* a, int64_t lda, int m, const T* b, T* c, int64_t ldc);
};

/// The matrix-vector path takes products with at most this many rows of A (gemv below): two tiles of
/// the widest kernel (MR 8), so a short prompt's rows do not pay for packing the weights either.
/// Packing B pays when each packed element is used by many rows; measured on a Zen 5 core (GPT-2
/// small's four weight shapes, out of the cache), the in-place path is faster up to 48-64 rows, 1.5-2.3x
/// at 16: the bound leaves room for machines whose packed kernel is relatively faster.
inline constexpr int64_t kGemvMaxRows = 16;
/// The dot kernel takes at most this many rows of A at a time.
inline constexpr int kDotMaxRows = 4;

// The kernel sets. avx512_kernels and avx2_kernels return nullptr when those kernels were not
// compiled in (GRADFORMER_AVX512 / GRADFORMER_AVX2 off, or not x86-64); the caller also checks the
// CPU before using them.
template <class T>
const MicroKernels<T>* avx512_kernels();
template <class T>
const MicroKernels<T>* avx2_kernels();
template <class T>
const MicroKernels<T>& portable_kernels();

/// True when this build has the AVX-512 (AVX2) kernels and this CPU and OS can run them.
bool avx512_available();
bool avx2_available();
/// The kernels matmul uses now: the fastest available unless overridden (set_matmul_kernel or
/// GRADFORMER_MATMUL).
template <class T>
const MicroKernels<T>& active_kernels();

/// C[M, N] = A[M, K] · B[K, N]; C rows at c + i * ldc. K may be 0 (C becomes zeros).
/// threads > 1 splits the rows of C across the pool's threads (each element of C is still
/// computed by one thread in the same order, so the result does not depend on `threads`).
template <class T>
void gemm(const MicroKernels<T>& uk, int64_t M, int64_t N, int64_t K, const MatrixRef<T>& A, const MatrixRef<T>& B,
          T* c, int64_t ldc, int threads);

/// A batch of products, C_b = A_b · B_b for b < batches, each M x N x K: A_b(i, k) at
/// a[a_offsets[b] + i * sam + k * sak], B_b(k, j) at b[b_offsets[b] + k * sbk + j * sbn], C_b at
/// c + b * M * N (rows of N). Decides how the batch shares the threads (one product by rows, or many
/// products each on one thread; never changing a result) and counts the flops for the profiler.
template <class T>
void gemm_batch(int64_t M, int64_t N, int64_t K, const T* a, const int64_t* a_offsets, int64_t sam, int64_t sak,
                const T* b, const int64_t* b_offsets, int64_t sbk, int64_t sbn, T* c, int64_t batches);

/// The two algorithms gemm chooses between, exposed for tests, the benchmark and the tutorial.
template <class T>
void gemm_packed(const MicroKernels<T>& uk, int64_t M, int64_t N, int64_t K, const MatrixRef<T>& A,
                 const MatrixRef<T>& B, T* c, int64_t ldc, int threads);
template <class T>
void gemm_small(const MicroKernels<T>& uk, int64_t M, int64_t N, int64_t K, const MatrixRef<T>& A,
                const MatrixRef<T>& B, T* c, int64_t ldc);

/// C[M, N] = A[M, K] · B[K, N] for M <= kGemvMaxRows when B has contiguous rows or contiguous
/// columns: B read once, in place, never packed; its columns shared between up to `threads` threads
/// (each element of C computed by one thread the same way, so the result does not depend on it).
template <class T>
void gemv(const MicroKernels<T>& uk, int64_t M, int64_t N, int64_t K, const MatrixRef<T>& A, const MatrixRef<T>& B,
          T* c, int64_t ldc, int threads);
/// Whether gemm takes the matrix-vector path: few rows of A, and a B it can stream in place that is
/// too large to stay in a core's cache once packed (smaller ones keep the paths they always took).
bool use_gemv_path(int64_t M, int64_t N, int64_t K, int64_t rsb, int64_t csb, int64_t element_bytes);

/// Whether gemm takes the small (unpacked) path for this shape. Depends on the shape only, never on
/// the thread count, so results are the same for every thread count.
bool use_small_path(int64_t M, int64_t N, int64_t K);

}  // namespace gradformer::detail
