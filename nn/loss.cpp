#include "nn/loss.h"

namespace gradformer {

CrossEntropyLoss::CrossEntropyLoss(const CrossEntropyOptions& options_) : options(options_) {
  if (!(options.label_smoothing >= 0 && options.label_smoothing <= 1))
    throw ValueError(message("CrossEntropyLoss: label_smoothing must be in [0, 1], got ", options.label_smoothing));
}

Variable CrossEntropyLoss::forward(const Variable& logits, const Tensor& target) const {
  return cross_entropy(logits, target, options);
}

}  // namespace gradformer
