#include "nn/clip.h"

#include <algorithm>
#include <cmath>

#include "tensor/elementwise.h"
#include "tensor/kernels/parallel.h"
#include "tensor/support/profiler.h"

namespace gradformer {

namespace {

// sum(grad^2) in double, in parallel yet the same bits for every thread count: the gradient is cut
// into chunks of a fixed size, each chunk summed with eight accumulators (element k into k % 8, which
// the compiler keeps in vector lanes, where one running sum would wait four cycles on each add), and
// the chunks' sums added in order. Memory-bound: one read of the gradient.
double sum_of_squares(const Tensor& grad) {
  return dispatch_floating(grad.dtype(), "clip_grad_norm", [&]<class T>() {
    constexpr int64_t kChunk = 1 << 14;  // elements: fixed, so the thread count cannot matter
    constexpr int kLanes = 8;
    const Tensor g = grad.contiguous();
    const T* data = g.data<T>();
    const int64_t n = g.numel(), chunks = (n + kChunk - 1) / kChunk;
    std::vector<double> partial(static_cast<size_t>(chunks));
    parallel_for(0, chunks, grain_for(kChunk), [&](int64_t lo, int64_t hi) {
      for (int64_t c = lo; c < hi; ++c) {
        const int64_t begin = c * kChunk, end = std::min(n, begin + kChunk);
        double lane[kLanes] = {};
        int64_t k = begin;
        for (; k + kLanes <= end; k += kLanes)
          for (int j = 0; j < kLanes; ++j)
            lane[j] += static_cast<double>(data[k + j]) * static_cast<double>(data[k + j]);
        for (int j = 0; k < end; ++k, ++j) lane[j] += static_cast<double>(data[k]) * static_cast<double>(data[k]);
        double sum = 0;
        for (const double x : lane) sum += x;
        partial[static_cast<size_t>(c)] = sum;
      }
    });
    double sum = 0;
    for (const double x : partial) sum += x;
    return sum;
  });
}

}  // namespace

double clip_grad_norm(const std::vector<Variable>& params, double max_norm) {
  const profiler::Scope event("clip_grad_norm", profiler::Phase::Optimizer);
  if (!(std::isfinite(max_norm) && max_norm > 0))
    throw ValueError(message("clip_grad_norm: max_norm must be positive and finite, got ", max_norm));
  double total = 0;
  for (size_t i = 0; i < params.size(); ++i) {
    if (!params[i].defined() || !params[i].grad().defined()) continue;
    const double part = sum_of_squares(params[i].grad());
    if (!std::isfinite(part))
      throw ValueError(message("clip_grad_norm: the gradient of parameter ", i, " ", params[i].shape(),
                               " is not finite (sum of squares ", part, ")"));
    total += part;
  }
  const double norm = std::sqrt(total);
  if (!std::isfinite(norm)) throw ValueError(message("clip_grad_norm: the gradient norm overflowed: ", norm));
  // The 1e-6 (PyTorch's) keeps the clipped norm just under max_norm and the division safe.
  const double scale = max_norm / (norm + 1e-6);
  if (scale < 1)
    for (const Variable& p : params)
      if (p.defined() && p.grad().defined()) {
        // A new tensor, one pass: the gradient tensor may be shared with another variable's.
        Variable(p).set_grad(p.grad() * scale);
      }
  return norm;
}

}  // namespace gradformer
