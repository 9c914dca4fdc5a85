// The gradient check of every differentiable op, as a list a program can run and print as a table
// (`gradformer gradcheck`): each entry is a name, a function of its inputs, and float64 inputs
// chosen to keep away from non-differentiable points (relu at 0, max with ties, log near 0).
#pragma once

#include <string>
#include <vector>

#include "autograd/gradcheck.h"

namespace gradformer {

struct OpCheck {
  /// "op" or "op (case)", where op is the name the op gives record() (autograd/node.h): a test
  /// reads the names given to record() in every library folder and fails for any op without an
  /// entry here.
  std::string name;
  GradcheckFunction f;
  std::vector<Tensor> inputs;
};

/// One entry per op and per interesting case (broadcasting, rank 0, non-contiguous inputs, batched
/// and transposed matmul, ...). Names are distinct.
std::vector<OpCheck> autograd_op_checks();

}  // namespace gradformer
