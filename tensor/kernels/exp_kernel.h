// exp for the softmax family (softmax, log_softmax, cross-entropy, the attention op) and for the
// float32 tensor op exp, computed by the library rather than the C library: the same bits on every
// CPU and with every libm, and eight elements at a time, where the C library's expf is a call per
// element that the compiler cannot vectorise (a softmax row then spends most of its time in it).
#pragma once

#include <cstdint>

namespace gradformer {

/// y[j] = exp(x[j] - shift) for j in [0, n); y may be x (in place).
///
/// float32: the library's exp (exp_kernel.cpp): within one unit in the last place of the exact value
/// from the smallest normal float, 2^-126 (x = -87.34), up; under it 0, not a subnormal number (a
/// CPU's slow path). exp(-inf) = 0, exp(inf) = inf, overflow (x > 88.72) gives inf, NaN stays NaN.
/// The same bits in the portable build and the AVX2 build (tensor/kernels/vector_loops.h), which is taken
/// when the CPU has it.
/// float64 (the gradient checks' precision): std::exp.
void exp_shifted(const float* x, float shift, float* y, int64_t n);
void exp_shifted(const double* x, double shift, double* y, int64_t n);

}  // namespace gradformer
