// matmul against the library's naive reference (matmul_reference) in float64, on every path: both kernels (AVX2 and
// portable), the small (unpacked) and the packed algorithm, 1 and 2 threads, all transpositions,
// strided and offset views, batches with broadcasting, float32 and float64, and every error.
//
// Tolerance: a sum of K products in precision eps satisfies |computed - exact| <= K*eps*sum|a*b|
// (the standard rounding-error bound, eps = the dtype's machine epsilon, which is twice the unit
// roundoff, so this bound has a factor of 2 to spare). Each element is checked against that bound
// with K + 2 in place of K so that K = 1 still allows for the rounding of the result itself.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "catch.h"
#include "tensor/all.h"
#include "tensor/kernels/gemm.h"
#include "tensor/kernels/parallel.h"
#include "tensor/matmul.h"
#include "tensor/support/profiler.h"

using namespace gradformer;

namespace {

// Random values in [-1, 1) from a seeded generator of the test's own (not the library's).
Tensor random_matrix(const Shape& shape, DType dtype, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> v(static_cast<size_t>(shape.numel()));
  for (double& x : v) x = u(gen);
  return from_vector(v, shape).to(dtype);
}

// An [rows, cols] operand, stored either row-major or transposed (as a [cols, rows] tensor seen
// through .transpose(0, 1)), so the kernel must read it through swapped strides.
Tensor operand(int64_t rows, int64_t cols, bool transposed, DType dtype, uint32_t seed) {
  if (transposed) return random_matrix({cols, rows}, dtype, seed).transpose(0, 1);
  return random_matrix({rows, cols}, dtype, seed);
}

struct Reference {
  std::vector<double> value, magnitude;  // sum a*b and sum |a*b| for each element of C
};

// |t|, element by element, as a row-major copy.
Tensor absolute(const Tensor& t) {
  std::vector<double> v = t.to_vector<double>();
  for (double& x : v) x = std::abs(x);
  return from_vector(v, t.shape());
}

// The product by the library's triple loop on both operands in float64 (exact enough to judge a
// float64 product by the bound at the top), and sum |a*b| for each element: the product of |a| and
// |b|. a: [M, K], b: [K, N].
Reference reference(const Tensor& a, const Tensor& b) {
  const Tensor a64 = a.to(DType::Float64), b64 = b.to(DType::Float64);
  return {matmul_reference(a64, b64).to_vector<double>(),
          matmul_reference(absolute(a64), absolute(b64)).to_vector<double>()};
}

double epsilon(DType dtype) {
  return dtype == DType::Float32 ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
}

// Counts the elements of c (a [M, N] result) outside the tolerance stated at the top.
int64_t mismatches(const Tensor& c, const Reference& ref, int64_t K, DType dtype) {
  const std::vector<double> cv = c.to_vector<double>();
  REQUIRE(cv.size() == ref.value.size());
  int64_t bad = 0;
  for (size_t i = 0; i < cv.size(); ++i) {
    const double tol = static_cast<double>(K + 2) * epsilon(dtype) * ref.magnitude[i];
    if (!(std::abs(cv[i] - ref.value[i]) <= tol)) {
      if (bad == 0) UNSCOPED_INFO("first bad element " << i << ": got " << cv[i] << ", want " << ref.value[i]);
      ++bad;
    }
  }
  return bad;
}

// Sets the kernel and the thread count for one scope, and puts both back afterwards.
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

// The kernels this build and CPU can run (the portable one everywhere).
std::vector<MatmulKernel> kernels() {
  std::vector<MatmulKernel> k;
  for (MatmulKernel kernel : {MatmulKernel::Portable, MatmulKernel::Avx2, MatmulKernel::Avx512})
    if (matmul_kernel_available(kernel)) k.push_back(kernel);
  return k;
}

const char* kernel_name(MatmulKernel k) { return matmul_kernel_name(k); }

struct Size {
  int64_t M, N, K;
};

// MR is 8 (AVX-512), 6 (AVX2) or 4 (portable), NR is 32, 16 or 8 (float32) and 16, 8 or 4
// (float64), KC is 256: sizes one below, at and above each, primes, and zero-sized dimensions. Products above 96^3 take
// the packed path, below it the small one; the tests below also run both paths directly on every size.
const std::vector<Size> kSizes = {
    {1, 1, 1},      {3, 5, 2},      {4, 8, 4},       {5, 7, 9},     {6, 16, 8},   {7, 17, 3},
    {5, 15, 11},    {9, 9, 9},      {13, 31, 257},   {33, 65, 64},  {64, 64, 64}, {32, 32, 64},
    {97, 101, 103}, {131, 67, 259}, {150, 200, 300}, {7, 4100, 40}, {8, 32, 7},   {17, 31, 33},
    {9, 33, 16},    {16, 64, 300},  {0, 5, 3},       {5, 0, 3},     {5, 3, 0},    {0, 0, 0},
};

}  // namespace

TEST_CASE("matmul matches the float64 reference: every size, transposition, dtype, kernel and thread count") {
  for (MatmulKernel kernel : kernels())
    for (int threads : {1, 2}) {
      Setting setting(kernel, threads);
      for (DType dtype : {DType::Float32, DType::Float64})
        for (const Size& s : kSizes)
          for (bool ta : {false, true})
            for (bool tb : {false, true}) {
              INFO(kernel_name(kernel) << ", " << threads << " threads, " << dtype << ", M " << s.M << " N " << s.N
                                       << " K " << s.K << ", TA " << ta << " TB " << tb);
              const Tensor a = operand(s.M, s.K, ta, dtype, 1), b = operand(s.K, s.N, tb, dtype, 2);
              const Tensor c = matmul(a, b);
              REQUIRE(c.shape() == Shape{s.M, s.N});
              REQUIRE(c.dtype() == dtype);
              CHECK(mismatches(c, reference(a, b), s.K, dtype) == 0);
            }
    }
}

TEST_CASE("K = 0 gives zeros, M = 0 or N = 0 an empty result") {
  const Tensor c = matmul(zeros({3, 0}), zeros({0, 4}));
  CHECK(c.shape() == Shape{3, 4});
  CHECK(c.to_vector<float>() == std::vector<float>(12, 0.0f));
  CHECK(matmul(zeros({0, 5}), zeros({5, 4})).shape() == Shape{0, 4});
  CHECK(matmul(zeros({2, 0, 5}), zeros({5, 4})).shape() == Shape{2, 0, 4});
}

TEST_CASE("a small exact product") {
  // [[1, 2, 3], [4, 5, 6]] · [[7, 8], [9, 10], [11, 12]] = [[58, 64], [139, 154]]
  for (MatmulKernel kernel : kernels()) {
    Setting setting(kernel, 1);
    const Tensor a = tensor({1, 2, 3, 4, 5, 6}, {2, 3}), b = tensor({7, 8, 9, 10, 11, 12}, {3, 2});
    CHECK(matmul(a, b).to_vector<float>() == std::vector<float>{58, 64, 139, 154});
    CHECK(matmul(b.transpose(0, 1), a.transpose(0, 1)).to_vector<float>() == std::vector<float>{58, 139, 64, 154});
  }
}

TEST_CASE("matmul_reference: the definition, on any strides, summed in float64 and rounded once") {
  const Tensor a = tensor({1, 2, 3, 4, 5, 6}, {2, 3}), b = tensor({7, 8, 9, 10, 11, 12}, {3, 2});
  CHECK(matmul_reference(a, b).to_vector<float>() == std::vector<float>{58, 64, 139, 154});
  CHECK(matmul_reference(b.transpose(0, 1), a.transpose(0, 1)).to_vector<float>() ==
        std::vector<float>{58, 139, 64, 154});
  CHECK(matmul_reference(a.to(DType::Float64), b.to(DType::Float64)).to_vector<double>() ==
        std::vector<double>{58, 64, 139, 154});
  // 1 + 2^-24 + 2^-24: a float32 sum rounds each 2^-24 away (ties to even), a float64 sum keeps both
  const Tensor row = from_vector(std::vector<float>{1, 0x1p-24f, 0x1p-24f}, {1, 3}), ones = full({3, 1}, 1.0);
  CHECK(matmul_reference(row, ones).item() == 1 + 0x1p-23);
  CHECK(matmul_reference(zeros({3, 0}), zeros({0, 4})).to_vector<float>() == std::vector<float>(12, 0.0f));
  CHECK(matmul_reference(zeros({0, 5}), zeros({5, 4})).shape() == Shape{0, 4});
}

TEST_CASE("matmul_reference errors name the operation and the values") {
  CHECK_THROWS_MSG(matmul_reference(zeros({4, 3}), zeros({5, 2})), ShapeError,
                   "matmul_reference: inner dimensions differ: a is [4, 3], b is [5, 2]");
  CHECK_THROWS_MSG(matmul_reference(zeros({2, 4, 3}), zeros({3, 2})), ShapeError,
                   "matmul_reference: both operands must be matrices (2 dimensions), a is [2, 4, 3], b is [3, 2]");
  CHECK_THROWS_MSG(matmul_reference(zeros({2, 3}), zeros({3})), ShapeError, "a is [2, 3], b is [3]");
  CHECK_THROWS_MSG(matmul_reference(zeros({2, 3}), zeros({3, 2}, DType::Float64)), DTypeError,
                   "matmul_reference: dtypes differ: float32 and float64");
  CHECK_THROWS_MSG(matmul_reference(zeros({2, 3}, DType::Int64), zeros({5, 2}, DType::Int64)), DTypeError,
                   "matmul_reference: expected a floating dtype (float32 or float64), got int64");
  CHECK_THROWS_MSG(matmul_reference(Tensor(), zeros({3, 2})), ValueError, "matmul_reference: undefined tensor");
}

TEST_CASE("both algorithms (small and packed) agree with the reference on every size") {
  for (MatmulKernel kernel : kernels()) {
    Setting setting(kernel, 1);
    for (const Size& s : kSizes) {
      if (s.M == 0 || s.N == 0 || s.K == 0) continue;
      for (bool ta : {false, true})
        for (bool tb : {false, true}) {
          INFO(kernel_name(kernel) << ", M " << s.M << " N " << s.N << " K " << s.K << ", TA " << ta << " TB " << tb);
          const Tensor a = operand(s.M, s.K, ta, DType::Float32, 3), b = operand(s.K, s.N, tb, DType::Float32, 4);
          const Reference ref = reference(a, b);
          const auto& uk = detail::active_kernels<float>();
          const detail::MatrixRef<float> A{a.data<float>(), a.strides()[0], a.strides()[1]};
          const detail::MatrixRef<float> B{b.data<float>(), b.strides()[0], b.strides()[1]};
          Tensor small = full({s.M, s.N}, 1e30), packed = full({s.M, s.N}, 1e30);  // garbage must be overwritten
          detail::gemm_small(uk, s.M, s.N, s.K, A, B, small.data<float>(), s.N);
          detail::gemm_packed(uk, s.M, s.N, s.K, A, B, packed.data<float>(), s.N, 1);
          CHECK(mismatches(small, ref, s.K, DType::Float32) == 0);
          CHECK(mismatches(packed, ref, s.K, DType::Float32) == 0);
        }
    }
  }
}

TEST_CASE("the result does not depend on the thread count") {
  for (MatmulKernel kernel : kernels()) {
    const Tensor a = operand(301, 203, false, DType::Float32, 5), b = operand(203, 250, true, DType::Float32, 6);
    std::vector<float> one, two;
    {
      Setting setting(kernel, 1);
      one = matmul(a, b).to_vector<float>();
    }
    {
      Setting setting(kernel, 2);
      two = matmul(a, b).to_vector<float>();
    }
    CHECK(one == two);
  }
}

TEST_CASE("a batch of tiny products is shared between threads: a product costs the kernel's whole tiles") {
  // The copy task's decoder heads: 640 products of 9 x 16 by 16 x 9, 2,592 flops each by the formula,
  // 1.7 MFLOP in all, under two threads' minimum (1 MFLOP each) if counted so. Every kernel computes
  // whole tiles (at least 12 x 16 of these 9 x 9 outputs), and that work is what the threads share.
  Generator gen(5);
  const Tensor q = uniform({640, 9, 16}, -1, 1, gen), k = uniform({640, 9, 16}, -1, 1, gen);
  // how many times the pool was asked to share the work (its caller waits once each time)
  auto regions = [](const Tensor& a, const Tensor& b) {
    profiler::start();
    {
      const profiler::Scope op("batch", profiler::Phase::Forward);
      Tensor c = matmul(a, b);
    }
    const profiler::Trace trace = profiler::stop();
    return std::count_if(trace.events.begin(), trace.events.end(),
                         [](const profiler::Event& e) { return std::string(e.name) == profiler::kPoolWait; });
  };
  for (MatmulKernel kernel : kernels()) {
    INFO(kernel_name(kernel));
    Setting setting(kernel, 2);
    CHECK(regions(q, k.transpose(-2, -1)) == 1);
    // four such products are less than one thread's minimum even as whole tiles: they stay on one
    CHECK(regions(q.narrow(0, 0, 4), k.narrow(0, 0, 4).transpose(-2, -1)) == 0);
  }
}

TEST_CASE("non-contiguous and offset views are read through their strides") {
  for (MatmulKernel kernel : kernels())
    for (int threads : {1, 2}) {
      Setting setting(kernel, threads);
      for (DType dtype : {DType::Float32, DType::Float64})
        for (const Size& s : {Size{5, 7, 9}, Size{40, 33, 70}, Size{120, 90, 130}}) {
          INFO(kernel_name(kernel) << ", " << threads << " threads, " << dtype << ", M " << s.M << " N " << s.N << " K "
                                   << s.K);
          const Tensor big_a = random_matrix({2 * s.M + 3, s.K + 5}, dtype, 7);
          const Tensor big_b = random_matrix({s.N + 4, 3 * s.K + 2}, dtype, 8);
          // every other row of A, starting at row 3 and column 2: row stride 2 * (K + 5), offset > 0
          const Tensor a = big_a.slice(0, 3, 3 + 2 * s.M, 2).narrow(1, 2, s.K);
          // B as a strided transposed view: columns 1, 4, 7, ... of big_b, then transposed
          const Tensor b = big_b.narrow(0, 1, s.N).slice(1, 1, 1 + 3 * s.K, 3).transpose(0, 1);
          REQUIRE(!a.is_contiguous());
          REQUIRE(a.offset() > 0);
          REQUIRE(b.shape() == Shape{s.K, s.N});
          CHECK(mismatches(matmul(a, b), reference(a, b), s.K, dtype) == 0);
          // both strides other than 1 in both operands: every other row and every other column
          const Tensor a2 =
              random_matrix({2 * s.M, 2 * s.K}, dtype, 13).slice(0, 0, 2 * s.M, 2).slice(1, 1, 2 * s.K, 2);
          const Tensor b2 =
              random_matrix({2 * s.K, 2 * s.N}, dtype, 14).slice(0, 1, 2 * s.K, 2).slice(1, 0, 2 * s.N, 2);
          REQUIRE(a2.shape() == Shape{s.M, s.K});
          REQUIRE(b2.shape() == Shape{s.K, s.N});
          CHECK(mismatches(matmul(a2, b2), reference(a2, b2), s.K, dtype) == 0);
          CHECK(mismatches(matmul(a2, b2.transpose(0, 1).contiguous().transpose(0, 1)), reference(a2, b2), s.K,
                           dtype) == 0);
        }
    }
}

TEST_CASE("batched matmul broadcasts the leading dimensions") {
  for (MatmulKernel kernel : kernels())
    for (int threads : {1, 2}) {
      Setting setting(kernel, threads);
      for (DType dtype : {DType::Float32, DType::Float64}) {
        INFO(kernel_name(kernel) << ", " << threads << " threads, " << dtype);
        struct Case {
          Shape a, b, out;
        };
        // attention's [B, H, T, d] · [B, H, d, T]; a weight shared by a batch; [1, H] against [B, 1];
        // batches of products large enough to be split by rows instead of by products
        const std::vector<Case> cases = {
            {{2, 3, 5, 7}, {7, 4}, {2, 3, 5, 4}},       {{2, 3, 17, 8}, {2, 3, 8, 17}, {2, 3, 17, 17}},
            {{1, 3, 6, 5}, {2, 1, 5, 9}, {2, 3, 6, 9}}, {{4, 9}, {3, 9, 2}, {3, 4, 2}},
            {{2, 200, 150}, {150, 130}, {2, 200, 130}},
        };
        for (const Case& cs : cases) {
          INFO("a " << cs.a << " b " << cs.b);
          const Tensor a = random_matrix(cs.a, dtype, 9), b = random_matrix(cs.b, dtype, 10);
          const Tensor c = matmul(a, b);
          REQUIRE(c.shape() == cs.out);
          // each output matrix against the reference of its own (broadcast) operands
          const int rank = cs.out.rank();
          Shape batch_a = cs.out, batch_b = cs.out;
          batch_a[rank - 2] = cs.a[cs.a.rank() - 2], batch_a[rank - 1] = cs.a[cs.a.rank() - 1];
          batch_b[rank - 2] = cs.b[cs.b.rank() - 2], batch_b[rank - 1] = cs.b[cs.b.rank() - 1];
          const Tensor ea = a.expand(batch_a), eb = b.expand(batch_b);
          const int64_t batches = c.numel() / (cs.out[rank - 2] * cs.out[rank - 1]);
          const Tensor fa = ea.reshape({batches, batch_a[rank - 2], batch_a[rank - 1]});
          const Tensor fb = eb.reshape({batches, batch_b[rank - 2], batch_b[rank - 1]});
          const Tensor fc = c.reshape({batches, cs.out[rank - 2], cs.out[rank - 1]});
          for (int64_t i = 0; i < batches; ++i)
            CHECK(mismatches(fc.select(0, i), reference(fa.select(0, i), fb.select(0, i)), batch_a[rank - 1], dtype) ==
                  0);
        }
        // the transposed key of attention: q · kᵀ with k a [B, H, T, d] view
        const Tensor q = random_matrix({2, 2, 20, 16}, dtype, 11), k = random_matrix({2, 2, 20, 16}, dtype, 12);
        const Tensor scores = matmul(q, k.transpose(-2, -1));
        REQUIRE(scores.shape() == Shape{2, 2, 20, 20});
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t h = 0; h < 2; ++h)
            CHECK(mismatches(scores.select(0, i).select(0, h),
                             reference(q.select(0, i).select(0, h), k.select(0, i).select(0, h).transpose(0, 1)), 16,
                             dtype) == 0);
      }
    }
}

TEST_CASE("non-finite values stay where they belong (zero padding does not leak into results)") {
  for (MatmulKernel kernel : kernels())
    for (const Size& s : {Size{7, 17, 5}, Size{131, 67, 259}}) {
      Setting setting(kernel, 1);
      Tensor a = zeros({s.M, s.K}), b = ones({s.K, s.N});
      a.select(0, s.M - 1).select(0, 0).fill_(std::numeric_limits<double>::infinity());
      const std::vector<float> c = matmul(a, b).to_vector<float>();
      for (int64_t i = 0; i < s.M; ++i)
        for (int64_t j = 0; j < s.N; ++j) {
          const float x = c[static_cast<size_t>(i * s.N + j)];
          if (i == s.M - 1)
            CHECK(std::isinf(x));
          else
            CHECK(x == 0.0f);
        }
    }
}

TEST_CASE("matmul errors name the operation and the shapes") {
  CHECK_THROWS_MSG(matmul(zeros({4, 3}), zeros({5, 2})), ShapeError,
                   "matmul: inner dimensions differ: a is [4, 3], b is [5, 2]");
  CHECK_THROWS_MSG(matmul(zeros({2, 4, 3}), zeros({3, 2, 2})), ShapeError,
                   "matmul: inner dimensions differ: a is [2, 4, 3], b is [3, 2, 2]");
  CHECK_THROWS_MSG(matmul(zeros({3}), zeros({3, 2})), ShapeError,
                   "matmul: both operands need at least 2 dimensions, a is [3], b is [3, 2]");
  CHECK_THROWS_MSG(matmul(zeros({2, 3}), zeros({3})), ShapeError, "at least 2 dimensions");
  CHECK_THROWS_MSG(matmul(zeros({2, 4, 3}), zeros({3, 3, 2})), ShapeError, "do not broadcast");
  CHECK_THROWS_MSG(matmul(zeros({2, 3}), zeros({3, 2}, DType::Float64)), DTypeError,
                   "matmul: dtypes differ: float32 and float64");
  CHECK_THROWS_MSG(matmul(zeros({2, 3}, DType::Int64), zeros({3, 2}, DType::Int64)), DTypeError,
                   "matmul: expected a floating dtype (float32 or float64), got int64");
  CHECK_THROWS_MSG(matmul(zeros({2, 3}, DType::Bool), zeros({3, 2}, DType::Bool)), DTypeError, "got bool");
  CHECK_THROWS_MSG(matmul(Tensor(), zeros({3, 2})), Error, "matmul");
}

TEST_CASE("the kernel can be chosen at run time, and Auto is the widest available") {
  const MatmulKernel before = matmul_kernel();
  CHECK(before != MatmulKernel::Auto);
  CHECK(matmul_kernel_available(MatmulKernel::Portable));
  CHECK(matmul_kernel_available(MatmulKernel::Auto));
  set_matmul_kernel(MatmulKernel::Portable);
  CHECK(matmul_kernel() == MatmulKernel::Portable);
  set_matmul_kernel(MatmulKernel::Auto);
  const MatmulKernel widest = matmul_kernel_available(MatmulKernel::Avx512) ? MatmulKernel::Avx512
                              : matmul_kernel_available(MatmulKernel::Avx2) ? MatmulKernel::Avx2
                                                                            : MatmulKernel::Portable;
  CHECK(matmul_kernel() == widest);
  for (MatmulKernel kernel : {MatmulKernel::Avx2, MatmulKernel::Avx512})
    if (!matmul_kernel_available(kernel))
      CHECK_THROWS_MSG(
          set_matmul_kernel(kernel), ValueError,
          std::string("set_matmul_kernel: the ") + matmul_kernel_name(kernel) + " kernel is not available");
  CHECK(std::string(matmul_kernel_name(MatmulKernel::Avx512)) == "avx512");
  CHECK(std::string(matmul_kernel_name(MatmulKernel::Avx2)) == "avx2");
  CHECK(std::string(matmul_kernel_name(MatmulKernel::Portable)) == "portable");
  set_matmul_kernel(before);
}

TEST_CASE("GRADFORMER_MATMUL sets the kernel a program starts with") {
  // ctest also runs this case with the variable set to portable and to a misspelt name
  // (tests/tensor/CMakeLists.txt); a name this CPU cannot run, or no name, gives the widest.
  const char* env = std::getenv("GRADFORMER_MATMUL");
  const std::string choice = env ? env : "";
  const MatmulKernel widest = matmul_kernel_available(MatmulKernel::Avx512) ? MatmulKernel::Avx512
                              : matmul_kernel_available(MatmulKernel::Avx2) ? MatmulKernel::Avx2
                                                                            : MatmulKernel::Portable;
  MatmulKernel expected = widest;
  for (MatmulKernel k : {MatmulKernel::Portable, MatmulKernel::Avx2, MatmulKernel::Avx512})
    if (choice == matmul_kernel_name(k) && matmul_kernel_available(k)) expected = k;
  INFO("GRADFORMER_MATMUL=" << choice);
  CHECK(matmul_kernel() == expected);
}

TEST_CASE("the AVX2 and AVX-512 kernels give the same products, bit for bit") {
  // Each element of C is the same chain of FMAs in the same order of k in both (only the vector
  // width and the tile shape differ), so not one bit may differ: on both paths, every layout.
  if (!matmul_kernel_available(MatmulKernel::Avx2) || !matmul_kernel_available(MatmulKernel::Avx512)) {
    WARN("not compared: this CPU or build lacks "
         << (matmul_kernel_available(MatmulKernel::Avx2) ? "AVX-512" : "AVX2"));
    return;
  }
  for (DType dtype : {DType::Float32, DType::Float64})
    for (const Size& s : kSizes)
      for (bool ta : {false, true})
        for (bool tb : {false, true}) {
          INFO(dtype << ", M " << s.M << " N " << s.N << " K " << s.K << ", TA " << ta << " TB " << tb);
          const Tensor a = operand(s.M, s.K, ta, dtype, 3), b = operand(s.K, s.N, tb, dtype, 4);
          std::vector<double> c2, c512;  // float32 widened exactly: equal bits stay equal bits
          {
            Setting setting(MatmulKernel::Avx2, 1);
            c2 = matmul(a, b).to_vector<double>();
          }
          {
            Setting setting(MatmulKernel::Avx512, 2);
            c512 = matmul(a, b).to_vector<double>();
          }
          REQUIRE(c2.size() == c512.size());
          CHECK(std::equal(c2.begin(), c2.end(), c512.begin(), [](double x, double y) {
            return std::bit_cast<uint64_t>(x) == std::bit_cast<uint64_t>(y);
          }));
        }
}
