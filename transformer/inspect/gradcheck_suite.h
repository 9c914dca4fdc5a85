// The gradient check of every differentiable op (autograd_op_checks) and every layer, up to a
// whole encoder-decoder with its label-smoothed loss, as one list: `gradformer gradcheck` prints
// it as a table and the test suite asserts that every entry passes.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"

namespace gradformer {

struct NamedGradcheck {
  std::string name;
  std::function<GradcheckResult()> run;  // float64, small shapes, fixed seeds
};

std::vector<NamedGradcheck> gradient_checks();

}  // namespace gradformer
