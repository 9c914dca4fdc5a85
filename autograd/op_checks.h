// The gradient check of every differentiable op, as a list a program can run and print as a table
// (`gradformer gradcheck`): each entry is a name, a function of its inputs, and float64 inputs
// chosen to keep away from non-differentiable points (relu at 0, max with ties, log near 0).
#pragma once

#include <string>
#include <vector>

#include "autograd/gradcheck.h"

namespace gradformer {

struct OpCheck {
  std::string name;
  GradcheckFunction f;
  std::vector<Tensor> inputs;
};

/// One entry per op (and per interesting case: broadcasting, batched and transposed matmul, ...).
std::vector<OpCheck> autograd_op_checks();

}  // namespace gradformer
