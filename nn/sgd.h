// Stochastic gradient descent, with momentum and weight decay as PyTorch's torch.optim.SGD
// (no dampening, no Nesterov).
#pragma once

#include "nn/optimizer.h"

namespace gradformer {

struct SGDOptions {
  double lr = 1e-3;
  double momentum = 0;      // 0 is plain gradient descent
  double weight_decay = 0;  // L2 penalty: (weight_decay / 2) |p|^2 added to the loss
};

///   g = grad + weight_decay * p
///   b = momentum * b + g           (b starts at 0, so the first step has b = g)
///   p = p - lr * b                 (with momentum 0: p = p - lr * g)
///   SGD opt(model.parameters(), {.lr = 0.1, .momentum = 0.9});
class SGD : public Optimizer {
 public:
  /// ValueError for a negative or non-finite lr, momentum or weight_decay.
  SGD(std::vector<Variable> params, const SGDOptions& options);
  const SGDOptions& options() const { return options_; }

 protected:
  void update() override;
  int passes_over_parameters() const override { return 0; }  // not counted
  /// "momentum_buffer.<i>" for each parameter, when momentum is on.
  std::vector<std::pair<std::string, Tensor>> buffers() const override;

 private:
  SGDOptions options_;
  std::vector<Tensor> momentum_buffers_;
};

}  // namespace gradformer
