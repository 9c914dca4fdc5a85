#include "nn/sgd.h"

#include <cmath>

#include "tensor/kernels/parallel.h"

namespace gradformer {

SGD::SGD(std::vector<Variable> params, const SGDOptions& options)
    : Optimizer(std::move(params), options.lr, "sgd", "SGD.step"), options_(options) {
  check_option("SGD", "momentum", options.momentum, std::isfinite(options.momentum) && options.momentum >= 0,
               "finite and >= 0");
  check_option("SGD", "weight_decay", options.weight_decay,
               std::isfinite(options.weight_decay) && options.weight_decay >= 0, "finite and >= 0");
  if (options.momentum != 0) momentum_buffers_ = zeros_like_each(params_);
}

std::vector<std::pair<std::string, Tensor>> SGD::buffers() const {
  std::vector<std::pair<std::string, Tensor>> out;
  for (size_t i = 0; i < momentum_buffers_.size(); ++i)
    out.emplace_back("momentum_buffer." + std::to_string(i), momentum_buffers_[i]);
  return out;
}

void SGD::update() {
  const double lr = lr_, momentum = options_.momentum, weight_decay = options_.weight_decay;
  for_each_with_grad([&](size_t i, Tensor& value, const Tensor& grad) {
    dispatch_floating(value.dtype(), "SGD.step", [&]<class T>() {
      T* p = value.data<T>();
      const T* g = grad.data<T>();
      T* b = momentum != 0 ? momentum_buffers_[i].data<T>() : nullptr;
      const T lr_t = static_cast<T>(lr), momentum_t = static_cast<T>(momentum), decay_t = static_cast<T>(weight_decay);
      // Each element is updated on its own, so the split across threads never changes a result.
      parallel_for(0, value.numel(), grain_for(1), [&](int64_t lo, int64_t hi) {
        for (int64_t k = lo; k < hi; ++k) {
          T d = g[k];
          if (decay_t != 0) d += decay_t * p[k];
          if (b) d = b[k] = momentum_t * b[k] + d;
          p[k] -= lr_t * d;
        }
      });
    });
  });
}

}  // namespace gradformer
