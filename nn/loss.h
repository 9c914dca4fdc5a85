// Cross-entropy as a module, for models that hold their loss as a member. The math (and its fused
// backward) is autograd's cross_entropy; this only keeps the options together.
//
//   CrossEntropyLoss criterion({.ignore_index = pad_id, .label_smoothing = 0.1});
//   Variable loss = criterion.forward(logits, targets);
#pragma once

#include "autograd/fused.h"
#include "nn/module.h"

namespace gradformer {

/// loss = mean over targets != ignore_index of -sum_c q_c log softmax(logits)_c,
/// q = (1 - eps) onehot(target) + eps / C  (label smoothing, paper section 5.4: eps_ls = 0.1).
/// logits: [..., C] float, target: [...] int64 -> scalar
class CrossEntropyLoss : public Module {
 public:
  /// ValueError unless 0 <= label_smoothing <= 1.
  explicit CrossEntropyLoss(const CrossEntropyOptions& options = {});
  Variable forward(const Variable& logits, const Tensor& target) const;
  CrossEntropyOptions options;
};

}  // namespace gradformer
