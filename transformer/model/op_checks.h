// The gradient checks of the ops the model records itself (the fused scaled_dot_product_attention,
// with its hand-written backward), in the form of autograd's table (autograd/op_checks.h). autograd
// cannot hold them (it knows nothing of attention); a test reads the names given to record() in every
// library folder and fails for an op that neither table checks.
#pragma once

#include <vector>

#include "autograd/op_checks.h"

namespace gradformer {

/// One entry per case of each op recorded in transformer/model: "op" or "op (case)", float64 inputs.
/// Names are distinct, and none is also in autograd_op_checks().
std::vector<OpCheck> model_op_checks();

}  // namespace gradformer
