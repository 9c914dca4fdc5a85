// The matrix-vector path of matmul (detail::gemv: at most kGemvMaxRows rows of A, B streamed in
// place), against the library's naive reference in float64, on every kernel: B with contiguous
// columns (a Linear's weight, x Wᵀ) and with contiguous rows, A contiguous, transposed or strided,
// odd sizes around the 64-byte span and the 4-row groups, float32 and float64; the same bits for 1
// and 2 threads, and across the SIMD kernels.
//
// Tolerance as in test_matmul.cpp: |computed - exact| <= (K + 2) * eps * sum |a * b|, eps the
// dtype's machine epsilon.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "catch.h"
#include "tensor/all.h"
#include "tensor/kernels/gemm.h"
#include "tensor/kernels/parallel.h"
#include "tensor/matmul.h"

using namespace gradformer;

namespace {

Tensor random_matrix(const Shape& shape, DType dtype, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(static_cast<size_t>(shape.numel()));
  for (double& x : v) x = u(gen);
  return from_vector(v, shape).to(dtype);
}

Tensor absolute(const Tensor& t) {
  std::vector<double> v = t.to_vector<double>();
  for (double& x : v) x = std::abs(x);
  return from_vector(v, t.shape());
}

// How A [M, K] is laid out in memory.
enum class LayoutA { Contiguous, Transposed, Strided };
// How B [K, N] is laid out: Wᵀ (columns contiguous: a Linear's weight [N, K]) or row-major.
enum class LayoutB { ColumnsContiguous, RowsContiguous };

Tensor operand_a(int64_t M, int64_t K, LayoutA layout, DType dtype, uint32_t seed) {
  switch (layout) {
    case LayoutA::Transposed:
      return random_matrix({K, M}, dtype, seed).transpose(0, 1);
    case LayoutA::Strided:  // every other column of a wider matrix, from an offset
      return random_matrix({M, 2 * K + 1}, dtype, seed).slice(1, 1, 2 * K + 1, 2);
    default:
      return random_matrix({M, K}, dtype, seed);
  }
}

Tensor operand_b(int64_t K, int64_t N, LayoutB layout, DType dtype, uint32_t seed) {
  if (layout == LayoutB::ColumnsContiguous) return random_matrix({N, K}, dtype, seed).transpose(0, 1);
  return random_matrix({K, N}, dtype, seed);
}

// a @ b by the matrix-vector path itself (matmul takes it only for a large B), on the pool's threads.
template <class T>
Tensor gemv(const Tensor& a, const Tensor& b) {
  const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
  Tensor c = Tensor::empty({M, N}, a.dtype());
  detail::gemv<T>(detail::active_kernels<T>(), M, N, K, {a.data<T>(), a.strides()[0], a.strides()[1]},
                  {b.data<T>(), b.strides()[0], b.strides()[1]}, c.data<T>(), N, num_threads());
  return c;
}

// Elements of a @ b by the matrix-vector path outside the tolerance at the top.
int64_t mismatches(const Tensor& a, const Tensor& b, DType dtype) {
  const Tensor a64 = a.to(DType::Float64), b64 = b.to(DType::Float64);
  const Tensor c = dtype == DType::Float32 ? gemv<float>(a, b) : gemv<double>(a, b);
  const std::vector<double> want = matmul_reference(a64, b64).to_vector<double>(),
                            magnitude = matmul_reference(absolute(a64), absolute(b64)).to_vector<double>(),
                            got = c.to_vector<double>();
  const double eps =
      dtype == DType::Float32 ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
  const double K = static_cast<double>(a.size(1));
  int64_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (!(std::abs(got[i] - want[i]) <= (K + 2) * eps * magnitude[i])) {
      if (bad == 0) UNSCOPED_INFO("first bad element " << i << ": got " << got[i] << ", want " << want[i]);
      ++bad;
    }
  return bad;
}

struct Setting {
  MatmulKernel old_kernel = matmul_kernel();
  int old_threads = num_threads();
  Setting(MatmulKernel kernel, int threads) {
    set_matmul_kernel(kernel);
    set_num_threads(threads);
  }
  ~Setting() {
    set_matmul_kernel(old_kernel);
    set_num_threads(old_threads);
  }
};

std::vector<MatmulKernel> kernels() {
  std::vector<MatmulKernel> k;
  for (MatmulKernel kernel : {MatmulKernel::Portable, MatmulKernel::Avx2, MatmulKernel::Avx512})
    if (matmul_kernel_available(kernel)) k.push_back(kernel);
  return k;
}

template <class T>
bool same_bits(const Tensor& x, const Tensor& y) {
  const std::vector<T> a = x.to_vector<T>(), b = y.to_vector<T>();
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
}

// K around the span (16 floats, 8 doubles) and its multiples; N around the groups of 4 and NR.
const std::vector<int64_t> kInner = {1, 3, 7, 8, 15, 16, 17, 33, 64, 100, 769};
const std::vector<int64_t> kOuter = {1, 2, 3, 5, 17, 33, 67, 130};

}  // namespace

TEST_CASE("matmul takes the matrix-vector path for few rows of A and a large B that streams in place") {
  const Tensor w = random_matrix({1000, 300}, DType::Float32, 1).transpose(0, 1);  // Wᵀ: [300, 1000], 1.2 MB
  const int64_t rs = w.strides()[0], cs = w.strides()[1];
  CHECK(detail::use_gemv_path(1, 1000, 300, rs, cs, 4));                      // x Wᵀ
  CHECK(detail::use_gemv_path(detail::kGemvMaxRows, 1000, 300, 1000, 1, 4));  // rows of B contiguous
  CHECK_FALSE(detail::use_gemv_path(detail::kGemvMaxRows + 1, 1000, 300, rs, cs, 4));
  CHECK_FALSE(detail::use_gemv_path(1, 1000, 300, 2000, 2, 4));  // neither rows nor columns contiguous
  CHECK_FALSE(detail::use_gemv_path(1, 64, 1024, rs, cs, 4));    // 256 KB: packed, it stays in the cache
}

TEST_CASE("the matrix-vector path matches the float64 reference: every kernel, layout, odd size and dtype") {
  uint32_t seed = 10;
  for (MatmulKernel kernel : kernels()) {
    Setting setting(kernel, 2);
    for (DType dtype : {DType::Float32, DType::Float64})
      for (LayoutA la : {LayoutA::Contiguous, LayoutA::Transposed, LayoutA::Strided})
        for (LayoutB lb : {LayoutB::ColumnsContiguous, LayoutB::RowsContiguous})
          for (int64_t M : {int64_t{1}, int64_t{2}, int64_t{3}, int64_t{4}, int64_t{5}, int64_t{8}, int64_t{9},
                            int64_t{13}, detail::kGemvMaxRows})
            for (int64_t K : kInner)
              for (int64_t N : kOuter) {
                INFO(matmul_kernel_name(kernel)
                     << ", " << dtype << ", A layout " << static_cast<int>(la) << ", B layout " << static_cast<int>(lb)
                     << ", M " << M << " N " << N << " K " << K);
                const Tensor a = operand_a(M, K, la, dtype, ++seed), b = operand_b(K, N, lb, dtype, ++seed);
                CHECK(mismatches(a, b, dtype) == 0);
              }
  }
}

TEST_CASE("the matrix-vector path gives the same bits on 1 and 2 threads, and on the AVX2 and AVX-512 kernels") {
  // 1000 x 300 floats of B: more than one thread's share (kGemvMinBytesPerThread), so 2 threads split it
  for (LayoutB lb : {LayoutB::ColumnsContiguous, LayoutB::RowsContiguous})
    for (int64_t M : {int64_t{1}, int64_t{3}, int64_t{7}}) {
      INFO("B layout " << static_cast<int>(lb) << ", M " << M);
      const Tensor a = operand_a(M, 300, LayoutA::Contiguous, DType::Float32, 5),
                   b = operand_b(300, 1001, lb, DType::Float32, 6);
      std::vector<Tensor> simd;
      for (MatmulKernel kernel : kernels()) {
        Tensor one, two;
        {
          Setting setting(kernel, 1);
          one = matmul(a, b);
        }
        {
          Setting setting(kernel, 2);
          two = matmul(a, b);
        }
        INFO(matmul_kernel_name(kernel));
        CHECK(same_bits<float>(one, two));
        if (kernel != MatmulKernel::Portable) simd.push_back(one);
      }
      for (size_t i = 1; i < simd.size(); ++i) CHECK(same_bits<float>(simd[0], simd[i]));
    }
}

TEST_CASE("a row's result on the matrix-vector path does not depend on the rows that come with it") {
  // A prompt's eight rows give each row the bits that row gives alone (the dot kernel takes four rows
  // at a time, the unpacked kernel MR: the blocks must not change a sum)
  for (MatmulKernel kernel : kernels()) {
    Setting setting(kernel, 2);
    for (LayoutB lb : {LayoutB::ColumnsContiguous, LayoutB::RowsContiguous}) {
      INFO(matmul_kernel_name(kernel) << ", B layout " << static_cast<int>(lb));
      const Tensor a = operand_a(detail::kGemvMaxRows, 301, LayoutA::Contiguous, DType::Float32, 11),
                   b = operand_b(301, 1003, lb, DType::Float32, 12);
      const Tensor all = gemv<float>(a, b);
      for (int64_t r = 0; r < detail::kGemvMaxRows; ++r) {
        const Tensor row = a.slice(0, r, r + 1).contiguous();
        CHECK(same_bits<float>(gemv<float>(row, b), all.slice(0, r, r + 1).contiguous()));
      }
    }
  }
}

TEST_CASE("the matrix-vector path agrees with the packed algorithm within rounding") {
  // A [7, 700] x Wᵀ, W [900, 700]: what gemm_packed computes for the same product
  const Tensor a = operand_a(7, 700, LayoutA::Contiguous, DType::Float32, 7);
  const Tensor b = operand_b(700, 900, LayoutB::ColumnsContiguous, DType::Float32, 8);
  const auto& uk = detail::active_kernels<float>();
  Tensor packed = Tensor::empty({7, 900});
  detail::gemm_packed<float>(uk, 7, 900, 700, {a.data<float>(), a.strides()[0], a.strides()[1]},
                             {b.data<float>(), b.strides()[0], b.strides()[1]}, packed.data<float>(), 900, 1);
  const std::vector<float> x = matmul(a, b).to_vector<float>(), y = packed.to_vector<float>();
  const std::vector<double> magnitude = matmul_reference(absolute(a), absolute(b)).to_vector<double>();
  double worst = 0;  // in units of the bound
  for (size_t i = 0; i < x.size(); ++i)
    worst = std::max(
        worst, std::abs(double(x[i]) - double(y[i])) / (702.0 * std::numeric_limits<float>::epsilon() * magnitude[i]));
  CHECK(worst <= 2.0);  // both within the bound of the exact value, so within twice it of each other
}
